"""A permission decision on a 2 KB compound Bash command (target: median ≤ 5 ms, uncached).

Run: ``.venv/bin/python bench/permissions.py [runs]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from maia.permissions import explain
from maia.permissions.bash import analyze

RULES = {
    "allow": [
        "Bash(git status)",
        "Bash(git diff *)",
        "Bash(ls *)",
        "Bash(grep *)",
        "Bash(wc *)",
        "Bash(echo *)",
        "Bash(cat *)",
        "Bash(timeout *)",
        "Bash(sort *)",
        "Bash([ *)",
        "Redirect(out/**)",
    ],
    "ask": ["Bash(git push *)"],
    "deny": ["Bash(rm *)", "Bash(curl *)", "Redirect(.env)"],
}

PIECES = [
    "git status",
    "git diff --stat HEAD~1",
    "ls -la src | grep '\\.py$' | wc -l",
    "echo 'a; b && c' > out/log.txt",
    "timeout 30 cat README.md | sort",
    'for f in a b c; do echo "$f"; done',
    "cat <<EOF > out/x\nhello\nEOF",
    "if [ -f x ]; then echo yes; else echo no; fi",
    "echo $FOO 2>&1",
]


def build_command(size: int = 2048) -> str:
    """A compound command of about ``size`` bytes made of realistic pieces."""
    parts: list[str] = []
    n = 0
    while len(" && ".join(parts)) < size:
        parts.append(PIECES[n % len(PIECES)])
        n += 1
    return " && ".join(parts)


def main() -> None:
    """Measure and print the median decision time, cache cleared before each decision."""
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    command = build_command()
    cwd = Path(tempfile.gettempdir())
    explain("Bash", {"command": command}, RULES, cwd)  # warm-up: parser and rule patterns
    samples = []
    for _ in range(runs):
        analyze.cache_clear()
        start = time.perf_counter()
        decision = explain("Bash", {"command": command}, RULES, cwd)
        samples.append(time.perf_counter() - start)
    median = statistics.median(samples) * 1000
    verdict = "ok" if median <= 5 else "OVER"
    print(
        f"permission decision on a {len(command):,}-byte compound command ({len(analyze(command).parts)} parts), "
        f"{runs} runs"
    )
    print(f"  verdict: {decision.verdict.value} ({decision.reason[:60]}…)")
    print(f"  median {median:.2f} ms, p90 {sorted(samples)[int(runs * 0.9)] * 1000:.2f} ms, target ≤ 5 ms: {verdict}")


if __name__ == "__main__":
    main()
