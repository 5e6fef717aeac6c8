"""Coverage-guided fuzzing of the datasource URL parser (sqlml/datasources/url.py).

    python fuzz/fuzz_url.py -max_total_time=600 [CORPUS_DIR ...]

The first byte picks the form: the fuzzed text as a whole URL (even), or a server URL whose
password starts with a sentinel, ``mysql://user:S3ntinel-pw-XYZ<text>`` (odd), which must
never show in the parsed URL's text or in an error message.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["sqlml", "urllib"]):
    import fuzz_targets

SERVER_SCHEMES = ("mysql", "postgresql", "postgres", "mariadb")
SEEDS = (
    "duckdb:///sqlml.duckdb",
    "duckdb:////abs/path.duckdb",
    "sqlite:///:memory:",
    "mysql://root:pw@127.0.0.1:3306/test",
    "postgresql://user@[::1]:5432/db",
    "mariadb://u:p%40ss@host/db?x=1#y",
)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    text = data[1:].decode("utf-8", "replace")
    if data[0] % 2:
        scheme = SERVER_SCHEMES[data[0] // 2 % len(SERVER_SCHEMES)]
        text = f"{scheme}://user:{fuzz_targets.SENTINEL_PASSWORD}{text}"
    fuzz_targets.url(text)


def seed_folder() -> str:
    folder = Path(tempfile.mkdtemp(prefix="sqlml-fuzz-url-seeds-"))
    for i, seed in enumerate(SEEDS):
        (folder / f"seed-{i}").write_bytes(b"\0" + seed.encode())
        (folder / f"sentinel-{i}").write_bytes(b"\1" + b"@127.0.0.1:3306/test")
    return str(folder)


def main() -> None:
    atheris.Setup([*sys.argv, seed_folder()], test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
