"""Permission decisions on long Bash commands, uncached (thread CPU time: medians and minimums).

Cases:
- a 2 KB compound command whose 100-odd parts are all covered (target ≤ 5 ms);
- a 100 KB plain compound command, every part covered: the full allow path (target ≤ 50 ms);
- a 100 KB here-document writing a file, the way a model writes a big file (target ≤ 50 ms);
- a 100 KB command that is not plain (variables, loops), with deny rules: the tree-sitter reading
  looks everywhere (target ≤ 1 s, the budget; it usually takes far less).

Reference, measured side by side: tree-sitter's parse alone of the same text (C code, no reading
of the tree), the floor any tree-based reading pays. Both run in the same rounds, in turn, and are
timed in CPU time of this thread: on a loaded machine wall time mostly measures the other processes.
The verdict compares the median with the target; the minimum is printed beside it.

Run: ``.venv/bin/python bench/permissions.py [runs]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import rounds

from maia.permissions import explain
from maia.permissions.bash import _parser, analyze

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
PLAIN_PIECES = [
    "git status",
    "git diff --stat HEAD~{n}",
    "ls -la src/{n} | grep '\\.py$' | wc -l",
    "echo 'step {n}; a && b' > out/log{n}.txt",
    "timeout 30 cat README{n}.md | sort",
    "cat <<'EOF' > out/x{n}\nhello $HOME `id`\nEOF",
    "if [ -f x{n} ]; then echo yes; else echo no; fi",
]


def build_command(size: int = 2048, pieces: list[str] = PIECES) -> str:
    """A script of about ``size`` bytes, one realistic piece a line (numbered: all distinct).

    Lines, not ``&&``: a here-document's body starts on the next line and ends at its delimiter
    alone on a line, so nothing may follow the delimiter on its line."""
    parts: list[str] = []
    total = 0
    n = 0
    while total < size:
        piece = pieces[n % len(pieces)].replace("{n}", str(n))
        parts.append(piece)
        total += len(piece) + 1
        n += 1
    return "\n".join(parts)


def big_heredoc(size: int = 100_000) -> str:
    """A file written through a here-document, its text full of shell-looking characters."""
    line = "value = compute($HOME, `x`, $(y)) # ; && | > .env\n"
    return "cat > out/generated.py <<'EOF'\n" + line * (size // len(line)) + "EOF"


def cpu_interleaved(cases: list[Callable[[], object]], runs: int) -> list[tuple[float, float]]:
    """(median, minimum) thread CPU seconds of each case, all run once per round in turn, after a warm-up."""
    for fn in cases:
        fn()
    samples: list[list[float]] = [[] for _ in cases]
    for round_no in range(runs):
        for k in range(len(cases)):
            index = (k + round_no) % len(cases)  # rotated: no case always runs after the same one
            start = time.thread_time()
            cases[index]()
            samples[index].append(time.thread_time() - start)
    return [(statistics.median(s), min(s)) for s in samples]


def main() -> None:
    """Measure and print the medians and minimums, each case beside its reference."""
    runs = rounds(sys.argv[1:], 20, __doc__)
    launch = Path(tempfile.gettempdir())
    cases = [
        ("2 KB compound, all covered", build_command(2048, PLAIN_PIECES), 5.0, "allow"),
        ("100 KB plain compound, all covered", build_command(100_000, PLAIN_PIECES), 50.0, "allow"),
        ("100 KB here-document", big_heredoc(), 50.0, "allow"),
        ("100 KB not plain, deny rules read it all", build_command(100_000), 1000.0, "ask"),
    ]
    print(f"permission decisions, uncached, thread CPU time over {runs} interleaved rounds (median / min)")
    print("reference: tree-sitter's parse alone of the same text, in the same rounds")
    print(
        f"  {'case':<42} {'bytes':>8} {'median':>9} {'min':>8} {'target':>7} {'reference':>17} {'ratio':>6} "
        f"{'verdict':>8}"
    )
    for label, command, target, expected in cases:

        def decide(command: str = command) -> str:
            analyze.cache_clear()
            return explain("Bash", {"command": command}, RULES, launch).verdict.value

        def parse(encoded: bytes = command.encode()) -> object:
            return _parser().parse(encoded)

        verdict = decide()
        (median, least), (reference, reference_least) = cpu_interleaved([decide, parse], runs)
        median, least, reference, reference_least = (x * 1000 for x in (median, least, reference, reference_least))
        state = "ok" if median <= target and verdict == expected else "OVER" if verdict == expected else "WRONG"
        print(
            f"  {label:<42} {len(command):>8,} {median:>7.2f}ms {least:>6.2f}ms {target:>5.0f}ms "
            f"{reference:>7.2f}/{reference_least:>5.2f}ms {median / reference:>5.2f}x {verdict:>8} {state}"
        )


if __name__ == "__main__":
    main()
