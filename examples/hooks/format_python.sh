#!/bin/sh
# PostToolUse hook: format a Python file after the agent wrote or edited it (ruff must be installed).
# settings.json: {"hooks": {"PostToolUse": [{"matcher": "Write|Edit",
#                  "command": "sh /path/to/examples/hooks/format_python.sh"}]}}
path=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["tool_input"].get("path", ""))')
case "$path" in
  *.py) ruff format --quiet "$path" 2>/dev/null || true ;;
esac
exit 0
