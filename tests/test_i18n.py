"""Translations: the French catalog covers every message, the build compiles it, a French locale gets it."""

from __future__ import annotations

import ast
import gettext
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from maia import i18n
from maia.i18n import po
from maia.i18n import tool as locale_tool

REPO = Path(__file__).resolve().parents[1]
FRENCH = REPO / "maia" / "locale" / "fr" / "LC_MESSAGES" / "maia.po"
CLEAN = ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES")


def _template() -> list[po.Entry]:
    return locale_tool.template_entries(locale_tool.extract())


def _french() -> dict[tuple[str, str | None], po.Entry]:
    return {(e.msgid, e.msgid_plural): e for e in po.parse(FRENCH.read_text(encoding="utf-8")) if e.msgid}


# --- the catalog -----------------------------------------------------------------------------------


def test_the_template_is_up_to_date_with_the_sources() -> None:
    extraction = locale_tool.extract()
    assert extraction.problems == []
    assert len(extraction.messages) > 900  # every _() of maia/ and commands/, the commands' help, Click's
    expected = po.dump(locale_tool.template_entries(extraction))
    assert (REPO / "maia" / "locale" / "maia.pot").read_text(encoding="utf-8") == expected, (
        "a message was added or changed: run python -m maia.i18n.tool update, then translate it"
    )


def test_every_message_has_a_french_translation() -> None:
    french = _french()
    wanted = {(e.msgid, e.msgid_plural) for e in _template() if e.msgid}
    assert sorted(wanted - french.keys()) == []
    assert sorted(french.keys() - wanted) == []
    untranslated = [key[0] for key, entry in french.items() if not all(t.strip() for t in entry.translations)]
    fuzzy = [key[0] for key, entry in french.items() if entry.fuzzy]
    assert untranslated == [] and fuzzy == []


def test_placeholders_are_the_same_in_french() -> None:
    problems = [
        problem
        for entry in _french().values()
        for problem in locale_tool.entry_problems(entry, 2)
        if "placeholder" in problem or "whitespace" in problem or "\\b" in problem
    ]
    assert problems == []


def test_plural_entries_have_both_french_forms() -> None:
    header = po.parse(FRENCH.read_text(encoding="utf-8"))[0]
    assert "Plural-Forms: nplurals=2; plural=(n > 1);" in header.msgstr
    plurals = [e for e in _french().values() if e.msgid_plural is not None]
    assert plurals, "ngettext messages exist (sub-agent tool calls, /undo, Click)"
    for entry in plurals:
        assert len(entry.msgstr_plural) == 2 and all(entry.msgstr_plural), entry.msgid


def test_the_whole_check_passes() -> None:
    assert locale_tool.check() == []


def test_clicks_messages_still_exist_in_the_installed_click() -> None:
    import click

    found: set[tuple[str, str | None]] = set()
    for path in Path(click.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("_", "ngettext"):
                texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if node.func.id == "_" and len(texts) == 1:
                    found.add((texts[0], None))
                elif node.func.id == "ngettext" and len(texts) == 2:
                    found.add((texts[0], texts[1]))
    stale = [message for message in locale_tool.CLICK_MESSAGES if message not in found]
    assert stale == [], "Click changed these strings: update CLICK_MESSAGES in maia/i18n/tool.py"


# --- the checks can fail ---------------------------------------------------------------------------


def _tree(tmp_path: Path, source: str, translations: dict[str, str | list[str]]) -> Path:
    """A tiny source tree with one module, its template and a French catalog holding ``translations``."""
    (tmp_path / "maia").mkdir()
    (tmp_path / "commands").mkdir()
    (tmp_path / "maia" / "mod.py").write_text(source, encoding="utf-8")
    for relative, _literal in locale_tool.OTHER_SOURCES:
        target = tmp_path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"X = {_literal!r}\n", encoding="utf-8")
    (tmp_path / "maia" / "locale" / "fr" / "LC_MESSAGES").mkdir(parents=True)
    template = locale_tool.template_entries(locale_tool.extract(tmp_path))
    (tmp_path / "maia" / "locale" / "maia.pot").write_text(po.dump(template), encoding="utf-8")
    entries = [po.Entry(msgid="", msgstr="Plural-Forms: nplurals=2; plural=(n > 1);\n")]
    for entry in template[1:]:  # Click's messages are always there: "translated" as themselves
        if entry.msgid_plural is None:
            entries.append(po.Entry(entry.msgid, msgstr=str(translations.get(entry.msgid, entry.msgid))))
        else:
            forms = translations.get(entry.msgid, [entry.msgid, entry.msgid_plural])
            entries.append(po.Entry(entry.msgid, entry.msgid_plural, msgstr_plural=list(forms)))
    (tmp_path / "maia" / "locale" / "fr" / "LC_MESSAGES" / "maia.po").write_text(po.dump(entries), encoding="utf-8")
    return tmp_path


