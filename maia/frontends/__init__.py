"""The front ends over the application layer: ``maia ask``, the chat, and the terminal layer under it."""
