"""User settings (§7.3) and model resolution (§5.3)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from maia.core.errors import ConfigError
from maia.core.paths import settings_path
from maia.i18n import _

DEFAULT_MAX_ITERATIONS = 50
DEFAULT_READ_TIMEOUT = 600.0
DEFAULT_OUTAGE_RETRY = 120.0
DEFAULT_CHAT_ENDPOINT = "/v1/chat/completions"  # OpenAI_EndPoint when settings.json does not say
DEFAULT_MODELS_ENDPOINT = "/v1/models"  # LiteLLM_Models when settings.json does not say

_RULE_LIST = {"type": "array", "items": {"type": "string"}}

SETTINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["LiteLLM_URL"],
    "properties": {
        "LiteLLM_URL": {"type": "string", "pattern": "^https?://"},
        "OpenAI_EndPoint": {"type": "string"},
        "LiteLLM_Models": {"type": "string"},
        "LiteLLM_API_Key": {"type": "string"},
        "MaxIterations": {"type": "integer", "minimum": 1},
        "MaxOutputTokens": {"type": "integer", "minimum": 1},
        "MaxContextTokens": {
            "oneOf": [
                {"type": "integer", "minimum": 1000},
                {"type": "object", "additionalProperties": {"type": "integer", "minimum": 1000}},
            ]
        },
        "DefaultModel": {"type": "string", "minLength": 1},
        "ReadTimeout": {"type": "number", "exclusiveMinimum": 0},
        "OutageRetrySeconds": {"type": "number", "minimum": 0},
        "RateLimitBackoff": {"type": "array", "items": {"type": "number", "minimum": 0}, "minItems": 1},
        "RateLimitPatterns": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "Theme": {"enum": ["auto", "dark", "light"]},
        "hooks": {"type": "object"},  # read and checked by maia.app.hooks (user and trusted project files)
        "permissions": {
            "type": "object",
            "properties": {"allow": _RULE_LIST, "ask": _RULE_LIST, "deny": _RULE_LIST, "inertVariables": _RULE_LIST},
        },
        "Sandbox": {"enum": ["off", "workspace-write", "read-only", "strict"]},
        "SandboxWritableRoots": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "SandboxHiddenPaths": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "SandboxNetwork": {"enum": ["on", "off"]},
        "Mode": {"enum": ["ask", "edits", "auto", "plan"]},
        "Workflows": {
            "type": "object",
            "properties": {"queue": {"type": "string", "pattern": "^rediss?://"}},
        },
    },
}

_FIXES: dict[str, str] = {
    "LiteLLM_URL": 'the address of your LiteLLM server, e.g. "http://localhost:4000"',
    "OpenAI_EndPoint": 'the chat path, e.g. "/v1/chat/completions"',
    "LiteLLM_Models": 'the model list path, e.g. "/v1/models"',
    "LiteLLM_API_Key": 'your proxy key as a string, e.g. "sk-…"',
    "MaxIterations": "a whole number of at least 1, e.g. 50",
    "MaxOutputTokens": "a whole number of at least 1, e.g. 16000",
    "MaxContextTokens": 'a whole number of at least 1000, or a map such as {"gpt-4o": 128000}',
    "DefaultModel": 'a model name as a string, e.g. "gpt-4o"',
    "ReadTimeout": "seconds to wait for the proxy's next bytes before giving up, e.g. 600",
    "OutageRetrySeconds": "how long (seconds) to keep retrying while the proxy is unreachable, e.g. 120; 0: never",
    "RateLimitBackoff": "the waits (seconds) after a 429 that says no time, e.g. [5, 10, 20, 40, 60, 120, 300]",
    "RateLimitPatterns": "regular expressions with a group named time, e.g. "
    '["quota resets at (?P<time>\\d\\d:\\d\\d)"]',
    "Theme": '"auto" (follow the terminal\'s background), "dark" or "light"',
    "hooks": 'an object such as {"PreToolUse": [{"matcher": "Bash", "command": "…"}]} (docs/hooks.md)',
    "permissions": 'an object such as {"allow": ["Read"], "ask": [], "deny": []}',
    "Sandbox": '"workspace-write" (commands write only in the launch folder and the temporary folder), '
    '"read-only", "strict" (workspace-write, and commands refused without the namespace sandbox), or "off"',
    "SandboxHiddenPaths": 'a list of files or folders commands must not see, e.g. ["~/.ssh", "~/.aws"]',
    "SandboxWritableRoots": 'a list of folders sandboxed commands may also write to, e.g. ["~/.cache", "../shared"]',
    "SandboxNetwork": '"on" (the default) or "off" (TCP connect and bind refused inside the sandbox)',
    "Mode": 'the approval mode a chat or maia ask starts in: "ask" (the default), "edits", "auto" or "plan"',
    "Workflows": '{"queue": "redis://[:password@]host:6379/0"} (rediss:// for TLS): where maia run --queue '
    "and maia worker share workflows",
}

_TYPE_NAMES = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "object": "an object",
    "array": "a list",
    "boolean": "true or false",
}


@dataclass(slots=True)
class Settings:
    """The validated content of ``~/.maia/settings.json``."""

    path: Path
    litellm_url: str
    chat_endpoint: str
    models_endpoint: str
    api_key: str | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    max_output_tokens: int | None = None
    max_context_tokens: int | dict[str, int] | None = None
    default_model: str | None = None
    read_timeout: float = DEFAULT_READ_TIMEOUT
    outage_retry: float = DEFAULT_OUTAGE_RETRY  # seconds an outage of the proxy is retried
    rate_limit_backoff: list[float] = field(default_factory=list)  # empty: the built-in waits
    rate_limit_patterns: list[str] = field(default_factory=list)  # the user's phrasings of a limit's end
    theme: str = "auto"  # the chat's colours: "auto" follows the terminal's background
    permissions: dict[str, list[str]] = field(default_factory=dict)
    sandbox: str | None = None  # "off" | "workspace-write" | "read-only" | "strict"; None: the system's default
    sandbox_writable_roots: list[str] = field(default_factory=list)
    sandbox_hidden_paths: list[str] = field(default_factory=list)
    sandbox_network: str | None = None  # "on" | "off"; None: on
    mode: str = "ask"  # the approval mode to start in: "ask" | "edits" | "auto" | "plan"
    queue: str | None = None  # "Workflows": {"queue": URL}: the Redis of maia run --queue and maia worker
    warnings: list[str] = field(default_factory=list)

    @property
    def chat_url(self) -> str:
        """The full URL of chat completions."""
        return join_url(self.litellm_url, self.chat_endpoint)

    @property
    def models_url(self) -> str:
        """The full URL of the model list."""
        return join_url(self.litellm_url, self.models_endpoint)

    @property
    def model_info_url(self) -> str:
        """LiteLLM's ``/model/info`` route."""
        return join_url(self.litellm_url, "/model/info")


