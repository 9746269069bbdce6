"""ripgrep and the Python engine give the same answers on a tree with ignore files, binaries, big files."""

from __future__ import annotations

import os
import py_compile
from pathlib import Path

import pytest

from maia.search import GrepQuery, find_ripgrep
from maia.search.engine import format_hits, glob_paths, grep_hits
from maia.search.regex import PatternError

RG = find_ripgrep()
pytestmark = pytest.mark.skipif(RG is None, reason="no ripgrep binary (install the test extras)")


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with every case the engines must agree on."""
    root = tmp_path_factory.mktemp("tree") / "proj"
    files = {
        ".gitignore": "*.log\nbuild/\n!keep.log\n/root_only.txt\ndocs/*.tmp\n",
        "main.py": "import os\n\ndef needle1():\n    return 'needle'\n",
        "keep.log": "needle kept although *.log is ignored\n",
        "drop.log": "needle ignored\n",
        "root_only.txt": "needle only at the root is ignored\n",
        "sub/root_only.txt": "needle here is not ignored\n",
        "build/out.txt": "needle in build\n",
        "docs/a.md": "# Title\nsome needle text\nmore\nand NEEDLE upper\nlast line\n",
        "docs/b.tmp": "needle tmp\n",
        "docs/deep/c.tmp": "needle deep tmp is kept (pattern has a slash)\n",
        "pkg/.gitignore": "generated/\n*.bak\n",
        "pkg/mod.py": "x = 'needle2'\ny = 'neeedle3'\n",
        "pkg/mod.py.bak": "needle backup\n",
        "pkg/generated/g.py": "needle generated\n",
        "pkg/sub/leaf.txt": "\n".join(f"line {i} needle{i}" if i % 7 == 0 else f"line {i}" for i in range(60)),
        ".hidden/secret.txt": "needle hidden\n",
        ".env": "TOKEN=needle\n",
        "node_modules/lib/index.js": "needle in node_modules\n",
        ".git/config": "needle in git\n",
        "other/.ignore": "skipme.txt\n",
        "other/skipme.txt": "needle skipped by .ignore\n",
        "other/kept.txt": "needle kept\r\nsecond needle line\r\n",
        "unicode/é.txt": "naïve needle café\n",
        "long/line.txt": "x" * 600 + " needle " + "y" * 600 + "\n",
        "a/b/c/d/e.py": "def f():\n    pass  # needle4\n",
        "names/a.txt": "needle a\n",
        "names/a-b.txt": "needle a-b\n",
        "names/a/b.txt": "needle a/b\n",
        "names/A.txt": "needle A\n",
        ".venv/.gitignore": "*\n",  # as python -m venv (3.13 on) and uv write it: everything in it is ignored
        ".venv/lib/site.py": "needle in a virtual environment\n",
        "kept/.gitignore": "sub/**\n!sub/back.txt\n",  # the folder's content, not the folder: re-included
        "kept/sub/back.txt": "needle back\n",
        "kept/sub/gone.txt": "needle gone\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00needle")
    (root / "big.txt").write_bytes(b"needle\n" + b"z" * (2 * 1024 * 1024 + 10))
    os.symlink(root / "main.py", root / "link.py")
    return root


QUERIES = [
    ("needle", {}),
    ("ne+dle\\d", {}),
    ("NEEDLE", {"ignore_case": True}),
    ("needle(?=\\d)", {}),
    ("(?<n>nee)dle", {}),
    ("^line \\d+ needle", {}),
    ("needle$", {}),
    ("\\bneedle\\b", {}),
    ("café|naïve", {}),
    ("needle", {"glob": "*.py"}),
    ("needle", {"glob": "pkg/**/*.txt"}),
    ("needle", {"glob": "!*.md"}),
    ("needle", {"glob": "*.txt"}),
    ("needle", {"glob": "*.log"}),
    ("needle", {"glob": "docs/*"}),
    ("needle", {"glob": "!pkg"}),
    ("needle", {"glob": "docs"}),
    ("needle", {"glob": "names/*"}),
    ("needle", {"glob": "!names/*"}),
    ("needle", {"glob": "d*"}),
    ("needle", {"glob": "docs/**"}),
    ("needle", {"glob": "*"}),
    ("needle", {"glob": "**"}),
    ("needle", {"glob": "**/*"}),
    ("needle", {"glob": "*.{py,md}"}),
    ("needle", {"glob": "{pkg,docs}/**"}),
    ("needle", {"glob": "!*.{py,md}"}),
    ("needle", {"glob": "**/*.{txt,tmp}"}),
    ("needle", {"glob": "names/a{-b,}.txt"}),
    ("needle", {"glob": "*{a.txt"}),  # an unbalanced brace is literal
    ("needle", {"glob": "!{names,docs"}),
    ("needle", {"glob": "*/deep/*"}),
    ("x+ needle", {}),
    ("nothing-matches-this", {}),
]


@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
@pytest.mark.parametrize(("pattern", "options"), QUERIES, ids=lambda v: str(v))
async def test_grep_parity(tree: Path, pattern: str, options: dict[str, object], mode: str) -> None:
    query = GrepQuery(pattern, tree, mode, **options)  # type: ignore[arg-type]
    fast = await grep_hits(query, engine=None)
    slow = await grep_hits(query, engine="python")
    assert format_hits(query, slow, tree, 0).text == format_hits(query, fast, tree, 0).text


@pytest.mark.parametrize(("before", "after"), [(1, 0), (0, 2), (2, 2), (10, 10)])
async def test_context_parity(tree: Path, before: int, after: int) -> None:
    query = GrepQuery("needle", tree, "content", before=before, after=after)
    fast = format_hits(query, await grep_hits(query), tree, 0).text
    slow = format_hits(query, await grep_hits(query, engine="python"), tree, 0).text
    assert slow == fast
    assert "pkg/sub/leaf.txt-14-line 13" in fast or before == 0


async def test_expected_files_are_found_and_skipped(tree: Path) -> None:
    query = GrepQuery("needle", tree)
    listing = format_hits(query, await grep_hits(query), tree, 0).text.splitlines()
    assert listing == [
        ".env",
        ".hidden/secret.txt",
        "a/b/c/d/e.py",
        "docs/a.md",
        "docs/deep/c.tmp",
        "keep.log",
        "kept/sub/back.txt",  # re-included: "sub/**" leaves out what is in sub, not sub itself
        "long/line.txt",
        "main.py",
        "names/A.txt",
        "names/a/b.txt",
        "names/a-b.txt",
        "names/a.txt",
        "other/kept.txt",
        "pkg/mod.py",
        "pkg/sub/leaf.txt",
        "sub/root_only.txt",
        "unicode/é.txt",
    ]


@pytest.mark.parametrize("engine", [None, "python"])
async def test_a_glob_keeps_files_by_their_path_and_leaves_folders_out(tree: Path, engine: str | None) -> None:
    """As ripgrep's --glob: a glob keeps the files whose own path matches; ``!`` leaves a matching folder out."""

    async def listing(glob: str) -> str:
        query = GrepQuery("needle", tree, glob=glob)
        return format_hits(query, await grep_hits(query, engine=engine), tree, 0).text

    no_pkg = await listing("!pkg")
    assert "pkg/" not in no_pkg and "main.py" in no_pkg
    assert await listing("docs") == "No matches."  # no file is named docs
    assert await listing("docs/**") == "docs/a.md\ndocs/deep/c.tmp"
    assert await listing("names/*") == "names/A.txt\nnames/a-b.txt\nnames/a.txt"  # not names/a/b.txt
    assert await listing("!names/*") == await listing("!names")  # names/a/ is left out, and what is in it


