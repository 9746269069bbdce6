"""The agent: the turn loop, the tool runner, the conversation (session + counting + compaction)."""