def join_url(base: str, suffix: str) -> str:
    """Join a base URL and a path without doubling or dropping the ``/``."""
    if not suffix:
        return base
    return base.rstrip("/") + "/" + suffix.lstrip("/")


def example_settings() -> str:
    """A complete example of ``settings.json``."""
    from importlib import resources

    return resources.files("maia").joinpath("data/settings.example.json").read_text(encoding="utf-8")


def read_json(path: Path) -> Any:
    """Read a JSON file; a syntax error names the file, the line and the column."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise
    except UnicodeDecodeError as exc:
        raise ConfigError(_("{path} is not UTF-8 text: {err}").format(path=path, err=exc)) from None
    except OSError as exc:
        raise ConfigError(_("Cannot read {path}: {err}").format(path=path, err=exc.strerror)) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        comma = trailing_comma(text, exc.pos)
        if comma is not None:
            line, col = comma
            raise ConfigError(
                _(
                    "{path}: invalid JSON at line {line}, column {col}: a comma before a closing bracket; remove it."
                ).format(path=path, line=line, col=col)
            ) from None
        raise ConfigError(
            _("{path}: invalid JSON at line {line}, column {col}: {msg}").format(
                path=path, line=exc.lineno, col=exc.colno, msg=exc.msg
            )
        ) from None


def trailing_comma(text: str, pos: int) -> tuple[int, int] | None:
    """(line, column) of a comma that ends a list or object, when that is what stopped the parser.

    Python's parser reports the next token (often on the next line): the user's slip is the comma.
    """
    if pos >= len(text) or text[pos] not in "]}":
        return None
    back = pos - 1
    while back >= 0 and text[back] in " \t\r\n":
        back -= 1
    if back < 0 or text[back] != ",":
        return None
    line = text.count("\n", 0, back) + 1
    col = back - (text.rfind("\n", 0, back) + 1) + 1
    return line, col


def _field_name(error_path: Any) -> str:
    parts: list[str] = []
    for p in error_path:
        if isinstance(p, int):
            parts.append(f"[{p}]")
        else:
            parts.append(("." if parts else "") + str(p))
    return "".join(parts)


def _describe_error(error: Any, path: Path | str, fixes: Mapping[str, str] | None = None) -> str:
    """Turn a jsonschema error into a sentence naming the field, what is expected and the fix.

    ``fixes`` maps a field (``command.run``, list indices left out) or its top-level key to the fix to
    show; settings.json's by default. Other files (TOOL.json, mcp.json) pass their own.
    """
    field_name = _field_name(error.absolute_path)
    top = str(error.absolute_path[0]) if error.absolute_path else ""
    dotted = ".".join(str(p) for p in error.absolute_path if not isinstance(p, int))
    table = _FIXES if fixes is None else fixes
    fix = table.get(dotted) or table.get(top, "")
    if error.validator == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else error.message
        if fixes is not None:
            whole = f"{dotted}.{missing}" if dotted else missing
            return _('{path}: "{field}" is required; add it: {fix}.').format(
                path=path, field=whole, fix=table.get(whole, "")
            )
        return _('{path}: the required setting "{field}" is missing; add it: {fix}.').format(
            path=path, field=missing, fix=_FIXES.get(missing, "")
        )
    if error.validator == "type":
        expected = error.validator_value
        names = [expected] if isinstance(expected, str) else list(expected)
        wanted = _(" or ").join(_TYPE_NAMES.get(n, n) for n in names)
        found = type(error.instance).__name__
        found = {
            "str": "a string",
            "int": "a whole number",
            "float": "a number",
            "dict": "an object",
            "list": "a list",
            "bool": "true/false",
            "NoneType": "null",
        }.get(found, found)
        if fixes is not None and isinstance(error.instance, str | int | float) and not isinstance(error.instance, bool):
            # the other files (TOOL.json, mcp.json, AGENT.md) show the short value too: "enabled": "no"
            shown = json.dumps(error.instance, ensure_ascii=False)
            found = f"{found} ({shown if len(shown) <= 40 else shown[:39] + '…'})"
        return _('{path}: "{field}" must be {expected}, not {found}; fix: {fix}.').format(
            path=path, field=field_name or _("(top level)"), expected=wanted, found=found, fix=fix or wanted
        )
    if error.validator == "pattern" and top == "LiteLLM_URL" and fixes is None:
        return _('{path}: "LiteLLM_URL" must start with http:// or https://, not {value!r}; fix: {fix}.').format(
            path=path, value=error.instance, fix=fix
        )
    if error.validator == "enum":
        choices = ", ".join(json.dumps(c) for c in error.validator_value)
        return _('{path}: "{field}" must be one of {choices}, not {value}; fix: {fix}.').format(
            path=path, field=field_name, choices=choices, value=json.dumps(error.instance), fix=fix
        )
    if error.validator == "minimum":
        return _('{path}: "{field}" must be at least {minimum}, not {value}; fix: {fix}.').format(
            path=path, field=field_name, minimum=error.validator_value, value=error.instance, fix=fix
        )
    if error.validator == "pattern" and error.validator_value == "\\S":  # the schemas' "not blank"
        return _('{path}: "{field}" is empty; fix: {fix}.').format(path=path, field=field_name, fix=fix)
    if error.validator in ("exclusiveMinimum", "maximum", "exclusiveMaximum"):
        bound = {
            "exclusiveMinimum": _("above {bound}"),
            "maximum": _("at most {bound}"),
            "exclusiveMaximum": _("below {bound}"),
        }[error.validator].format(bound=error.validator_value)
        return _('{path}: "{field}" must be {bound}, not {value}; fix: {fix}.').format(
            path=path, field=field_name, bound=bound, value=error.instance, fix=fix or bound
        )
    return _('{path}: "{field}" is invalid; fix: {fix}.').format(
        path=path, field=field_name or _("(top level)"), fix=fix or error.message
    )


describe_schema_error = _describe_error  # the one "field and fix" wording, for every file MAIA validates


TIME_GROUP = "time"  # the named group a RateLimitPatterns entry captures the reset time with


def compile_patterns(patterns: Sequence[str]) -> list[re.Pattern[str]]:
    """The user's ``RateLimitPatterns``; ValueError naming the pattern when one is invalid."""
    compiled = []
    for pattern in patterns:
        try:
            regex = re.compile(pattern, re.IGNORECASE)
        except re.error as error:
            raise ValueError(f"{pattern!r}: {error}") from None
        if TIME_GROUP not in regex.groupindex:
            raise ValueError(_("{pattern}: no group named (?P<time>…)").format(pattern=repr(pattern)))
        compiled.append(regex)
    return compiled


