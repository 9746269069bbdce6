"""The terminal UI: pure state and rendering, one module (term.py) doing terminal I/O."""
