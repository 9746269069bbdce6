"""MAIA: a command-line AI coding assistant for any model behind a LiteLLM proxy."""

__version__ = "0.1.0"
