"""The application layer every front end stands on (chat, ``maia ask``, sub-agent child, workflow worker).

- ``application``: :class:`Application`, the provider factory
- ``loadout``: tools, skills, rules and instructions assembled into an agent's equipment
- ``sources``: the built-in, custom-tool and skill tool sources (MCP servers are another source)
- ``prepare``: what an input asks for (``!``, ``§``, ``/``, ``@``)
- ``retry``: the one retry policy (usage and rate limits, transient server failures, outages)
- ``waits``: the words every front end uses while it waits for the server
- ``pick``: which saved session ``--resume`` / ``--continue`` carries on
- ``catalog``: LiteLLM's model list, shared
- ``slash``: the slash-command registry
"""
