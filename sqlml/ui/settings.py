"""What a ``sqlml ui`` server was started with (``request.app.state.settings``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    """What the page reads: the datasource (its URL never leaves the server), the run
    folder of the step logs and run files, and the folder programs' relative paths start
    from; ``token``: what a browser must present (None: nothing, ``sqlml ui --no-token``);
    ``hosts``: the names the page answers to (its loopback names and its address, so that a
    web site whose name is made to point at this machine cannot use it; None: any);
    ``file_access``: whether the editor's statements may read and write this machine's files
    through the database (False: ``sqlml ui --no-file-access``)."""

    datasource: str | None
    run_dir: Path
    base_dir: Path
    token: str | None = None
    hosts: tuple[str, ...] | None = None
    file_access: bool = True
