"""A backend outside sqlml: registered from here, found by ``sqlml`` through the registry.

The toy backend "runs" a program by recording its plan's steps in order, "compiles" it to a
listing of them, reports any run as succeeded and has no logs nor stopping.
"""

from __future__ import annotations

import pytest

from sqlml import backends
from sqlml.backends import STATUS_COLUMNS, Backend
from sqlml.cli import main
from sqlml.datasources import ResultSet
from sqlml.plan import plan

PROGRAM = """
CREATE TABLE a AS SELECT 1 AS x;
CREATE TABLE b AS SELECT x + 1 AS y FROM a;
SELECT * FROM b;
"""


class Toy(Backend):
    name = "toy"
    target = "toy"

    def __init__(self) -> None:
        self.runs: list[list[str]] = []

    def add_options(self, parser, command):
        if command == "run":
            parser.add_argument("--shout", action="store_true", help="--backend toy: loudly")

    def compile(self, program, args):
        steps = plan(program.statements, program.dialect)
        return "".join(f"{p.id} after {','.join(p.after) or '-'}\n" for p in steps)

    def run(self, program, args, datasource, fmt, on_result=None):
        ids = [p.id for p in plan(program.statements, program.dialect)]
        self.runs.append([i.upper() for i in ids] if args.shout else ids)
        return 0

    def status(self, run, datasource, args):
        return "Succeeded", ResultSet(list(STATUS_COLUMNS), [(run, "Succeeded", None, None, "")])


@pytest.fixture
def toy():
    registered = backends.register(Toy())
    yield registered
    backends.unregister("toy")


@pytest.fixture
def program(tmp_path):
    file = tmp_path / "prog.sql"
    file.write_text(PROGRAM)
    return str(file)


def test_compile_to_the_toys_listing(toy, program, capsys):
    assert main(["compile", program, "--target", "toy"]) == 0
    assert (
        capsys.readouterr().out
        == "s1-create after -\ns2-create after s1-create\ns3-select after s2-create\n"
    )


def test_run_records_the_plans_steps_in_order(toy, program):
    assert main(["run", program, "--backend", "toy"]) == 0
    assert main(["run", program, "--backend", "toy", "--shout"]) == 0
    assert toy.runs == [
        ["s1-create", "s2-create", "s3-select"],
        ["S1-CREATE", "S2-CREATE", "S3-SELECT"],
    ]


def test_status(toy, capsys):
    assert main(["status", "r1", "--backend", "toy", "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "run r1: Succeeded\n"
    assert captured.out.splitlines()[1] == "r1,Succeeded,,,"


def test_a_command_it_lacks_is_a_clear_error(toy, capsys):
    assert main(["logs", "r1", "--backend", "toy"]) == 1
    err = capsys.readouterr().err
    assert "error: the toy backend does not support sqlml logs" in err
    assert "hint: sqlml logs works with --backend argo" in err


def test_unregistered_it_is_gone(program, capsys):
    with pytest.raises(SystemExit):
        main(["run", program, "--backend", "toy"])
    assert "invalid choice: 'toy'" in capsys.readouterr().err