def _check_patterns(patterns: list[str], path: Path) -> None:
    """Each ``RateLimitPatterns`` entry must compile and name its ``time`` group: else a clear error."""
    try:
        compile_patterns(patterns)
    except ValueError as error:
        raise ConfigError(
            _(
                '{path}: "RateLimitPatterns" holds an invalid regular expression: {error}; fix: a pattern with a '
                "group named time that captures when the limit ends, e.g. {example}."
            ).format(path=path, error=error, example='"resets at (?P<time>\\d\\d:\\d\\d)"')
        ) from None


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


_ANNOTATIONS = frozenset({"$schema", "$comment", "title", "description", "default", "examples"})
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": _is_number,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}


def surely_valid(schema: Mapping[str, Any], value: Any) -> bool | None:
    """Whether ``value`` satisfies ``schema`` as jsonschema's Draft 2020-12 validator judges it: True or False
    when certain, None when a keyword is beyond this reader (the caller then asks jsonschema).

    Importing jsonschema costs more than the rest of a short ``maia ask`` run's start; the files read
    at nearly every start are valid, and this reader proves it for the keywords their schemas use.
    It never reports an error: any doubt, and every invalid file, goes to jsonschema's messages.
    """
    verdicts: list[bool | None] = []
    for keyword, rule in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        if keyword == "type":
            kinds = rule if isinstance(rule, list) else [rule]
            known = all(isinstance(k, str) and k in _TYPES for k in kinds)
            verdicts.append(any(_TYPES[k](value) for k in kinds) if known else None)
        elif keyword == "enum":
            # strings compare as jsonschema compares them; other kinds (1 vs 1.0 vs true) are left to it
            verdicts.append(value in rule if isinstance(value, str) and all(isinstance(m, str) for m in rule) else None)
        elif keyword == "pattern":
            verdicts.append(not isinstance(value, str) or re.search(rule, value) is not None)
        elif keyword == "minLength":
            verdicts.append(not isinstance(value, str) or len(value) >= rule)
        elif keyword == "minItems":
            verdicts.append(not isinstance(value, list) or len(value) >= rule)
        elif keyword == "minimum":
            verdicts.append(not _is_number(value) or value >= rule)
        elif keyword == "exclusiveMinimum":
            verdicts.append(not _is_number(value) or value > rule)
        elif keyword == "maximum":
            verdicts.append(not _is_number(value) or value <= rule)
        elif keyword == "required":
            verdicts.append(not isinstance(value, dict) or all(name in value for name in rule))
        elif keyword == "properties":
            if isinstance(value, dict):
                verdicts.extend(surely_valid(rule[name], value[name]) for name in rule if name in value)
        elif keyword == "additionalProperties" and "patternProperties" not in schema:
            if isinstance(value, dict):
                known = schema.get("properties", {})
                extra = [item for name, item in value.items() if name not in known]
                if rule is False:
                    verdicts.append(not extra)
                elif isinstance(rule, dict):
                    verdicts.extend(surely_valid(rule, item) for item in extra)
                else:
                    return None
        elif keyword == "items" and isinstance(rule, dict):
            if isinstance(value, list):
                verdicts.extend(surely_valid(rule, item) for item in value)
        elif keyword == "oneOf":
            branches = [surely_valid(branch, value) for branch in rule]
            verdicts.append(None if None in branches else branches.count(True) == 1)
        else:
            return None
        if False in verdicts:
            return False
    return None if None in verdicts else True


