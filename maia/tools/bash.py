"""Bash: run a command in the launch folder, in its own process group, 2 minutes at most."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import Any

from maia.core.contracts import ToolContext, ToolTraits
from maia.i18n import _
from maia.permissions.subject import CommandSubject, Subject
from maia.process.shell import DEFAULT_TIMEOUT, cut_middle, run_shell
from maia.tools.base import BuiltinTool, require_str

MAX_OUTPUT = 30_000


class BashTool(BuiltinTool):
    """Run a shell command."""

    traits = ToolTraits(main_input="command")

    name = "Bash"
    description = (
        "Run a shell command (bash) in the working folder and return its output (stdout and stderr "
        "together) and exit code. 2 minutes at most; output cut at 30,000 characters. Not interactive: "
        "no input can be typed. Prefer Read, Glob and Grep to read and search files."
    )
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command line to run."}},
        "required": ["command"],
    }
    default_permission = "ask"
    summary_key = "command"

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Bash rules match the command (and Redirect / Write rules the files it writes)."""
        command = tool_input.get("command")
        return CommandSubject(command if isinstance(command, str) else None)

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Run the command; the last line tells how it ended."""
        command = require_str(tool_input, "command", _("the command line to run"))
        # a front end that shows a running command live offers ``watch_command`` (the chat); others do not
        watch = getattr(ctx.ui, "watch_command", None)
        live: contextlib.AbstractContextManager[Callable[[bytes], None] | None] = (
            watch(command) if callable(watch) else contextlib.nullcontext()
        )
        with live as on_output:
            result = await run_shell(
                command,
                ctx.launch,
                timeout=DEFAULT_TIMEOUT,
                env=ctx.env,
                max_chars=MAX_OUTPUT * 4,
                sandbox=ctx.sandbox,
                on_output=on_output,
            )
        # the auto mode ran it unasked because of the sandbox: going past the sandbox is the user's call
        rerun = ctx.rerun_unsandboxed if result.note and ctx.sandbox is not None else None
        if rerun is not None and result.note and await rerun(command, result.note):
            live = watch(command) if callable(watch) else contextlib.nullcontext()
            with live as on_output:
                result = await run_shell(
                    command,
                    ctx.launch,
                    timeout=DEFAULT_TIMEOUT,
                    env=ctx.env,
                    max_chars=MAX_OUTPUT * 4,
                    sandbox=None,
                    on_output=on_output,
                )
            output, _cut = cut_middle(result.output, MAX_OUTPUT)
            note = _("(run again outside the sandbox, as the user approved)")
            ending = "" if not output or output.endswith("\n") else "\n"
            return f"{output}{ending}{note}\n{result.describe(DEFAULT_TIMEOUT)}"
        output, _cut = cut_middle(result.output, MAX_OUTPUT)
        output = result.with_note(output)  # a sandbox refusal: the model is told to ask the user
        status = result.describe(DEFAULT_TIMEOUT)
        return f"{output}{'' if not output or output.endswith(chr(10)) else chr(10)}{status}"
