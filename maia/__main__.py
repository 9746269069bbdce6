"""``python -m maia`` runs the ``maia`` command."""

from maia.commands import main

main()
