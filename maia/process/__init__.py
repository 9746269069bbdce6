"""Running programs: the shell runner and the OS sandbox under every command."""
