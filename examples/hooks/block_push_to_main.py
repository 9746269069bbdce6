#!/usr/bin/env python3
"""PreToolUse hook: refuse `git push` to main or master (exit 2: the reason goes to the model).

settings.json: {"hooks": {"PreToolUse": [{"matcher": "Bash",
                 "command": "python3 /path/to/examples/hooks/block_push_to_main.py"}]}}
"""

import json
import re
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if re.search(r"\bgit\b.*\bpush\b", command) and (
    re.search(r"\b(main|master)\b", command) or not re.search(r"\bpush\s+\S+\s+\S+", command)
):
    print("Pushing to main is done by a person here: commit on a branch and stop.", file=sys.stderr)
    sys.exit(2)
