"""``python -m maia`` runs the ``maia`` command; ``python -m maia --subagent`` is a sub-agent's process.

:func:`run` is also the installed ``maia`` script's entry point: it is this small so that a Ctrl+C pressed
while the command's modules load ends the program quietly (status 130), without a traceback.
"""

import sys


def run() -> None:
    """Run the ``maia`` command (or a sub-agent's process); a Ctrl+C while it loads exits with 130."""
    try:
        if sys.argv[1:] == ["--subagent"]:  # hidden: only MAIA starts it (maia.subagents.launcher), never Click
            import gc

            # loading makes objects that live as long as the process: no collection scans them meanwhile, and
            # none afterwards (the child freezes them once loaded: maia.frontends.subagent.serve)
            gc.disable()
            from maia.frontends.subagent import main as subagent_main

            sys.exit(subagent_main())
        from maia.commands import main
    except KeyboardInterrupt:
        sys.exit(130)  # interrupted while loading, before any handler of MAIA's own was in place
    main()


if __name__ == "__main__":
    run()
