"""MCP servers (§22): declarations, rules, the SDK client adapter, tools, and the tool source.

Importing this package loads nothing heavy; the official ``mcp`` SDK is imported only when a
server is actually connected (``maia.mcp.client``).
"""
