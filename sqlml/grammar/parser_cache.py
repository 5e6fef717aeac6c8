"""The built LALR parser, kept in sqlml's cache folder so that a start loads its tables
(about 10 ms) instead of analysing the grammar again (about 80 ms).

A cached parser is what :meth:`Lark.save` holds (Lark's serialised rules, terminals and
parse table), written as JSON, not pickled as Lark's own cache does: loading it runs no
code, as with sqlml's input cache. It is named by a digest of what it was built from (the
grammar's text, the options, Lark's and Python's versions): a changed grammar never loads a
stale one, and sqlml versions sharing a home folder keep a file each. It is written to a file
of its own and renamed into place, so a start running at the same time reads it whole or
not at all (two builds of a grammar may number its states differently: halves of two would
not make a parser). A cache that cannot be read (corrupt, of an older Lark) or written (a
read-only or full disk, no home folder) only costs the time of a build, silently, since
nothing but speed depends on it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from lark import Lark, Transformer
from lark import __version__ as lark_version
from lark.grammar import Rule
from lark.lexer import TerminalDef

from sqlml.local_files import cache_folder

OPTIONS = {"parser": "lalr", "lexer": "contextual", "maybe_placeholders": True}
# A JSON object standing for a dict with keys that are not strings (the parse table's
# states and token numbers), as its [key, value] pairs.
_PAIRS = "\x00pairs"


def cached_parser(text: str, transformer: Transformer) -> Lark:
    """The parser of the grammar ``text`` calling ``transformer``: from the cache, else
    built and saved there."""
    path = cache_path(text)
    # Missing, unreadable, or not a parser (cut short, of an older Lark): built again.
    with suppress(Exception):
        saved = json.loads(path.read_text(encoding="utf-8"), object_hook=_from_json)
        # Lark.load with a transformer, as Lark's own cache loads it.
        return Lark.__new__(Lark)._load(saved, transformer=transformer)
    parser = Lark(text, **OPTIONS, transformer=transformer)
    _save(parser, path)
    return parser


def cache_path(text: str) -> Path:
    """Where the parser of the grammar ``text`` is cached."""
    key = "\n".join([text, repr(sorted(OPTIONS.items())), lark_version, sys.version])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return cache_folder() / "parsers" / f"{digest}.json"


def _save(parser: Lark, path: Path) -> None:
    """Write ``parser`` to ``path`` whole, through a file of its own; skipped on error."""
    data, memo = parser.memo_serialize([TerminalDef, Rule])  # what Lark.save pickles
    data["options"] = {k: v for k, v in data["options"].items() if k != "transformer"}
    text = json.dumps(_to_json({"data": data, "memo": memo}), separators=(",", ":"))
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor, part = tempfile.mkstemp(dir=path.parent, suffix=".part")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                file.write(text)
            os.replace(part, path)
        finally:
            with suppress(FileNotFoundError):
                os.unlink(part)  # there only if it was not renamed


def _to_json(value: Any) -> Any:
    """``value`` (dicts, lists, tuples, strings, numbers) as JSON holds it: tuples as lists,
    a dict with keys that are not strings as a ``_PAIRS`` object."""
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: _to_json(item) for key, item in value.items()}
        return {_PAIRS: [[key, _to_json(item)] for key, item in value.items()]}
    if isinstance(value, list | tuple):
        return [_to_json(item) for item in value]
    return value


def _from_json(found: dict[str, Any]) -> dict[Any, Any]:
    return dict(found[_PAIRS]) if _PAIRS in found else found