SOURCE = """from maia.i18n import _, ngettext

A = _("Saved {path}.")
B = ngettext("{count} file", "{count} files", 2)
C = _("Hello " "world")  # implicitly concatenated: one message
"""


def test_a_complete_tree_checks_clean(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE, {"Saved {path}.": "{path} enregistré.", "{count} file": ["{count} f", "{count} fs"]})
    assert locale_tool.check(root) == []
    ids = {m.msgid for m in locale_tool.extract(root).messages}
    assert {"Saved {path}.", "{count} file", "Hello world"} <= ids


def test_a_new_string_without_translation_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE, {"Saved {path}.": "{path} enregistré.", "{count} file": ["{count} f", "{count} fs"]})
    (root / "maia" / "mod.py").write_text(SOURCE + 'D = _("A new message.")\n', encoding="utf-8")
    problems = locale_tool.check(root)
    assert any("maia.pot is not up to date" in p for p in problems)
    assert any("missing 'A new message.'" in p for p in problems)
    locale_tool.update(root)  # the one command: the template and the catalog follow, the string waits for French
    problems = locale_tool.check(root)
    assert problems == ["maia/locale/fr/LC_MESSAGES/maia.po: 'A new message.' has no translation"]


def test_a_placeholder_that_differs_fails(tmp_path: Path) -> None:
    root = _tree(
        tmp_path, SOURCE, {"Saved {path}.": "{chemin} enregistré.", "{count} file": ["{count} f", "{count} fs"]}
    )
    problems = locale_tool.check(root)
    assert len(problems) == 1 and "placeholders ['{chemin}'] differ from the English ['{path}']" in problems[0]


def test_an_incomplete_plural_fails(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE, {"Saved {path}.": "{path} enregistré.", "{count} file": ["{count} f", ""]})
    assert any("'{count} file' has no translation" in p for p in locale_tool.check(root))
    root2 = tmp_path / "other"
    root2.mkdir()
    _tree(root2, SOURCE, {"Saved {path}.": "{path} enregistré.", "{count} file": ["{count} f"]})
    assert any("needs 2 plural forms, has 1" in p for p in locale_tool.check(root2))


def test_a_changed_english_string_keeps_its_translation_as_fuzzy(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE, {"Saved {path}.": "{path} enregistré.", "{count} file": ["{count} f", "{count} fs"]})
    (root / "maia" / "mod.py").write_text(SOURCE.replace("Saved {path}.", "Saved {path} ."), encoding="utf-8")
    locale_tool.update(root)
    entry = next(e for e in po.parse(_french_of(root).read_text(encoding="utf-8")) if e.msgid == "Saved {path} .")
    assert entry.fuzzy and entry.msgstr == "{path} enregistré."
    assert any("is fuzzy" in p for p in locale_tool.check(root))


def _french_of(root: Path) -> Path:
    return root / "maia" / "locale" / "fr" / "LC_MESSAGES" / "maia.po"


def test_a_translated_variable_is_reported(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE + "name = 'x'\nE = _(name)\n", {})
    assert any("_(name) translates a value the catalog cannot know" in p for p in locale_tool.extract(root).problems)


def test_command_docstrings_are_messages(tmp_path: Path) -> None:
    root = _tree(tmp_path, SOURCE, {})
    (root / "commands" / "demo.py").write_text(
        "import click\n\n\n@click.command()\ndef demo() -> None:\n"
        '    """Do the demo.\n\n    In detail.\n    """\n\n\n'
        '@click.command(help="explicit")\ndef other() -> None:\n    """Not a help."""\n',
        encoding="utf-8",
    )
    ids = {m.msgid for m in locale_tool.extract(root).messages}
    assert "Do the demo.\n\nIn detail." in ids and "Not a help." not in ids


# --- the .po format and the compiled catalog ------------------------------------------------------


