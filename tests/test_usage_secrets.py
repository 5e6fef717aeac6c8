"""A usage error of any sqlml command (argparse's) never echoes a datasource URL's password."""

from __future__ import annotations

import pytest

from sqlml.cli import main
from sqlml.datasources.url import redacted_urls
from sqlml.workflow import Workflow
from sqlml.workflow_cli import main as program_main

URL = "mysql://u:S3CRET@h/db"
COMMANDS = [
    ["run", "p.sql"],
    ["check", "p.sql"],
    ["compile", "p.sql"],
    ["parse", "p.sql", "--json"],
    ["repl"],
    ["export", "m", "m.json"],
    ["status", "r"],
    ["logs", "r"],
    ["stop", "r"],
    ["ui"],
    [],
]
SHAPES = {
    "unknown option": ["--no-such-option", URL],
    "unknown option with =": [f"--no-such-option={URL}"],
    "an option the command lacks": ["--datasource", URL, "--datasource2", URL],
    "extra argument": ["p2.sql", URL],
}


TAKE_MORE_FILES = ([], ["run"], ["check"])  # an extra argument is a FILE (or a command)
CASES = [
    pytest.param(command, shape, id=f"{command[0] if command else 'sqlml'}-{shape}")
    for command in COMMANDS
    for shape in sorted(SHAPES)
    if not (shape == "extra argument" and command[:1] in TAKE_MORE_FILES)
]


@pytest.mark.parametrize(("command", "shape"), CASES)
def test_a_usage_error_hides_the_password(command, shape, capsys):
    with pytest.raises(SystemExit) as exited:
        main([*command, *SHAPES[shape]])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "error:" in err and "S3CRET" not in err, err
    assert "u:***@h/db" in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["parse", "p.sql", "--json", "--datasource", URL, "--jobs", "2"],  # parse has no jobs
        ["run", "p.sql", "--format", URL],  # a bad choice
        ["run", "p.sql", "--jobs", URL],  # a bad number
        ["ui", "--port", URL],
        ["compile", "p.sql", "--target", URL],
        ["check", "p.sql", "--dialect", URL],
        [URL],  # a bad command
        ["run", "p.sql", "--timeout", URL],
    ],
)
def test_a_bad_value_or_option_hides_the_password(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    err = capsys.readouterr().err
    assert "error:" in err and "S3CRET" not in err, err


def test_a_compiled_programs_usage_error_hides_the_password(capsys):
    with pytest.raises(SystemExit):
        program_main(Workflow("w"), argv=["--format", URL])
    err = capsys.readouterr().err
    assert "invalid choice" in err and "S3CRET" not in err, err


def test_every_url_in_a_message_is_redacted():
    text = "argument: 'postgresql://a:P1@h/db' and mysql://b:P2@h:3306/db?ssl_key_password=P3"
    shown = redacted_urls(text)
    assert not {"P1", "P2", "P3"} & set(shown.replace("/", " ").replace("=", " ").split())
    assert "postgresql://a:***@h/db" in shown and "mysql://b:***@h:3306/db" in shown
