"""What the user types besides a prompt: ``!command``, ``@file``, ``§skill``, ``&agent``."""
