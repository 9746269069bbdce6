"""The one glob engine (maia/core/globs.py): rules, Glob and ``@`` read a pattern the same way, in linear time,
and no pattern makes it raise; a pattern that cannot be meant (``[z-a]``) is a clear error."""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from pathlib import Path

import pytest

from maia.core.contracts import ToolContext
from maia.core.errors import MaiaError
from maia.core.globs import GlobError, check_glob, glob_problem, path_glob
from maia.inputs.refs import expand_glob, resolve_references
from maia.permissions import match
from maia.search.engine import glob_paths
from maia.tools.base import ToolError
from maia.tools.glob import GlobTool

META = "*?[]{},!^-\\/"


def _random_pattern(rnd: random.Random) -> tuple[str, str]:
    """A glob built from the documented syntax, and the regular expression it must mean."""
    glob: list[str] = []
    regex: list[str] = []
    for _ in range(rnd.randint(0, 6)):
        kind = rnd.choice(["lit", "lit", "lit", "slash", "star", "one", "gstar", "gslash", "class", "alt", "esc"])
        last = "".join(glob)
        if (kind in ("star", "gstar", "gslash") and last.endswith("*")) or (kind == "slash" and last.endswith("**")):
            continue  # two stars side by side read as one token: another pattern than the two pieces
        if kind == "lit":
            ch = rnd.choice("ab.z-")
            glob.append(ch)
            regex.append(re.escape(ch))
        elif kind == "slash":
            glob.append("/")
            regex.append("/")
        elif kind == "star":
            glob.append("*")
            regex.append("[^/]*")
        elif kind == "one":
            glob.append("?")
            regex.append("[^/]")
        elif kind == "gstar":
            glob.append("**")
            regex.append(".*")
        elif kind == "gslash":
            glob.append("**/")
            regex.append("(?:.*/)?")
        elif kind == "esc":
            ch = rnd.choice("*?[{")
            glob.append("\\" + ch)
            regex.append(re.escape(ch))
        elif kind == "class":
            low, high = sorted(rnd.sample("abcz", 2))
            negate = rnd.choice(["", "!", "^"])
            single = rnd.choice(".-/")
            glob.append(f"[{negate}{single}{low}-{high}]")
            regex.append(f"[{'^' if negate else ''}{re.escape(single)}{low}-{high}]")
        else:
            options = [rnd.choice(["a", "b", "c", "a/b", "y*y"]) for _ in range(rnd.randint(1, 3))]
            glob.append("{" + ",".join(options) + "}")
            regex.append("(?:" + "|".join(re.escape(o).replace(r"\*", "[^/]*") for o in options) + ")")
    return "".join(glob), "".join(regex)


def test_the_engine_means_what_the_syntax_says_over_many_generated_patterns_and_paths() -> None:
    rnd = random.Random(23)
    pairs = 0
    for _ in range(4000):
        glob, regex = _random_pattern(rnd)
        compiled = re.compile(regex, re.DOTALL)
        engine = path_glob(glob)
        for _ in range(15):
            path = "".join(rnd.choice("ab.z-/c") for _ in range(rnd.randint(0, 9)))
            assert engine.fullmatch(path) == bool(compiled.fullmatch(path)), (glob, regex, path)
            pairs += 1
    assert pairs == 60_000


def test_matching_a_listing_gives_what_fullmatch_gives_path_by_path() -> None:
    # matching() (the Glob tool's batch form) takes shortcuts: string tests for `lead**/name`
    # globs, folder states reused across the paths of a folder; the answer must never change
    rnd = random.Random(29)
    shapes = ["**/*.py", "**/test_*.py", "src/**/*.ts", "**/*.{ts,tsx}", "**/a*b*c", "a**/b", "**/", "**/*a*a*"]
    patterns = shapes + [_random_pattern(rnd)[0] for _ in range(3000)]
    shortcuts = 0
    for glob in patterns:
        engine = path_glob(glob)
        folders = ["".join(rnd.choice("ab.z-/c") for _ in range(rnd.randint(0, 7))) for _ in range(4)]
        paths = [
            rnd.choice(folders) + rnd.choice(["", "/", "src/", "a/"]) + "".join(rnd.choices("ab.z-c*py_", k=4))
            for _ in range(40)
        ] + ["", "/", "a.py", "src/x.ts", "b/test_x.py", "abc", "a/b/c.tsx", "src//a.ts"]
        assert engine.matching(paths) == [p for p in paths if engine.fullmatch(p)], glob
        shortcuts += engine._name_plans() is not None
    assert shortcuts > 100  # the string-test shortcut was exercised, not only the general walk


