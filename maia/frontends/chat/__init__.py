"""The chat: pure state and renderers, the chat front end and its slash commands."""
