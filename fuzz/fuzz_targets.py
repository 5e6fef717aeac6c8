"""What the fuzzers feed: sqlml's front end and its datasource URL parser.

Each target takes an input and returns normally or raises an :class:`~sqlml.errors.SqlmlError`;
anything else that escapes is a bug. The atheris scripts beside this file and the Hypothesis
tests in ``tests/reliability/test_fuzz.py`` share these targets.

A dotted estimator name such as ``mypackage.build`` imports a user's module; the targets turn
that import off, since importing whatever module a fuzzed name happens to spell runs its code.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import yaml

from sqlml.checking import check_program
from sqlml.datasources.registry import dialects
from sqlml.datasources.url import DatasourceURL, parse_url
from sqlml.errors import SqlmlError
from sqlml.grammar import parse
from sqlml.plan import dependencies
from sqlml.semantics import analyze
from sqlml.semantics.estimators import ESTIMATORS

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
DIALECTS = tuple(dialects())  # those of the registered datasources
ESTIMATOR_NAMES = tuple(ESTIMATORS)
SENTINEL_PASSWORD = "S3ntinel-pw-XYZ"
# Where fuzzed text goes in a statement: attributes, COLUMN lists, names and SELECTs.
TEMPLATES = (
    "SELECT * FROM t TO TRAIN {estimator} WITH {text} LABEL y INTO m;",
    "SELECT * FROM t TO TRAIN {estimator} COLUMN {text} LABEL y INTO m;",
    "SELECT * FROM t TO TRAIN {estimator} WITH validation.select = '{text}' LABEL y INTO m;",
    "SELECT * FROM t TO PREDICT r.y WITH {text} USING m;",
    "SELECT * FROM t TO EVALUATE m WITH {text} LABEL y INTO r;",
    "SELECT * FROM t TO EXPLAIN m WITH {text} INTO r;",
    "{text} TO TRAIN {estimator} LABEL y INTO m;",
    "SELECT * FROM t TO TRAIN {estimator} LABEL {text} INTO m;",
)


@contextmanager
def no_user_models() -> Iterator[None]:
    """Dotted estimator names that are not sqlml's are unknown, never imported."""
    with mock.patch("sqlml.statements.train.analysis.user_estimator", return_value=None):
        yield


def program(text: str, dialect: str = "duckdb") -> None:
    """Parse, analyze and order ``text`` as ``sqlml run`` does, then check it as ``sqlml check``."""
    try:
        dependencies(analyze(parse(text), dialect), dialect)
    except SqlmlError as error:
        assert error.message, "an error without a message"
    for error in check_program(text, dialect):
        assert isinstance(error, SqlmlError) and error.message


def templated(template: int, estimator: int, text: str, dialect: str = "duckdb") -> str:
    """``text`` put into one of :data:`TEMPLATES` (indexes wrap around); returns the program."""
    chosen = TEMPLATES[template % len(TEMPLATES)]
    name = ESTIMATOR_NAMES[estimator % len(ESTIMATOR_NAMES)]
    source = chosen.format(estimator=name, text=text)
    program(source, dialect)
    return source


def url(text: str) -> DatasourceURL | None:
    """Parse ``text`` as a datasource URL; the sentinel password never shows in what comes out."""
    try:
        parsed = parse_url(text)
    except SqlmlError as error:
        assert SENTINEL_PASSWORD not in error.render(), error.render()
        return None
    assert SENTINEL_PASSWORD not in str(parsed) + repr(parsed), repr(parsed)
    return parsed


def seeds() -> list[str]:
    """Every program of the grammar corpus, for a fuzzer's first inputs."""
    found = []
    for file in sorted(CORPUS.glob("*.yaml")):
        found += [entry["sql"] for entry in yaml.safe_load(file.read_text()) if "sql" in entry]
    return found