def test_po_files_round_trip_with_escapes() -> None:
    entries = [
        po.Entry("", msgstr="Plural-Forms: nplurals=2; plural=(n > 1);\n"),
        po.Entry('Say "hi"\\ then\n\b\n\ttab', msgstr='Dis "salut"\\ puis\n\b\n\ttab', references=["maia/x.py"]),
        po.Entry("{n} tool", "{n} tools", msgstr_plural=["{n} outil", "{n} outils"], flags=["python-brace-format"]),
    ]
    assert po.parse(po.dump(entries)) == entries


def test_compiled_catalog_loads_in_gettext_with_french_plurals() -> None:
    data = po.compile_mo(po.parse(FRENCH.read_text(encoding="utf-8")))
    translation = gettext.GNUTranslations(io.BytesIO(data))
    assert translation.gettext("Usage:") == "Utilisation :"
    assert translation.gettext("No saved session in this folder.") == "Aucune session enregistrée dans ce dossier."
    singular, plural = "{count} tool call", "{count} tool calls"
    assert translation.ngettext(singular, plural, 0) == "{count} appel d'outil"  # French: 0 and 1 are singular
    assert translation.ngettext(singular, plural, 1) == "{count} appel d'outil"
    assert translation.ngettext(singular, plural, 2) == "{count} appels d'outils"
    assert translation.gettext("a message no catalog holds") == "a message no catalog holds"


def test_fuzzy_and_untranslated_entries_are_not_compiled() -> None:
    entries = [
        po.Entry("", msgstr="Content-Type: text/plain; charset=UTF-8\n"),
        po.Entry("kept", msgstr="gardé"),
        po.Entry("guess", msgstr="devinette", flags=["fuzzy"]),
        po.Entry("empty", msgstr=""),
    ]
    translation = gettext.GNUTranslations(io.BytesIO(po.compile_mo(entries)))
    assert [translation.gettext(m) for m in ("kept", "guess", "empty")] == ["gardé", "guess", "empty"]


# --- choosing the language ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"LANG": "C"}, None),
        ({"LANG": "C.UTF-8"}, None),
        ({"LANG": "POSIX"}, None),
        ({"LANG": "en_US.UTF-8"}, None),
        ({"LANG": "fr_FR.UTF-8"}, "fr"),
        ({"LANG": "fr_CA.UTF-8"}, "fr"),
        ({"LANG": "fr_FR.UTF-8@euro"}, "fr"),
        ({"LANG": "de_DE.UTF-8"}, None),
        ({"LANG": "C", "LANGUAGE": "fr"}, None),  # as GNU gettext: the C locale ignores LANGUAGE
        ({"LANG": "fr_FR.UTF-8", "LANGUAGE": "en"}, None),
        ({"LANG": "de_DE.UTF-8", "LANGUAGE": "de:fr"}, "fr"),
        ({"LANG": "fr_FR.UTF-8", "LC_ALL": "C"}, None),
        ({"LANG": "C", "LC_MESSAGES": "fr_FR.UTF-8"}, "fr"),
        ({"LC_ALL": "fr_FR.UTF-8", "LANG": "en_US.UTF-8"}, "fr"),
    ],
)
def test_the_language_follows_the_locale_as_gnu_gettext_does(environ: dict[str, str], expected: str | None) -> None:
    assert i18n.catalog_language(environ) == expected


def test_a_checkout_compiles_its_catalog_once_and_again_when_the_po_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    shutil.copy(FRENCH, folder / "maia.po")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)
    path, data = i18n._fresh_mo("fr")
    assert path == folder / "maia.mo" and data is None
    with path.open("rb") as file:
        assert gettext.GNUTranslations(file).gettext("Usage:") == "Utilisation :"
    first = path.stat().st_mtime_ns
    assert i18n._fresh_mo("fr") == (path, None) and path.stat().st_mtime_ns == first  # fresh: not compiled again
    po_file = folder / "maia.po"
    po_file.write_text(po_file.read_text(encoding="utf-8").replace("Utilisation :", "Usage :"), encoding="utf-8")
    os.utime(po_file, ns=(first + 10**9, first + 10**9))
    i18n._fresh_mo("fr")
    with path.open("rb") as file:
        assert gettext.GNUTranslations(file).gettext("Usage:") == "Usage :"


