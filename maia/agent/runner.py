"""Running the tool calls of one model answer (§6.3): authorise in order, run (≤ 8 at once), report in order."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from maia.core.contracts import (
    CALL_ASKED,
    AgentUI,
    Approval,
    HookVerdict,
    PermissionCheck,
    Tool,
    ToolContext,
    ToolHooks,
    ToolResultBlock,
    ToolsProgress,
    ToolUseBlock,
)
from maia.i18n import _
from maia.permissions.rules import Verdict
from maia.tools.base import received

if TYPE_CHECKING:
    from maia.permissions.engine import Decision

MAX_PARALLEL_TOOLS = 8
OFF_LOOP_INPUT = 8_000  # characters of input past which the permission check runs in a thread
STOP_FOR_MODEL = "The user stopped this iteration: this tool was not run. Wait for the user's next message."
NOT_RUN_FOR_MODEL = "Not run: the user stopped the iteration before this call."


def not_run(reason: str) -> str:
    """What the user sees for a call refused without a rule: the reason, said once "Not run"."""
    prefix = _("Not run: {reason}").split("{reason}")[0]
    if reason.startswith(("Not run:", prefix)):
        return reason
    return _("Not run: {reason}").format(reason=reason)


USER_REFUSED = "The user refused this action."

__all__ = ["PermissionCheck", "RunOutcome", "ToolRunner", "validate_input"]


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """One result per call, in call order, and whether the user answered ``stop``."""

    results: list[ToolResultBlock]
    stopped: bool = False


@dataclass(slots=True)
class _Prepared:
    call: ToolUseBlock
    tool: Tool | None = None
    summary: str = ""
    result: ToolResultBlock | None = None  # decided without running (error, refusal, stop)
    task: asyncio.Task[ToolResultBlock] | None = None
    display: str | None = None  # what the user sees instead of the text written for the model
    asked: bool = False  # the user saw the call (and its diff) in a question
    diff: str | None = None  # an edit made without a question: its diff, shown with the result


def shown_output(tool: Tool | None, output: str) -> str:
    """What the user sees of a result: the tool's own display of it when it has one (WebFetch drops the
    notice written for the model)."""
    display = getattr(tool, "display", None)
    if tool is None or display is None:
        return output
    try:
        return str(display(output))
    except Exception:  # a display is cosmetic: never let it fail a call
        return output


def _size(tool_input: Mapping[str, Any]) -> int:
    return sum(len(v) if isinstance(v, str) else 8 for v in tool_input.values())


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(schema_json))


def validate_input(tool: Tool, tool_input: Mapping[str, Any]) -> str | None:
    """Check the input against the tool's schema; the error names the bad parameter (§8)."""
    schema = dict(tool.spec.input_schema)
    if not schema:
        return None
    validator = _validator(json.dumps(schema, sort_keys=True))
    error = next(iter(sorted(validator.iter_errors(dict(tool_input)), key=lambda e: list(map(str, e.path)))), None)
    if error is None:
        return None
    if error.validator == "required":
        properties = schema.get("properties", {})
        missing = next((p for p in error.validator_value if p not in tool_input), "?")
        detail = str(properties.get(missing, {}).get("description", "")) or _("required")
        name = missing
    else:
        name = str(error.path[0]) if error.path else "?"
        detail = error.message
    return _('Parameter "{name}" missing or invalid ({detail}). Parameters received: {received}.').format(
        name=name, detail=detail, received=received(tool_input)
    )


