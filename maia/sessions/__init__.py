"""Sessions on disk: the file format (codec) and the store (names, atomic locked writes, locks)."""