def test_a_catalog_that_cannot_be_written_is_compiled_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    shutil.copy(FRENCH, folder / "maia.po")
    monkeypatch.setattr(i18n, "LOCALE_DIR", tmp_path)

    def refuse(*_args: object) -> None:
        raise PermissionError("read-only")

    monkeypatch.setattr(i18n.os, "replace", refuse)
    path, data = i18n._fresh_mo("fr")
    assert path is None and data is not None
    assert not (folder / "maia.mo").exists() and list(folder.iterdir()) == [folder / "maia.po"]  # no temp file left
    translation, from_file = i18n._load("fr")
    assert translation.gettext("Usage:") == "Utilisation :" and not from_file


# --- MAIA speaking French -------------------------------------------------------------------------


def _maia(args: list[str], tmp_path: Path, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    env.update(MAIA_HOME=str(tmp_path / "home"), MAIA_CWD=str(tmp_path), **environ)
    return subprocess.run(
        [sys.executable, "-m", "maia", *args], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )


def test_a_french_locale_gets_french_help(tmp_path: Path) -> None:
    done = _maia(["--help"], tmp_path, LANG="fr_FR.UTF-8")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Utilisation : maia")  # Click's own words come from MAIA's catalog
    assert "Lister les modèles proposés par votre serveur LiteLLM." in done.stdout
    assert "Afficher ce message et quitter." in done.stdout
    assert "Show this message and exit." not in done.stdout and "List the models" not in done.stdout


def test_a_subcommand_docstring_is_translated(tmp_path: Path) -> None:
    done = _maia(["sessions", "list", "--help"], tmp_path, LANG="fr_FR.UTF-8")
    assert done.returncode == 0, done.stderr
    assert "Lister les sessions, de la plus récente à la plus ancienne" in " ".join(done.stdout.split())
    assert "Afficher un objet JSON pour les scripts." in done.stdout


def test_a_real_error_in_french(tmp_path: Path) -> None:
    done = _maia(["models"], tmp_path, LANG="fr_FR.UTF-8")
    assert done.returncode == 1
    assert f"Erreur : Fichier de réglages introuvable : {tmp_path / 'home' / 'settings.json'}" in done.stderr
    assert "Lancez `maia setup` (il demande l'adresse et la clé de votre serveur LiteLLM" in done.stderr


def test_a_usage_error_in_french(tmp_path: Path) -> None:
    done = _maia(["sessions", "rename"], tmp_path, LANG="fr_FR.UTF-8")
    assert done.returncode == 2
    assert (
        "Erreur : Argument manquant 'OLD'." in done.stderr
        and "Essayez 'maia sessions rename --help' pour obtenir de l'aide." in done.stderr
    )


@pytest.mark.parametrize("environ", [{"LANG": "C"}, {"LANG": "en_US.UTF-8"}, {}, {"LANG": "C", "LANGUAGE": "fr"}])
def test_english_stays_the_default(tmp_path: Path, environ: dict[str, str]) -> None:
    done = _maia(["--help"], tmp_path, **environ)
    assert done.stdout.startswith("Usage: maia") and "List the models your LiteLLM server offers." in done.stdout
    error = _maia(["models"], tmp_path, **environ)
    assert error.returncode == 1 and "Error: Settings file not found:" in error.stderr


def test_the_man_pages_stay_english_under_a_french_locale(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in CLEAN}
    done = subprocess.run(
        [sys.executable, "-m", "maia.commands.manual", "--check"],
        env={**env, "LANG": "fr_FR.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


# --- the build ------------------------------------------------------------------------------------


def test_the_build_compiles_the_catalog_into_the_package(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(
        REPO,
        source,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "*.mo", "tests", "bench"
        ),
    )
    lib = tmp_path / "lib"
    done = subprocess.run(
        [sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    mo = lib / "maia" / "locale" / "fr" / "LC_MESSAGES" / "maia.mo"
    assert mo.is_file() and not (source / "maia" / "locale" / "fr" / "LC_MESSAGES" / "maia.mo").exists()
    translation = gettext.translation("maia", str(lib / "maia" / "locale"), languages=["fr"])
    assert translation.gettext("Usage:") == "Utilisation :"
    assert translation.gettext("Interrupted.") == "Interrompu."
    assert not list((lib / "maia" / "locale").rglob("*.po")) and not list((lib / "maia" / "locale").rglob("*.pot"))
    packages = {p.parent.relative_to(REPO).as_posix() for p in (REPO / "maia").rglob("__init__.py")}
    built = {p.parent.relative_to(lib).as_posix() for p in lib.rglob("__init__.py")}
    missing = {p for p in packages if p not in built}
    assert missing == set(), "setup.cfg's packages list misses these"