class ToolRunner:
    """Runs the calls of one answer; one instance per batch."""

    def __init__(
        self,
        tools: Mapping[str, Tool],
        ui: AgentUI,
        ctx: ToolContext,
        permissions: PermissionCheck | None = None,
        max_parallel: int = MAX_PARALLEL_TOOLS,
        remember: Callable[[Sequence[str], bool], None] | None = None,
    ) -> None:
        self.tools = tools
        self.ui = ui
        if permissions is not None and ctx.permissions is None:
            # tools see the same check (Grep and Glob leave out what a Read deny covers)
            ctx = dataclasses.replace(ctx, permissions=permissions)
        self.ctx = ctx
        self.permissions = permissions
        self.limiter = asyncio.Semaphore(max_parallel)
        self.key_locks: dict[str, asyncio.Lock] = {}
        self.completed: dict[str, ToolResultBlock] = {}  # results so far (an interruption keeps them)
        self.started: set[str] = set()  # calls whose tool began to run
        self.remember = remember  # "always": (rules, kept in the project's local settings or this session)

    def _summary(self, tool: Tool | None, call: ToolUseBlock) -> str:
        if tool is None:
            return ""
        try:
            return tool.describe(call.input)
        except Exception:  # a summary is cosmetic: never let it fail a call
            return ""

    async def _authorise(self, call: ToolUseBlock) -> tuple[_Prepared, bool]:
        """Decide one call: (prepared call, stop answered); a result decided without running is kept."""
        prepared, stopped = await self._decide(call)
        if prepared.result is not None:
            self.completed[call.id] = prepared.result
        return prepared, stopped

    async def _decide(self, call: ToolUseBlock) -> tuple[_Prepared, bool]:
        from maia.permissions.engine import Decision  # loaded by the first tool call, not at start-up

        tool = self.tools.get(call.name)
        prepared = _Prepared(call, tool, self._summary(tool, call))
        if tool is None:
            prepared.result = ToolResultBlock(call.id, _("Unknown tool: {name}").format(name=call.name), True)
            return prepared, False
        invalid = validate_input(tool, call.input)
        if invalid is not None:
            prepared.result = ToolResultBlock(call.id, invalid, True)
            return prepared, False
        if self.permissions is None:
            decision = Decision(Verdict.ASK if tool.permission == "ask" else Verdict.ALLOW, None, "")
        elif _size(call.input) > OFF_LOOP_INPUT:
            # a huge command takes the engine a while: off the event loop, so the screen and Ctrl+C answer
            decision = await asyncio.to_thread(self.permissions, call.name, call.input)
        else:
            decision = self.permissions(call.name, call.input)
        hooks = self.ctx.hooks
        if hooks is not None and decision.verdict != Verdict.DENY:
            decision, refused = await self._hooks_before(hooks, call, decision)
            if refused is not None:
                prepared.result = ToolResultBlock(call.id, refused.reason, True)
                prepared.display = _("Blocked by a hook: {reason}").format(reason=refused.reason)
                return prepared, refused.stop
        verdict, rule = decision.verdict, decision.rule
        if verdict == Verdict.DENY:
            if rule is None:
                text = decision.reason  # a refusal that no rule made (e.g. nobody can confirm): its own words
                prepared.display = not_run(decision.reason)
            else:
                text = _("Action denied by the permission rules ({rule}). Do not retry it as is.").format(rule=rule)
                prepared.display = _("Denied by the rule {rule}.").format(rule=rule)
            prepared.result = ToolResultBlock(call.id, text, True)
            return prepared, False
        if verdict == Verdict.ASK:
            from maia.agent.approval import approval_for

            prepared.asked = True
            question = _("Allow {tool}: {summary}?").format(tool=call.name, summary=prepared.summary or call.name)
            try:
                approval = approval_for(tool, call.name, call.input, prepared.summary, decision, self.ctx.launch)
            except Exception:  # the question's extras are cosmetic: ask plainly rather than fail
                approval = Approval(call.name, prepared.summary)
            if self.remember is None:
                approval = replace(approval, rules=())
            if self.ctx.hooks is not None:
                self.ctx.hooks.notify(question)
            answer = await self.ui.ask(question, approval)
            if answer in ("always", "always-session"):
                if approval.rules and self.remember is not None:
                    self.remember(approval.rules, answer == "always")
                answer = "yes"
            if answer == "stop":
                prepared.result = ToolResultBlock(call.id, STOP_FOR_MODEL, True)
                prepared.display = _("Not run: you stopped the iteration.")
                return prepared, True
            if answer != "yes":
                # a sub-agent in a non-interactive run: nobody refused, nobody could answer; say so
                refusal = getattr(self.ui, "refusal", None)
                text = refusal if isinstance(refusal, str) and refusal else USER_REFUSED
                prepared.result = ToolResultBlock(call.id, text, True)
                prepared.display = _("Refused.")
                return prepared, False
        return prepared, False

    async def _hooks_before(
        self, hooks: ToolHooks, call: ToolUseBlock, decision: Decision
    ) -> tuple[Decision, HookVerdict | None]:
        """PreToolUse: a hook's deny refuses (returned), its ask asks, its allow spares a rule's plain ask."""
        from maia.permissions.engine import Decision  # loaded by the first tool call, not at start-up

        try:
            verdict = await hooks.before_tool(call.name, call.input)
        except Exception as error:  # a hook that cannot run is the user's warning, never the call's failure
            self.ui.on_warning(_("A PreToolUse hook could not run: {error}").format(error=error))
            return decision, None
        if verdict is None:
            return decision, None
        if verdict.decision == "deny":
            reason = _("Blocked by a PreToolUse hook: {reason}").format(reason=verdict.reason)
            return decision, HookVerdict("deny", reason, verdict.stop)
        if verdict.decision == "ask" and decision.verdict == Verdict.ALLOW:
            return Decision(Verdict.ASK, None, verdict.reason or _("a hook asks for confirmation")), None
        if (
            verdict.decision == "allow"
            and decision.verdict == Verdict.ASK
            and not decision.doubt
            and not decision.unreadable  # what the engine could not read, only a person allows
        ):
            return Decision(Verdict.ALLOW, None, verdict.reason or _("allowed by a hook")), None
        return decision, None

    def _lock_for(self, tool: Tool, call: ToolUseBlock) -> asyncio.Lock | None:
        try:
            key = tool.lock_key(call.input, self.ctx.launch)
        except Exception:  # a failing key is ignored (§6.3)
            return None
        if not key:
            return None
        return self.key_locks.setdefault(key, asyncio.Lock())

    def _diff_before(self, prepared: _Prepared) -> None:
        """An edit nobody was asked about (edits mode, an allow rule): its diff, taken just before it runs
        (under the file's lock), for the user to see what changed, as a question would have shown."""
        if prepared.asked or prepared.call.name not in ("Write", "Edit") or self._show_diff is None:
            return
        from maia.agent.approval import write_detail

        try:
            prepared.diff = write_detail(prepared.call.name, prepared.call.input, self.ctx.launch)
        except Exception:  # the diff is cosmetic: the edit itself goes on
            prepared.diff = None

    def _report(self, prepared: _Prepared, result: ToolResultBlock) -> None:
        """Show an applied edit's diff after its result (only when it succeeded)."""
        if prepared.diff and not result.is_error and self._show_diff is not None:
            self._show_diff(prepared.call.name, prepared.diff)

    @property
    def _show_diff(self) -> Callable[[str, str], None] | None:
        show = getattr(self.ui, "on_applied_diff", None)
        return show if callable(show) else None

    async def _execute(self, prepared: _Prepared, lock: asyncio.Lock | None) -> ToolResultBlock:
        self.started.add(prepared.call.id)
        result = await self._execute_one(prepared, lock)
        self.completed[result.tool_use_id] = result
        return result

    async def _execute_one(self, prepared: _Prepared, lock: asyncio.Lock | None) -> ToolResultBlock:
        assert prepared.tool is not None
        call = prepared.call
        if lock is not None:
            await lock.acquire()
        try:
            async with self.limiter:
                self._diff_before(prepared)
                asked = CALL_ASKED.set(prepared.asked)
                try:
                    output = await prepared.tool.execute(call.input, self.ctx)
                except Exception as error:  # the one broad except: a tool failure becomes an error result
                    result = ToolResultBlock(call.id, str(error) or type(error).__name__, True)
                else:
                    result = ToolResultBlock(call.id, output if isinstance(output, str) else str(output))
                finally:
                    CALL_ASKED.reset(asked)
            # under the call's lock: a formatter a PostToolUse hook runs on the file is not raced by an Edit
            return await self._hooks_after(call, result)
        finally:
            if lock is not None:
                lock.release()

    async def _hooks_after(self, call: ToolUseBlock, result: ToolResultBlock) -> ToolResultBlock:
        """PostToolUse: what the hooks say joins the result the model reads."""
        hooks = self.ctx.hooks
        if hooks is None:
            return result
        try:
            note = await hooks.after_tool(call.name, call.input, result.content, result.is_error)
        except Exception as error:  # a hook that cannot run is the user's warning, never the call's failure
            self.ui.on_warning(_("A PostToolUse hook could not run: {error}").format(error=error))
            return result
        if not note:
            return result
        return ToolResultBlock(call.id, f"{result.content}\n\n{note}", result.is_error)

    async def run(self, calls: Sequence[ToolUseBlock]) -> RunOutcome:
        """Run the calls; results come back in call order, one per call."""
        if len(calls) <= 1:
            return await self._run_foreground(calls)
        return await self._run_parallel(calls)

    async def _run_foreground(self, calls: Sequence[ToolUseBlock]) -> RunOutcome:
        if not calls:
            return RunOutcome([])
        call = calls[0]
        tool = self.tools.get(call.name)
        self.ui.on_tool_call(call.name, self._summary(tool, call))
        prepared, stopped = await self._authorise(call)
        result = prepared.result
        if result is None:
            assert prepared.tool is not None
            result = await self._execute(prepared, None)
        self.ui.on_tool_result(call.name, prepared.display or shown_output(tool, result.content), result.is_error)
        self._report(prepared, result)
        return RunOutcome([result], stopped)

    async def _run_parallel(self, calls: Sequence[ToolUseBlock]) -> RunOutcome:
        prepared_calls: list[_Prepared] = []
        stopped = False
        names = tuple(c.name for c in calls)
        done = 0

        def finished(_task: asyncio.Task[ToolResultBlock]) -> None:
            nonlocal done
            done += 1
            self.ui.on_tools_running(ToolsProgress(names, done))

        async with asyncio.TaskGroup() as group:
            for call in calls:
                if stopped:
                    skipped = _Prepared(
                        call,
                        self.tools.get(call.name),
                        self._summary(self.tools.get(call.name), call),
                        result=ToolResultBlock(call.id, NOT_RUN_FOR_MODEL, True),
                        display=_("Not run: you stopped the iteration."),
                    )
                    self.completed[call.id] = skipped.result  # type: ignore[assignment]
                    prepared_calls.append(skipped)
                    done += 1
                    continue
                prepared, stopped = await self._authorise(call)
                prepared_calls.append(prepared)
                if prepared.result is not None:
                    done += 1
                    continue
                assert prepared.tool is not None
                lock = self._lock_for(prepared.tool, call)
                prepared.task = group.create_task(self._execute(prepared, lock))
                prepared.task.add_done_callback(finished)
            self.ui.on_tools_running(ToolsProgress(names, done))
        self.ui.on_tools_running(None)
        results: list[ToolResultBlock] = []
        for prepared in prepared_calls:
            result = prepared.result if prepared.task is None else prepared.task.result()
            assert result is not None
            self.ui.on_tool_call(prepared.call.name, prepared.summary)
            shown = prepared.display or shown_output(prepared.tool, result.content)
            self.ui.on_tool_result(prepared.call.name, shown, result.is_error)
            self._report(prepared, result)
            results.append(result)
        return RunOutcome(results, stopped)
