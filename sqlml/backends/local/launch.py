"""Resuming and stopping runs from the page: ``sqlml run SOURCE --resume RUN_ID`` started as
a process of its own, and Ctrl-C (SIGINT) sent to a run's process on this host.

The resumed run gets the page's datasource through ``$SQLML_DATASOURCE`` (never its command
line, where other users of the machine could read it), and the page's run folder through
``$SQLML_RUN_DIR``. Its output (results, errors with their hints) goes to ``output.txt`` in
its run folder.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from sqlml.datasources import parse_url, source_class
from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.backends.runs import RunView, Where

OUTPUT_FILE = "output.txt"  # a run started from the page: what it printed
LAUNCHES = ".launches"  # where a starting run's output is kept until its run id is known
START_TIMEOUT = 60.0  # seconds a resumed run has to say its run id
_STARTED = re.compile(r"^sqlml: run ([\w.-]+)[: ]", re.MULTILINE)


class LaunchError(SqlmlError):
    """A run that cannot be resumed or stopped from the page."""


def resume(settings: Where, run: RunView) -> str:
    """Start resuming ``run``; the new run's id once it has started."""
    if not run.resumable:
        raise LaunchError(
            f"run {run.run_id} is {run.state}: only a failed, cancelled or lost run resumes"
        )
    if not run.source:
        raise LaunchError(
            f"run {run.run_id}'s program is not known: its folder does not describe it",
            hint=f"run sqlml run FILE --resume {run.run_id} in a terminal",
        )
    if run.source.startswith("<"):
        raise LaunchError(
            f"run {run.run_id} ran {run.source} text, not a file: there is none to resume it from",
            hint="run the statements again, with sqlml -e or from a file with sqlml run",
        )
    if not Path(run.source).is_file():
        raise LaunchError(
            f"run {run.run_id}'s program {run.source} is not there any more",
            hint=f"put it back, or run sqlml run FILE --resume {run.run_id} in a terminal",
        )
    base_dir = Path(run.base_dir or Path(run.source).parent)
    launches = settings.run_dir / LAUNCHES
    launches.mkdir(parents=True, exist_ok=True)
    output = launches / f"{secrets.token_hex(8)}.txt"
    environment = {
        **os.environ,
        "SQLML_DATASOURCE": child_datasource(settings.datasource),
        "SQLML_RUN_DIR": str(settings.run_dir.resolve()),
    }
    with output.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "sqlml", "run", run.source, "--resume", run.run_id],
            cwd=base_dir if base_dir.is_dir() else None,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # it goes on when the page's server stops
        )
    threading.Thread(target=process.wait, name="sqlml-ui-resumed", daemon=True).start()
    return _started(process, output)


def _started(process: subprocess.Popen[bytes], output: Path) -> str:
    """The run id ``process`` prints once its run has started; its output then moves into
    the run's folder."""
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        exited = process.poll() is not None
        text = output.read_text(encoding="utf-8", errors="replace")
        found = _STARTED.search(text)
        if found:
            folder = output.parent.parent / found.group(1)
            if folder.is_dir():
                output.replace(folder / OUTPUT_FILE)
            return found.group(1)
        if exited:
            output.unlink(missing_ok=True)
            raise LaunchError(
                f"the resumed run did not start: {text.strip() or 'it printed nothing'}"
            )
        time.sleep(0.05)
    raise LaunchError(
        f"the resumed run has not started after {START_TIMEOUT:g} s",
        hint=f"its output so far is in {output}",
    )


def stop(run: RunView) -> None:
    """Cancel ``run`` as Ctrl-C in its terminal would: its running statements stop and
    commit nothing, and it is recorded as cancelled."""
    if run.state != "running":
        raise LaunchError(f"run {run.run_id} is {run.state}, not running")
    if run.host != socket.gethostname():
        raise LaunchError(
            f"run {run.run_id} runs on {run.host}: this page stops runs of this machine only",
            hint="stop it there (Ctrl-C in its terminal)",
        )
    if run.pid is None or not sqlml_process(run.pid, run.started_at or time.time()):
        raise LaunchError(f"run {run.run_id}'s process ({run.pid}) has ended")
    os.kill(run.pid, signal.SIGINT)


def sqlml_process(pid: int, started_by: float) -> bool:
    """Whether ``pid`` is a live sqlml process on this host that began by ``started_by`` (a
    recycled process id names a process that began later). False where ``/proc`` is not."""
    proc = Path("/proc") / str(pid)
    try:
        arguments = (proc / "cmdline").read_bytes().split(b"\0")
        stat = (proc / "stat").read_text().rsplit(")", 1)[1].split()
        boot = next(
            float(line.split()[1])
            for line in Path("/proc/stat").read_text().splitlines()
            if line.startswith("btime")
        )
    except (OSError, IndexError, StopIteration, ValueError):
        return False
    if stat[0] == "Z":  # ended, not yet waited for
        return False
    began = boot + int(stat[19]) / os.sysconf("SC_CLK_TCK")
    named = any(Path(argument.decode(errors="replace")).name == "sqlml" for argument in arguments)
    return (named or b"sqlml" in arguments) and began <= started_by + 1.0


def child_datasource(datasource: str | None) -> str:
    """The page's datasource URL for a process started in another folder: an embedded
    database file's relative path made absolute."""
    url = parse_url(datasource)
    if source_class(url).file_based and url.path != ":memory:":
        url = replace(url, path=str(Path(url.path).resolve()))
    return url.with_password()