def test_matching_a_listing_stays_linear_too() -> None:
    name = "a" * 20_000
    assert path_glob("**/*a*a*a*a*a*a*a*a*b").matching([name, "x/" + name, "x/" + name + "b"]) == ["x/" + name + "b"]
    deep = "a/" * 3000 + "b"  # a folder deeper than Python's recursion limit
    assert path_glob("**/a/[b]").matching([deep]) == [deep]


def test_rules_glob_and_at_share_the_engine() -> None:
    assert match.path_glob is path_glob
    assert match.PathGlob is type(path_glob("x"))


def test_no_pattern_makes_the_engine_raise() -> None:
    rnd = random.Random(7)
    for _ in range(20_000):
        pattern = "".join(rnd.choice(META + "ab") for _ in range(rnd.randint(0, 14)))
        engine = path_glob(pattern)
        for path in ("", "a", "a/b", "[", "{a,b}", "-/!"):
            engine.fullmatch(path)
        problem = glob_problem(pattern)
        try:
            check_glob(pattern)
        except GlobError as error:
            assert problem is not None and problem in str(error)
        else:
            assert problem is None


def test_a_reversed_range_matches_nothing_and_is_a_clear_error() -> None:
    assert not path_glob("[z-a]*").fullmatch("m.py")
    assert path_glob("[a-z]*").fullmatch("m.py")
    with pytest.raises(GlobError) as caught:
        check_glob("src/[z-a]*")
    assert isinstance(caught.value, MaiaError)
    assert "z-a" in str(caught.value) and "a-z" in str(caught.value) and "\n" not in str(caught.value)


def test_too_many_alternatives_stay_literal_and_are_said() -> None:
    pattern = "{a,b}" * 9  # 512 alternatives
    assert path_glob(pattern).fullmatch(pattern)
    assert not path_glob(pattern).fullmatch("a" * 9)
    assert glob_problem(pattern) is not None


def test_matching_stays_linear_where_backtracking_would_explode() -> None:
    # A backtracking matcher needs about n**k steps here; the engine one state set per character.
    text = "a" * 20_000
    assert not path_glob("*a*a*a*a*a*a*a*a*b").fullmatch(text)
    assert not path_glob("**a**a**a**a**a**a**b").fullmatch(text)
    assert path_glob("*a*a*a*a*a*a*a*a*").fullmatch(text)
    long_pattern = "[" * 30_000 + "{" * 30_000
    assert path_glob(long_pattern).fullmatch(long_pattern)  # unclosed: literal, read in one pass


def _tree(root: Path) -> None:
    for rel in ("a.py", "b.txt", "src/c.py", "src/d.ts", "src/deep/e.tsx", "z/[x].py", "z/-m.md", "y/{a}.py"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")


PATTERNS = [
    "**/*.py",
    "*.py",
    "src/**",
    "src/*.{ts,tsx}",
    "**/*.{py,md}",
    "**/[a-c]*",
    "**/[!a-c]*",
    "z/\\[x].py",
    "**/?.py",
    "{src,z}/**/*",
    "y/{a}.py",
    "y/\\{a}.py",
    "**/*.[pt]*",
    "**/{a,{b,c}}.*",
    "**/-*",
]


@pytest.mark.parametrize("engine", ["python", "rg"])
def test_glob_and_at_find_exactly_the_files_the_rule_engine_matches(tmp_path: Path, engine: str) -> None:
    if engine == "rg" and shutil.which("rg") is None:
        pytest.skip("ripgrep is not installed")
    _tree(tmp_path)
    files = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    for pattern in PATTERNS:
        expected = [f for f in files if path_glob(pattern).fullmatch(f)]
        found, _total = asyncio.run(glob_paths(pattern, tmp_path, engine=engine))
        assert sorted(str(p.relative_to(tmp_path)) for p in found) == expected, pattern
        assert sorted(expand_glob(pattern, tmp_path)[0]) == expected, pattern


def test_at_reference_with_a_reversed_range_is_one_warning(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    refs = resolve_references("read @[z-a]* please", tmp_path)
    assert refs.context is None
    assert refs.warnings == ["@[z-a]*: the range z-a in [z-a] is reversed and matches nothing (write a-z)."]


async def test_the_glob_tool_answers_a_reversed_range_with_an_error_the_model_reads(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"z-a.*a-z"):
        await GlobTool().execute({"pattern": "**/[z-a]*"}, ToolContext(launch=tmp_path))


def test_deeply_nested_braces_neither_recurse_nor_raise() -> None:
    for pattern in ("{" * 3000 + "}" * 3000, "{a," * 2000 + "}" * 2000):
        assert not path_glob(pattern).fullmatch("a")
        assert path_glob(pattern).fullmatch(pattern)  # kept literal
        assert glob_problem(pattern) is not None
    assert path_glob("{" * 10 + "x" + "}" * 10).fullmatch("x")
