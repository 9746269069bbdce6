"""What the model is told before the conversation: system prompt, project instructions, skills."""
