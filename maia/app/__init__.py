"""The application layer every front end stands on (chat, ``maia ask``, sub-agent child, workflow worker).

- ``application``: :class:`Application`, the provider factory
- ``loadout``: tools, skills, rules and instructions assembled into an agent's equipment
- ``sources``: the built-in, custom-tool and skill tool sources (MCP servers are another source)
- ``prepare``: what an input asks for (``!``, ``§``, ``/``, ``@``)
- ``retry``: the one retry policy (rate limits, transient server failures)
- ``pick``: which saved session ``--resume`` / ``--continue`` carries on
- ``catalog``: LiteLLM's model list, shared
- ``slash``: the slash-command registry
"""