def validate_settings(data: Any, path: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Check the parsed settings and build :class:`Settings`; unknown keys become warnings."""
    if not isinstance(data, dict):
        raise ConfigError(
            _("{path}: the settings must be a JSON object, for example:\n{example}").format(
                path=path, example=example_settings()
            )
        )
    if surely_valid(SETTINGS_SCHEMA, data) is not True:
        import jsonschema  # only for a file the reader above cannot vouch for: it words the errors

        validator = jsonschema.Draft202012Validator(SETTINGS_SCHEMA)
        errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
        if errors:
            raise ConfigError("\n".join(_describe_error(e, path) for e in errors))
    warnings = [
        _('{path}: unknown setting "{key}" ignored.').format(path=path, key=key)
        for key in data
        if key not in SETTINGS_SCHEMA["properties"]
    ]
    _check_patterns(data.get("RateLimitPatterns", []), path)
    env = os.environ if env is None else env
    api_key = data.get("LiteLLM_API_Key") or env.get("LITELLM_API_KEY") or None
    perms = data.get("permissions") or {}
    return Settings(
        path=path,
        litellm_url=data["LiteLLM_URL"],
        chat_endpoint=data.get("OpenAI_EndPoint", DEFAULT_CHAT_ENDPOINT),
        models_endpoint=data.get("LiteLLM_Models", DEFAULT_MODELS_ENDPOINT),
        api_key=api_key,
        max_iterations=data.get("MaxIterations", DEFAULT_MAX_ITERATIONS),
        max_output_tokens=data.get("MaxOutputTokens"),
        max_context_tokens=data.get("MaxContextTokens"),
        default_model=data.get("DefaultModel"),
        read_timeout=float(data.get("ReadTimeout", DEFAULT_READ_TIMEOUT)),
        outage_retry=float(data.get("OutageRetrySeconds", DEFAULT_OUTAGE_RETRY)),
        rate_limit_backoff=[float(v) for v in data.get("RateLimitBackoff", [])],
        rate_limit_patterns=list(data.get("RateLimitPatterns", [])),
        theme=data.get("Theme", "auto"),
        permissions={k: list(v) for k, v in perms.items() if k in ("allow", "ask", "deny")},
        sandbox=data.get("Sandbox"),
        sandbox_writable_roots=list(data.get("SandboxWritableRoots", [])),
        sandbox_hidden_paths=list(data.get("SandboxHiddenPaths", [])),
        sandbox_network=data.get("SandboxNetwork"),
        mode=data.get("Mode", "ask"),
        queue=(data.get("Workflows") or {}).get("queue"),
        warnings=warnings,
    )


def load_settings(home: Path, env: Mapping[str, str] | None = None) -> Settings:
    """Load and validate ``<home>/settings.json``; a missing file gives a complete example."""
    path = settings_path(home)
    try:
        data = read_json(path)
    except FileNotFoundError:
        raise ConfigError(
            _(
                "Settings file not found: {path}\nRun `maia setup` (it asks your LiteLLM server's address "
                "and key, and tests them), or create the file by hand, for example:\n{example}"
            ).format(path=path, example=example_settings().rstrip())
        ) from None
    return validate_settings(data, path, env)


# --- model resolution (§5.3) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model to use and where the choice came from."""

    name: str
    source: str


def parse_model_spec(spec: str) -> str:
    """``litellm:<name>`` or ``<name>`` → the name (which may itself contain ``:`` or ``/``)."""
    value = spec.strip()
    if value.startswith("litellm:"):
        value = value[len("litellm:") :].strip()
    if not value:
        raise ConfigError(_("Empty model name: give litellm:<name> or <name>."))
    return value


def _model_from_config(path: Path) -> str | None:
    try:
        data = read_json(path)
    except FileNotFoundError:
        return None
    if not isinstance(data, dict):
        raise ConfigError(_('{path}: expected a JSON object such as {{"model": "gpt-4o"}}.').format(path=path))
    model = data.get("model")
    if model is None:
        return None
    if not isinstance(model, str) or not model.strip():
        raise ConfigError(_('{path}: "model" must be a non-empty string such as "gpt-4o".').format(path=path))
    return parse_model_spec(model)


def resolve_model(
    cli_value: str | None,
    launch: Path,
    home: Path,
    env: Mapping[str, str] | None = None,
    settings: Settings | None = None,
) -> ModelChoice | None:
    """``--model`` > ``MAIA_MODEL`` > ``./.maia/config.json`` > ``~/.maia/config.json`` > ``DefaultModel``
    in settings.json; None when unset."""
    env = os.environ if env is None else env
    if cli_value is not None and cli_value.strip():
        return ModelChoice(parse_model_spec(cli_value), "--model")
    if env.get("MAIA_MODEL", "").strip():
        return ModelChoice(parse_model_spec(env["MAIA_MODEL"]), "MAIA_MODEL")
    for path in (launch / ".maia" / "config.json", home / "config.json"):
        name = _model_from_config(path)
        if name:
            return ModelChoice(name, str(path))
    if settings is not None and settings.default_model and settings.default_model.strip():
        return ModelChoice(parse_model_spec(settings.default_model), f"DefaultModel ({settings.path})")
    return None


def no_model_message(home: Path) -> str:
    """How to choose a model, naming the folders actually in use."""
    return _(
        'No model chosen: pass --model NAME, set MAIA_MODEL, write {{"model": "NAME"}} in {config} or '
        "./.maia/config.json, or set DefaultModel in {settings} (`maia models` lists them)."
    ).format(config=home / "config.json", settings=settings_path(home))


# --- `maia setup` (writing the settings) ---------------------------------------------------------


def read_settings_object(home: Path) -> dict[str, Any]:
    """The current ``settings.json`` as a dict (empty when the file does not exist yet).

    A file that is not a JSON object is an error: `maia setup` never overwrites what it cannot keep.
    """
    path = settings_path(home)
    try:
        data = read_json(path)
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(
            _("{path}: the settings must be a JSON object; fix or move the file first.").format(path=path)
        )
    return data


def save_settings(home: Path, updates: Mapping[str, Any], remove: tuple[str, ...] = ()) -> Path:
    """Merge ``updates`` into ``settings.json`` (other keys kept), drop ``remove``; atomic, mode 0600.

    The file may hold the proxy key, so it is readable by its owner only.
    """
    from maia.core.storage import write_atomic

    data = read_settings_object(home)
    for key in remove:
        data.pop(key, None)
    data.update(updates)
    path = settings_path(home)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=0o600)
    return path


