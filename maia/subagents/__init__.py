"""Sub-agents (§20): AGENT.md definitions, the Agent tool, the child process and its protocol."""
