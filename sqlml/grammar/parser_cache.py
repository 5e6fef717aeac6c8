"""The built LALR parser, kept in sqlml's cache folder so that a start loads its tables
(about 10 ms) instead of analysing the grammar again (about 80 ms).

A cached parser is the file :meth:`Lark.save` writes, named by a digest of what it was built
from (the grammar's text, the options, Lark's and Python's versions): a changed grammar never
loads a stale one, and sqlml versions sharing a home folder keep a file each. It is written
to a file of its own and renamed into place, so a start running at the same time reads it
whole or not at all (two builds of a grammar may number its states differently: halves of
two would not make a parser). A cache that cannot be read (corrupt, of an older Lark) or
written (a read-only or full disk, no home folder) only costs the time of a build, silently,
since nothing but speed depends on it.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from contextlib import suppress
from pathlib import Path

from lark import Lark, Transformer
from lark import __version__ as lark_version

from sqlml.local_files import cache_folder

OPTIONS = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": True}


def cached_parser(text: str, transformer: Transformer) -> Lark:
    """The parser of the grammar ``text`` calling ``transformer``: from the cache, else
    built and saved there."""
    path = cache_path(text)
    # Missing, unreadable, or not a parser (cut short, of an older Lark: any unpickling error).
    with suppress(Exception), path.open("rb") as file:
        # Lark.load, with the transformer Lark's own cache passes to it.
        return Lark.__new__(Lark)._load(file, transformer=transformer)
    parser = Lark(text, **OPTIONS, transformer=transformer)
    _save(parser, path)
    return parser


def cache_path(text: str) -> Path:
    """Where the parser of the grammar ``text`` is cached."""
    key = "\n".join([text, repr(sorted(OPTIONS.items())), lark_version, sys.version])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return cache_folder() / "parsers" / f"{digest}.lark"


def _save(parser: Lark, path: Path) -> None:
    """Write ``parser`` to ``path`` whole, through a file of its own; skipped on error."""
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, part = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(descriptor, "wb") as file:
                parser.save(file, exclude_options=("transformer",))  # given on load
            os.replace(part, path)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(part)  # there only if it was not renamed