def _names_server(rule: str, server: str) -> bool:
    """Whether a rule is ``Mcp(server)`` or ``Mcp(server,…)``."""
    compact = rule.replace(" ", "")
    return compact == f"Mcp({server})" or compact.startswith(f"Mcp({server},")


def enable_mcp_server(home: Path, server: str) -> Path | None:
    """Add ``Mcp(server)`` to the allow list of the user's settings.json; the file's path, or None when there
    is no settings file yet (writing one with only a rule would make it invalid)."""
    if not settings_path(home).exists():
        return None
    data = read_settings_object(home)
    found = data.get("permissions")
    perms: dict[str, Any] = found if isinstance(found, dict) else {}
    allow = [r for r in perms.get("allow", []) if isinstance(r, str)]
    rule = f"Mcp({server})"
    if rule not in allow:
        return save_settings(home, {"permissions": {**perms, "allow": [*allow, rule]}})
    return settings_path(home)


def forget_mcp_server(home: Path, server: str) -> list[str]:
    """Take the rules naming ``server`` out of the user's settings.json; the rules removed."""
    if not settings_path(home).exists():
        return []
    data = read_settings_object(home)
    perms = data.get("permissions")
    if not isinstance(perms, dict):
        return []
    removed: list[str] = []
    kept: dict[str, Any] = dict(perms)
    for family in ("allow", "ask", "deny"):
        rules = perms.get(family)
        if isinstance(rules, list):
            removed.extend(r for r in rules if isinstance(r, str) and _names_server(r, server))
            kept[family] = [r for r in rules if not (isinstance(r, str) and _names_server(r, server))]
    if removed:
        save_settings(home, {"permissions": kept})
    return removed
