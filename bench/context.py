"""Context counting and session files: memoised recount, cold count vs raw tiktoken, 5 MB save and load,
and what the o200k encoder adds to a process's memory (resident after loading, and its peak while loading).

Run: ``.venv/bin/python bench/context.py [runs]``.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import rounds

from maia.context.tokens import TokenCounter, block_text, encoding
from maia.core.contracts import Message, TextBlock, ToolResultBlock, ToolUseBlock
from maia.sessions.codec import SavedSession
from maia.sessions.store import SessionStore

WORDS = [
    "def",
    "class",
    "return",
    "import",
    "self",
    "value",
    "config",
    "request",
    "response",
    "error",
    "parse",
    "token",
    "session",
    "file",
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "for",
    "with",
    "on",
    "that",
    "this",
    "be",
    "are",
    "as",
    "at",
    "by",
    "from",
    "or",
    "an",
    "it",
    "not",
]


def make_messages(target_tokens: int, count: int) -> list[Message]:
    """``count`` messages adding up to about ``target_tokens`` tokens (text, tool calls, tool results)."""
    rng = random.Random(7)
    per = target_tokens // count
    messages = []
    for n in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(per))
        if n % 2 == 0:
            blocks = [TextBlock(text)] if n % 4 == 0 else [ToolResultBlock(f"c{n}", text)]
            messages.append(Message("user", blocks))
        else:
            messages.append(
                Message(
                    "assistant",
                    [
                        TextBlock(text[: len(text) // 2]),
                        ToolUseBlock(f"c{n + 1}", "Read", {"path": text[len(text) // 2 :]}),
                    ],
                )
            )
    return messages


def median_ms(fn: object, runs: int) -> float:
    """Median in milliseconds."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


ENCODER_MEMORY = """
import sys
def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1])
import tiktoken, maia.context.tokens as tokens
before = status('VmRSS:')
tokens.encoding().encode_ordinary('warm up')
print(before, status('VmRSS:'), status('VmHWM:'))
"""


def encoder_memory() -> None:
    """RSS of a fresh process (tiktoken imported) before and after building the encoder, and its peak."""
    samples = []
    for _ in range(5):
        with tempfile.TemporaryDirectory() as home:
            done = subprocess.run(
                [sys.executable, "-c", ENCODER_MEMORY],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "MAIA_HOME": home},
            )
        samples.append(tuple(int(v) for v in done.stdout.split()))
    before, after, peak = (statistics.median(s[i] for s in samples) / 1024 for i in range(3))
    print(
        f"o200k encoder: RSS {before:.0f} MB before, {after:.0f} MB after (+{after - before:.0f} MB), "
        f"peak {peak:.0f} MB while loading (median of 5 fresh processes)"
    )


def main() -> None:
    """Measure and print."""
    runs = rounds(sys.argv[1:], 15, __doc__)
    encoder_memory()
    enc = encoding()
    messages = make_messages(200_000, 400)
    counter = TokenCounter()
    total = counter.count("system", messages)
    recount = median_ms(lambda: counter.count("system", messages), runs * 10)
    texts = [block_text(b) for m in messages for b in m.content]
    joined = "".join(texts)
    raw = median_ms(lambda: [enc.encode_ordinary(t) for t in texts], runs)
    raw_joined = median_ms(lambda: enc.encode_ordinary(joined), runs)
    cold = median_ms(lambda: TokenCounter().count("system", messages), runs)
    print(f"session: {len(messages)} messages, {total:,} tokens")
    print(f"  recount (memoised)      {recount:8.3f} ms   target ≤ 1 ms: {'ok' if recount <= 1 else 'OVER'}")
    print(f"  cold count              {cold:8.1f} ms   target ≤ 50 ms: {'ok' if cold <= 50 else 'OVER'}")
    print(f"  raw tiktoken, per block {raw:8.1f} ms   ratio {cold / raw:.2f}x (target ≤ 1.2x)")
    print(f"  raw tiktoken, one text  {raw_joined:8.1f} ms   ratio {cold / raw_joined:.2f}x")
    with tempfile.TemporaryDirectory() as folder:
        store = SessionStore(Path(folder))
        big = SavedSession("big", model="m", messages=make_messages(1_200_000, 400))
        store.write(big)
        size = store.path("big").stat().st_size
        save = median_ms(lambda: store.write(big), runs)
        load = median_ms(lambda: store.load("big"), runs)
    print(f"session file: {size / 1e6:.1f} MB")
    print(f"  atomic save             {save:8.1f} ms   target ≤ 50 ms: {'ok' if save <= 50 else 'OVER'}")
    print(f"  load                    {load:8.1f} ms")


if __name__ == "__main__":
    main()
