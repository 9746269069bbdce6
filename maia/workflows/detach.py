"""``maia run --detach``: the workflow goes on in a process of its own, beyond the terminal's life."""

from __future__ import annotations

import os
import subprocess

from maia.process.sandbox.selfguard import python_argv
from maia.workflows.registry import Workflow, process_identity
from maia.workflows.worker import RunOptions

WORKFLOW_ID_OPTION = "--workflow-id"  # hidden option of `maia run`: run the workflow this record describes


def worker_command(workflow: Workflow, options: RunOptions) -> list[str]:
    """``python -I -m maia run FILE --workflow-id ID --quiet`` (the task stays in the record, off the process
    list; ``-I``: a ``maia/`` folder in the launch folder or PYTHONPATH cannot stand in for MAIA)."""
    return [*python_argv(), "-m", "maia", "run", str(options.agent_file), WORKFLOW_ID_OPTION, workflow.id, "--quiet"]


def spawn_worker(workflow: Workflow, options: RunOptions) -> int:
    """Start the worker in a new session (no controlling terminal: closing it sends no SIGHUP there), its
    output going to ``run.log``; its pid, also written in the record."""
    env = {**os.environ, "MAIA_HOME": str(options.home), "MAIA_CWD": str(options.launch)}
    with open(workflow.log_path, "ab") as log:
        process = subprocess.Popen(
            worker_command(workflow, options),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=options.launch,
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    pid = process.pid
    process.returncode = 0  # not ours to wait for: no "still running" warning when this command ends
    workflow.update(lambda data: data.update(pid=pid, processStart=process_identity(pid)))
    return pid
