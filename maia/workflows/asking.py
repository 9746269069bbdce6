"""Questions for a person in a workflow: permissions and interventions (§23).

The permission mode decides: ``allow`` and ``deny`` answer at once; ``wait`` writes a request in the
registry, marks the agent waiting, and reads the answer file every second until ``maia approve`` or
``maia reply`` writes it (or the workflow is stopped). One question at a time per workflow.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from maia.core.contracts import (
    Permission,
    PermissionCheck,
    SourceReport,
    Tool,
    ToolContext,
    ToolSpec,
    ToolTraits,
)
from maia.i18n import _
from maia.permissions.rules import Verdict
from maia.permissions.subject import Subject, default_subject
from maia.tools.base import ToolError, require_str
from maia.workflows.orchestrator import PermissionMode
from maia.workflows.registry import Request, RequestKind, Workflow, WorkflowFileError
from maia.workflows.text import one_line

INTERVENTION_TOOL = "RequestIntervention"
POLL_SECONDS = 1.0
Log = Callable[[str, str], None]  # (kind, text)

NOBODY_TO_ASK = (
    "No one can answer in this workflow: it runs with the permission mode {mode}, unattended. Decide with "
    "what you have, and say in your final result what you assumed."
)

if TYPE_CHECKING:
    from maia.permissions.engine import Decision


class Asker:
    """Asks a person through the registry, or answers at once as the permission mode says."""

    def __init__(
        self,
        workflow: Workflow,
        mode: PermissionMode,
        log: Log,
        on_wait: Callable[[str, int], None],
        *,
        poll: float = POLL_SECONDS,
    ) -> None:
        self.workflow = workflow
        self.mode = mode
        self.log = log
        self.on_wait = on_wait  # (agent, +1 | -1): the agent's state follows its questions
        self.poll = poll
        self._one_at_a_time = asyncio.Lock()

    async def permission(
        self,
        agent: str,
        message: str,
        *,
        doubt: str | None = None,
        detail: str | None = None,
        detail_kind: str | None = None,
    ) -> bool:
        """May the agent do what ``message`` asks? Refused when the answer cannot be read; in allow mode
        an ask raised out of doubt (``doubt``: the engine's reason) is refused, never allowed blindly."""
        if self.mode != "wait" and doubt:
            self.log(
                "request",
                _("Refused (it comes from doubt: {reason}): {message}").format(reason=doubt, message=one_line(message)),
            )
            return False
        if self.mode != "wait":
            allowed = self.mode == "allow"
            self.log(
                "request",
                (
                    _("Allowed (permission mode allow): {message}")
                    if allowed
                    else _("Refused (permission mode deny): {message}")
                ).format(message=one_line(message)),
            )
            return allowed
        answer = await self._wait_for_answer("permission", agent, message, detail, detail_kind)
        return answer.get("approved") is True  # anything else, including a broken answer, is a refusal

    async def intervention(self, agent: str, question: str) -> str:
        """The person's written answer to ``question`` (for the model)."""
        if self.mode != "wait":
            self.log(
                "request",
                _("Question not asked (permission mode {mode}): {question}").format(
                    mode=self.mode, question=one_line(question)
                ),
            )
            return NOBODY_TO_ASK.format(mode=self.mode)
        answer = await self._wait_for_answer("intervention", agent, question)
        text = answer.get("text")
        if not isinstance(text, str):
            return "The answer could not be read. Decide with what you have and say so in your final result."
        return f"The user answered:\n{text}"

    async def _wait_for_answer(
        self,
        kind: RequestKind,
        agent: str,
        message: str,
        detail: str | None = None,
        detail_kind: str | None = None,
    ) -> dict[str, Any]:
        async with self._one_at_a_time:
            self.on_wait(agent, +1)  # the agent shows waiting before its request does: never a pending request
            request: Request | None = None  # beside a running agent
            answered = False
            try:
                request = await asyncio.to_thread(self.workflow.add_request, kind, agent, message, detail, detail_kind)
                self._announce(request)
                while True:
                    answer = self._read_answer(request)
                    if answer is not None:
                        answered = True
                        self._received(request, answer)
                        return answer
                    await asyncio.sleep(self.poll)
            finally:
                if request is not None:
                    with contextlib.suppress(Exception):
                        self.workflow.close_request(request.id, "answered" if answered else "withdrawn")
                self.on_wait(agent, -1)

    def _read_answer(self, request: Request) -> dict[str, Any] | None:
        """The answer, None while there is none; ``{}`` (a refusal) when it cannot be trusted or read."""
        try:
            answer = self.workflow.read_answer(request.id)
        except WorkflowFileError as error:
            self.log("warn", _("{error}; taken as a refusal.").format(error=error.message))
            return {}
        if answer is not None and answer.get("nonce") != request.nonce:  # not written by maia approve / reply
            self.log(
                "warn",
                _("{path} was not written by maia approve or maia reply; taken as a refusal.").format(
                    path=self.workflow.answer_path(request.id)
                ),
            )
            return {}
        return answer

    def _announce(self, request: Request) -> None:
        self.workflow.append_event(
            "request", id=request.id, kind=request.kind, agent=request.agent, message=request.message
        )
        if request.kind == "permission":
            how = _("answer with: maia approve {id} {request} (or --deny)")
        else:
            how = _('answer with: maia reply {id} "your answer"')
        self.log(
            "request",
            _("Request {request} from {agent}: {message} — {how}").format(
                request=request.id,
                agent=request.agent,
                message=one_line(request.message, 400),
                how=how.format(id=self.workflow.id, request=request.id),
            ),
        )

    def _received(self, request: Request, answer: Mapping[str, Any]) -> None:
        if request.kind == "permission":
            verdict = "approved" if answer.get("approved") is True else "denied"
            self.workflow.append_event("answer", id=request.id, approved=verdict == "approved")
            self.log(
                "request",
                (_("Request {request} approved.") if verdict == "approved" else _("Request {request} denied.")).format(
                    request=request.id
                ),
            )
        else:
            self.workflow.append_event("answer", id=request.id, text=str(answer.get("text", "")))
            self.log("request", _("Request {request} answered.").format(request=request.id))


def workflow_permissions(check: PermissionCheck, mode: PermissionMode) -> PermissionCheck:
    """The rules, with ``RequestIntervention`` always allowed and, in ``allow`` / ``deny`` mode, questions
    answered at once (a deny of the rules always stays a deny, and ``allow`` never answers a question the
    permission engine raised out of doubt: that one is refused)."""

    def decide(name: str, tool_input: Mapping[str, Any]) -> Decision:
        from maia.permissions.engine import Decision  # loaded by the first tool call, not at start-up

        if name == INTERVENTION_TOOL:
            return Decision(Verdict.ALLOW, None, _("always allowed in a workflow"))
        decision = check(name, tool_input)
        if decision.verdict != Verdict.ASK or mode == "wait":
            return decision
        if mode == "allow" and not decision.doubt:
            return Decision(Verdict.ALLOW, "permissionMode: allow", _("allowed by the permission mode allow"))
        if mode == "allow":  # an ask out of doubt (a command the engine cannot read, a deny it might dodge)
            return Decision(
                Verdict.DENY,
                None,
                "Not run: the permission mode allow only answers questions no rule raised, and this one comes "
                f"from doubt: {decision.reason}. Do not retry it as is.",
            )
        return Decision(
            Verdict.DENY,
            None,
            "Not run: this workflow runs with the permission mode deny, and this call needs a person's "
            "confirmation. Do not retry it; do without it, and report it in your final result.",
        )

    return decide


class RequestIntervention:
    """``RequestIntervention {question}``: the parent asks the person who runs the workflow and waits."""

    # a question to a person (workflows have no plan mode)
    traits: ToolTraits = ToolTraits()

    def __init__(self, ask: Callable[[str], Awaitable[str]]) -> None:
        self._ask = ask

    @property
    def spec(self) -> ToolSpec:
        """A question and, optionally, what the person needs to know to answer it."""
        return ToolSpec(
            INTERVENTION_TOOL,
            "Ask the person who runs this workflow a question and wait for their written answer. Use it when you "
            "need a decision or information only a person can give; never ask questions in your text instead. "
            "The workflow waits (state `waiting`) until they answer.",
            {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question, complete and self-contained."},
                    "context": {"type": "string", "description": "What the person needs to know to answer."},
                },
                "required": ["question"],
            },
        )

    @property
    def permission(self) -> Permission:
        """Never asks (and the workflow's permission check always allows it)."""
        return "auto"

    def subject(self, tool_input: Mapping[str, Any]) -> Subject:
        """Rules named after the tool, matching its values (the workflow allows it anyway)."""
        return default_subject(INTERVENTION_TOOL, tool_input)

    def describe(self, tool_input: Mapping[str, Any]) -> str:
        """The question, on one line."""
        return one_line(str(tool_input.get("question") or ""), 100)

    def lock_key(self, tool_input: Mapping[str, Any], launch: Path) -> str | None:
        """Questions come one at a time."""
        return INTERVENTION_TOOL

    async def execute(self, tool_input: Mapping[str, Any], ctx: ToolContext) -> str:
        """Ask, and return the answer."""
        question = require_str(tool_input, "question", _("the question for the person"))
        if not question.strip():
            raise ToolError(_("The question is empty."))
        context = tool_input.get("context")
        if isinstance(context, str) and context.strip():
            question = f"{question.strip()}\n\n{context.strip()}"
        return await self._ask(question.strip())


class WorkflowToolSource:
    """The workflow's own tools (``RequestIntervention``), added to the parent's tool sources."""

    name = "workflow"

    def __init__(self, ask: Callable[[str], Awaitable[str]]) -> None:
        self._tools: list[Tool] = [RequestIntervention(ask)]

    async def start(self) -> SourceReport:
        """Nothing to load."""
        return SourceReport()

    def tools(self) -> list[Tool]:
        """``RequestIntervention``."""
        return list(self._tools)

    async def aclose(self) -> None:
        """Nothing to release."""