async def test_ignore_file_of_a_parent_folder(tmp_path: Path) -> None:
    """As ripgrep does: a parent's pattern that names the root's own folder excludes nothing below it."""
    (tmp_path / ".gitignore").write_text("sub/\n*.log\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_text("needle")
    (tmp_path / "sub" / "b.log").write_text("needle")
    query = GrepQuery("needle", tmp_path / "sub")
    for engine in (None, "python"):
        assert format_hits(query, await grep_hits(query, engine=engine), tmp_path, 0).text == "sub/a.txt"


async def test_long_lines_are_cut_at_500_characters(tree: Path) -> None:
    query = GrepQuery("needle", tree / "long", "content")
    (line,) = format_hits(query, await grep_hits(query, engine="python"), tree, 0).text.splitlines()
    assert line.startswith("long/line.txt:1:xxx") and line.endswith("…")
    assert len(line) == len("long/line.txt:1:") + 500 + 1


@pytest.mark.parametrize("engine", [None, "python"])
async def test_head_limit(tree: Path, engine: str | None) -> None:
    query = GrepQuery("needle", tree)
    answer = format_hits(query, await grep_hits(query, head_limit=3, engine=engine), tree, 3)
    assert answer.text.splitlines()[:3] == [".env", ".hidden/secret.txt", "a/b/c/d/e.py"]
    assert answer.text.splitlines()[3].startswith("[3 of at least")


@pytest.mark.parametrize("engine", [None, "python"])
async def test_single_file_and_subfolder(tree: Path, engine: str | None) -> None:
    query = GrepQuery("needle", tree / "docs" / "a.md", "content")
    text = format_hits(query, await grep_hits(query, engine=engine), tree, 0).text
    assert text == "docs/a.md:2:some needle text"
    sub = GrepQuery("needle", tree / "pkg", "count")
    assert format_hits(sub, await grep_hits(sub, engine=engine), tree, 0).text == ("pkg/mod.py:1\npkg/sub/leaf.txt:9")


@pytest.mark.parametrize("engine", [None, "python"])
async def test_invalid_pattern_is_a_clear_error(tree: Path, engine: str | None) -> None:
    with pytest.raises(PatternError, match="Invalid regular expression '\\(unclosed'"):
        await grep_hits(GrepQuery("(unclosed", tree), engine=engine)


@pytest.mark.parametrize("engine", [None, "python"])
async def test_a_glob_that_cannot_be_meant_is_a_clear_error(tree: Path, engine: str | None) -> None:
    with pytest.raises(PatternError, match=r"Invalid glob '!\[z-a\]\*': the range z-a .* reversed .*\(write a-z\)"):
        await grep_hits(GrepQuery("needle", tree, glob="![z-a]*"), engine=engine)


@pytest.mark.parametrize(
    "pattern",
    [
        "**/*.py",
        "*.py",
        "*.txt",
        "pkg/**",
        "**/*.{py,md}",
        "names/a*",
        "**/a.txt",
        "docs/**/*.tmp",
        "nothing/*",
        "**/*",
    ],
)
async def test_glob_parity(tree: Path, pattern: str) -> None:
    fast, fast_total = await glob_paths(pattern, tree, engine=None)
    slow, slow_total = await glob_paths(pattern, tree, engine="python")
    assert (slow, slow_total) == (fast, fast_total)


async def test_glob_expected(tree: Path) -> None:
    found, _total = await glob_paths("**/*.py", tree, engine="python")
    assert [p.relative_to(tree).as_posix() for p in found] == ["a/b/c/d/e.py", "main.py", "pkg/mod.py"]
    top, _ = await glob_paths("*.py", tree, engine="python")
    assert [p.name for p in top] == ["main.py"]
    limited, all_count = await glob_paths("**/*", tree, limit=5)
    assert len(limited) == 5 and all_count > 5


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A package with its bytecode cache (not ignored), a text file named like one, a folder named like one."""
    root = tmp_path_factory.mktemp("compiled")
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("NAME = 'needle'\n")
    py_compile.compile(str(root / "pkg" / "mod.py"), doraise=True)  # pkg/__pycache__/mod.cpython-3X.pyc
    (root / "notes.pyc").write_text("needle in a text file named like compiled Python\n")
    (root / "old.pyo").write_text("needle in a text .pyo\n")
    (root / "odd.pyc").mkdir()
    (root / "odd.pyc" / "inside.txt").write_text("needle in a folder named like compiled Python\n")
    return root


@pytest.mark.parametrize("engine", [None, "python"])
@pytest.mark.parametrize("mode", ["files_with_matches", "count", "content"])
@pytest.mark.parametrize("glob", [None, "*.pyc", "!*.txt"])
async def test_compiled_python_is_never_searched_in_a_folder(
    compiled: Path, engine: str | None, mode: str, glob: str | None
) -> None:
    """.pyc and .pyo files are binary by format: neither engine opens one it walks to, even a text one.

    A glob asking for them finds none either (ripgrep: the skip comes after the glob's filter, last wins).
    """
    assert any((compiled / "pkg" / "__pycache__").glob("mod.*.pyc"))
    query = GrepQuery("needle", compiled, mode, glob=glob)  # type: ignore[arg-type]
    for head_limit in (0, 250):  # a full scan, and the limited run (ordered, and parallel)
        text = format_hits(query, await grep_hits(query, head_limit=head_limit, engine=engine), compiled, 0).text
        files = sorted({line.split(":")[0] for line in text.splitlines()} - {"No matches."})
        assert not [name for name in files if name.endswith((".pyc", ".pyo"))], text
        expected = {
            None: ["odd.pyc/inside.txt", "pkg/mod.py"],  # a folder named like one is walked
            "*.pyc": [],  # (the glob keeps files named so, not what is in a folder named so)
            "!*.txt": ["pkg/mod.py"],
        }
        assert files == expected[glob], text


@pytest.mark.parametrize("engine", [None, "python"])
async def test_a_compiled_file_given_by_name_is_read_as_any_file(compiled: Path, engine: str | None) -> None:
    """Only files met while walking a folder are skipped by name: one asked for by name is searched."""
    query = GrepQuery("needle", compiled / "notes.pyc", "content")
    text = format_hits(query, await grep_hits(query, engine=engine), compiled, 0).text
    assert text == "notes.pyc:1:needle in a text file named like compiled Python"
