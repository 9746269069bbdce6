"""Autonomous workflows (§23): a parent agent orchestrating sub-agents, run without a terminal.

- ``duration``: ``timeout`` values (90s, 30m, 2h…)
- ``registry``: ``~/.maia/workflows/<id>/`` and its files, finding a workflow by reference, derived states
- ``book``: the sub-agents' states (``agents.json``)
- ``orchestrator``: the parent AGENT.md, its layout, its agents and its prompt
- ``asking``: permission requests and interventions (answered by the mode, or by ``maia approve`` / ``reply``)
- ``worker``: running a workflow (one more front end of the application layer)
- ``view``: what ``maia workflows`` / ``maia workflow`` show (text and JSON)
"""
