"""The OS sandbox under shell commands (Linux Landlock): launcher, policy, status.

Kept empty on purpose: ``python -m maia.process.sandbox`` imports this package before every sandboxed
command, so it must cost nothing. Import ``maia.process.sandbox.policy`` for the policy API.
"""
