#!/bin/sh
# Notification hook: a desktop notification when MAIA waits for your answer (notify-send, if present).
# settings.json: {"hooks": {"Notification": [{"command": "sh /path/to/examples/hooks/notify.sh"}]}}
message=$(python3 -c 'import json, sys; print(json.load(sys.stdin).get("message", "MAIA waits for you"))')
command -v notify-send >/dev/null 2>&1 && notify-send "MAIA" "$message"
exit 0
