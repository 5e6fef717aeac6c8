"""Coverage-guided fuzzing of sqlml's grammar and semantics (parse -> analyze -> check).

    python fuzz/fuzz_parser.py -max_total_time=600 [CORPUS_DIR ...]

An input is three bytes then UTF-8 text: the first byte picks a whole program (0) or one of
the statement templates (fuzz_targets.TEMPLATES: text in WITH, COLUMN, LABEL, SELECT...),
the second the SQL dialect, the third the estimator. The programs of tests/corpus/*.yaml
seed the run (from a temporary folder, after any CORPUS_DIR given, which receives the new
inputs). A crash is any exception but sqlml's own errors.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

# sqlglot is left uninstrumented: instrumenting it takes most of a minute at start.
with atheris.instrument_imports(include=["sqlml", "lark"]):
    import fuzz_targets


def test_one_input(data: bytes) -> None:
    if len(data) < 3:
        return
    mode, dialect, estimator = data[0], data[1], data[2]
    text = data[3:].decode("utf-8", "replace")
    dialect_name = fuzz_targets.DIALECTS[dialect % len(fuzz_targets.DIALECTS)]
    if mode % (len(fuzz_targets.TEMPLATES) + 1) == 0:
        fuzz_targets.program(text, dialect_name)
    else:
        fuzz_targets.templated(mode - 1, estimator, text, dialect_name)


def seed_folder() -> str:
    folder = Path(tempfile.mkdtemp(prefix="sqlml-fuzz-seeds-"))
    for i, sql in enumerate(fuzz_targets.seeds()):
        (folder / f"seed-{i:04d}").write_bytes(b"\0\0\0" + sql.encode())
    return str(folder)


def main() -> None:
    atheris.Setup([*sys.argv, seed_folder()], test_one_input)
    with fuzz_targets.no_user_models():
        atheris.Fuzz()


if __name__ == "__main__":
    main()
