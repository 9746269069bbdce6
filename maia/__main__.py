"""``python -m maia`` runs the ``maia`` command; ``python -m maia --subagent`` is a sub-agent's process."""

import sys

if sys.argv[1:] == ["--subagent"]:  # hidden: only MAIA starts it (maia.subagents.launcher), never Click
    from maia.frontends.subagent import main as subagent_main

    sys.exit(subagent_main())

from maia.commands import main

main()
