"""Where rules come from (§9.1): the user's and the project's settings.json, then the project's
settings.local.json; their lists add up. In a folder the user has not trusted (:mod:`maia.core.trust`),
the project's allow rules and inertVariables are ignored; its deny and ask rules always apply."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from maia.core.errors import ConfigError
from maia.core.paths import settings_path
from maia.core.settings import read_json
from maia.i18n import _
from maia.permissions.rules import RuleSet, merge, parse_rules


@dataclass(slots=True)
class RuleSource:
    """The rules of one settings file."""

    scope: str  # "user", "project" or "local"
    path: Path
    exists: bool
    ruleset: RuleSet = field(default_factory=RuleSet)
    # the file exists but its deny/ask rules could not all be read: MAIA must not act as if it had none
    broken: bool = False
    # what the file grants that is ignored because the folder is not trusted (allow rules, inertVariables)
    ignored: RuleSet = field(default_factory=RuleSet)


@dataclass(slots=True)
class LoadedRules:
    """Every source, its warnings, and the rules added up."""

    sources: list[RuleSource]
    warnings: list[str]
    trusted: bool = True  # the launch folder's grants apply

    @property
    def ignored(self) -> RuleSet:
        """The project's grants ignored in an untrusted folder."""
        return merge(s.ignored for s in self.sources)

    @property
    def broken(self) -> list[Path]:
        """Settings files whose deny or ask rules could not all be read."""
        return [s.path for s in self.sources if s.broken]

    @property
    def ruleset(self) -> RuleSet:
        """All rules, per family, in source order (user first)."""
        return merge(s.ruleset for s in self.sources)


def _read_source(scope: str, path: Path, warnings: list[str]) -> RuleSource:
    try:
        data = read_json(path)
    except FileNotFoundError:
        return RuleSource(scope, path, exists=False)
    except ConfigError as error:
        warnings.append(_("{error} (its permission rules cannot be read)").format(error=error.message))
        return RuleSource(scope, path, exists=True, broken=True)
    if not isinstance(data, dict):
        warnings.append(_("{path}: the settings must be a JSON object; its rules cannot be read.").format(path=path))
        return RuleSource(scope, path, exists=True, broken=True)
    permissions = data.get("permissions")
    if permissions is None:
        return RuleSource(scope, path, exists=True)
    if not isinstance(permissions, dict):
        warnings.append(
            _(
                '{path}: "permissions" must be an object with allow, ask and deny lists; its rules cannot be read.'
            ).format(path=path)
        )
        return RuleSource(scope, path, exists=True, broken=True)
    parsed = parse_rules(permissions, where=f"{path}: permissions")
    warnings.extend(parsed.warnings)
    # a deny or ask entry that cannot be read would silently allow what it was written to stop
    strict = parse_rules({k: v for k, v in permissions.items() if k in ("deny", "ask")}, where=str(path))
    ruleset = parsed.ruleset
    if scope != "user" and ruleset.inert:
        # a repository could declare the variable that makes its own script run: only the user may
        warnings.append(
            _(
                "{path}: inertVariables is only read from your own settings ({names} ignored): "
                "a project cannot declare which variables are harmless."
            ).format(path=path, names=", ".join(sorted(ruleset.inert)))
        )
        ruleset = replace(ruleset, inert=frozenset())
    return RuleSource(scope, path, exists=True, ruleset=ruleset, broken=bool(strict.warnings))


def local_settings_path(launch: Path) -> Path:
    """``./.maia/settings.local.json``: this user's rules for this project (ignored by git)."""
    return launch / ".maia" / "settings.local.json"


def _untrusted(source: RuleSource, written: frozenset[str]) -> RuleSource:
    """The source without what it grants (the allow rules MAIA wrote for the user kept)."""
    ruleset = source.ruleset
    keep = tuple(r for r in ruleset.allow if source.scope == "local" and r.text in written)
    dropped = tuple(r for r in ruleset.allow if r not in keep)
    if not dropped and not ruleset.inert:
        return source
    source.ignored = RuleSet(allow=dropped, inert=ruleset.inert)
    source.ruleset = RuleSet(allow=keep, ask=ruleset.ask, deny=ruleset.deny)
    return source


def load_rules(home: Path, launch: Path) -> LoadedRules:
    """Rules of ``~/.maia/settings.json``, ``./.maia/settings.json`` and ``./.maia/settings.local.json``
    (the personal, git-ignored file where "always allow" answers go); never the parent folder. The
    project's allow rules and inertVariables count only in a trusted folder."""
    from maia.core.trust import check

    warnings: list[str] = []
    user = _read_source("user", settings_path(home), warnings)
    project = [
        _read_source("project", launch / ".maia" / "settings.json", warnings),
        _read_source("local", local_settings_path(launch), warnings),
    ]
    for source in project:
        if source.exists and source.path.resolve() == user.path.resolve():
            source.ruleset = RuleSet()  # launched where MAIA's home is: the user's file, read once
    state = check(launch, home)
    if not state.trusted:
        project = [_untrusted(s, state.written) for s in project]
    return LoadedRules([user, *project], warnings, trusted=state.trusted)
