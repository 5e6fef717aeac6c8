"""The workflow core as values, and its constructs run by the local executor: when, map with
fan-in, concurrent, exec_while, retries, timeouts, exit handlers, parameters, artifacts and
prerequisites. Steps are small Python scripts run as child processes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from sqlml.backends.local.executor import LocalExecutor, RunResult
from sqlml.backends.local.record import RunRecord, StepRecord
from sqlml.datasources import connect
from sqlml.workflow import (
    ArtifactInput,
    Ref,
    Retry,
    Secret,
    Step,
    Workflow,
    WorkflowError,
    equal,
    less,
    run_container,
    run_job,
    run_script,
    script,
)
from sqlml.workflow.prerequisites import exit_commands, fetch_data, packages, start_commands


def execute(
    workflow: Workflow, tmp_path: Path, **options
) -> tuple[RunResult, dict[str, StepRecord]]:
    """Run ``workflow`` on a DuckDB file in ``tmp_path``; the result and the run record."""
    url = f"duckdb:///{tmp_path / 'run.duckdb'}"
    executor = LocalExecutor(url, tmp_path, run_dir=tmp_path / "runs", **options)
    result = executor.run(workflow)
    ds = connect(url)
    try:
        return result, RunRecord(ds).steps(result.run_id)
    finally:
        ds.close()


def py(source: str) -> str:
    return textwrap.dedent(source).strip() + "\n"


# --- values -------------------------------------------------------------------------------


def test_steps_keep_their_plain_fields_and_names_are_stable():
    workflow = Workflow("w")
    a = workflow.add(Step("a", "sql", {"text": "SELECT 1"}))
    b = workflow.add(Step("b", "sql", {"text": "SELECT 2"}, after=("a",)))
    assert [step.name for step in workflow.steps] == ["a", "b"]
    assert (a.after, b.after) == ((), ("a",))
    assert b.output() == Ref("b", "result")


def test_reading_an_output_adds_the_dependency():
    workflow = Workflow("w")
    flip = workflow.add(run_script("flip", "print('heads')"))
    heads = workflow.when(equal(flip.output(), "heads"), run_script("heads", "print(1)"))
    fan_in = workflow.add(run_script("sum", "print(2)", inputs={"x": heads.output()}))
    assert heads.after == ("flip",) and fan_in.after == ("heads",)


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (Step("a", "sql", {}), "already has a step named a"),
        (Step("c", "sql", {}, after=("nowhere",)), "unknown steps ['nowhere']"),
        (run_script("c", "", inputs={"x": Ref("ghost")}), "unknown steps ['ghost']"),
        (run_script("c", "", prerequisites=("data",)), "undefined prerequisites ['data']"),
    ],
)
def test_bad_workflows_are_workflow_errors_with_hints(step, message):
    workflow = Workflow("w")
    workflow.add(Step("a", "sql", {}))
    with pytest.raises(WorkflowError, match=message.replace("[", r"\[").replace("]", r"\]")) as e:
        workflow.add(step)
    assert e.value.hint


def test_concurrent_steps_share_their_dependencies():
    workflow = Workflow("w")
    first = workflow.add(run_script("first", "print(0)"))
    pair = workflow.concurrent([run_script("x", "1"), run_script("y", "2")], after=[first])
    assert [step.after for step in pair] == [("first",), ("first",)]


def test_retry_backoff_grows_to_its_maximum():
    retry = Retry(limit=5, backoff=0.5, factor=3, max_backoff=4)
    assert [retry.delay(n) for n in range(4)] == [0.5, 1.5, 4, 4]


def test_prerequisites_start_in_order_and_exit_in_reverse():
    one = script("one", ["a1", "a2"], ["z1"])
    two = script("two", ["b1"], ["y1", "y2"])
    assert start_commands([one, two]) == ["a1", "a2", "b1"]
    assert exit_commands([one, two]) == ["y2", "y1", "z1"]
    assert fetch_data("iris", "https://example.org/i.csv", "iris.csv").exit == ("rm -f iris.csv",)
    assert packages("np", ["numpy>=1.26"]).start == ("python -m pip install --quiet 'numpy>=1.26'",)


def test_kubernetes_fields_are_plain_values():
    job = run_job(
        "tfjob",
        {"kind": "TFJob"},
        "status.succeeded > 0",
        "status.failed > 0",
        secrets=(Secret("TOKEN", "creds", "token"),),
        node_selector={"gpu": "yes"},
        timeout=60,
        retry=Retry(limit=2),
    )
    assert job.template == "resource" and job.params["manifest"] == {"kind": "TFJob"}
    assert job.node_selector == {"gpu": "yes"} and job.timeout == 60


# --- running on the local executor ---------------------------------------------------------


def test_when_runs_only_the_branch_whose_predicate_holds(tmp_path):
    workflow = Workflow("coin")
    flip = workflow.add(run_script("flip", "print('heads')"))
    workflow.when(equal(flip.output(), "heads"), run_script("heads", "print('H')"))
    workflow.when(equal(flip.output(), "tails"), run_script("tails", "print('T')"))
    result, steps = execute(workflow, tmp_path)
    assert result.succeeded
    assert {name: step.state for name, step in steps.items()} == {
        "flip": "succeeded",
        "heads": "succeeded",
        "tails": "skipped",
    }
    assert steps["heads"].outputs == {"result": "H"}


def test_numeric_predicates_compare_numbers(tmp_path):
    workflow = Workflow("n")
    score = workflow.add(run_script("score", "print(10)"))
    workflow.when(less(score.output(), 9), run_script("low", "print(1)"))  # "10" < "9" as text
    _, steps = execute(workflow, tmp_path)
    assert steps["low"].state == "skipped"


def test_map_over_a_list_with_a_fan_in_step_receiving_every_result(tmp_path):
    workflow = Workflow("squares")
    square = workflow.map(run_script("square", "print({{item}} ** 2)"), [1, 2, 3, 4])
    workflow.add(
        run_script(
            "total",
            py("""
                import json
                print(sum(map(int, json.loads('{{inputs.parameters.squares}}'))))
            """),
            inputs={"squares": square.output()},
        )
    )
    result, steps = execute(workflow, tmp_path, jobs=2)
    assert result.succeeded
    assert json.loads(steps["square"].outputs["result"]) == ["1", "4", "9", "16"]
    assert steps["total"].outputs["result"] == "30"
    assert steps["square"].attempts == 4  # one per instance
    assert (
        sorted((tmp_path / "runs" / result.run_id).glob("square*.log"))[0].name == "square[0].log"
    )


def test_map_over_a_steps_output(tmp_path):
    workflow = Workflow("fan")
    names = workflow.add(run_script("names", "import json; print(json.dumps(['a', 'b']))"))
    upper = workflow.map(run_script("upper", "print('{{item}}'.upper())"), names.output())
    workflow.add(
        run_script("joined", "print('{{inputs.parameters.all}}')", inputs={"all": upper.output()})
    )
    _, steps = execute(workflow, tmp_path)
    assert steps["joined"].outputs["result"] == '["A", "B"]'


def test_map_over_an_output_that_is_not_a_list_fails_clearly(tmp_path):
    workflow = Workflow("fan")
    names = workflow.add(run_script("names", "print('nope')"))
    workflow.map(run_script("each", "print(1)"), names.output())
    result, steps = execute(workflow, tmp_path)
    assert not result.succeeded and "not a JSON list" in result.error.message
    assert steps["each"].state == "failed"


def test_concurrent_steps_overlap_in_time(tmp_path):
    workflow = Workflow("pair")
    workflow.concurrent(
        [run_script(name, "import time; time.sleep(0.6)") for name in ("left", "right")]
    )
    _, steps = execute(workflow, tmp_path, jobs=2)
    left, right = steps["left"], steps["right"]
    assert left.started_at < right.ended_at and right.started_at < left.ended_at
    _, serial = execute(workflow, tmp_path, jobs=1)
    first, second = sorted(serial.values(), key=lambda step: step.started_at)
    assert second.started_at >= first.ended_at


def test_exec_while_repeats_until_the_condition_fails(tmp_path):
    counter = tmp_path / "count.txt"
    source = py(f"""
        from pathlib import Path
        path = Path({str(counter)!r})
        n = int(path.read_text()) + 1 if path.exists() else 1
        path.write_text(str(n))
        print(n)
    """)
    workflow = Workflow("loop")
    workflow.exec_while(less(Ref("count"), 3), run_script("count", source))
    result, steps = execute(workflow, tmp_path)
    assert result.succeeded and steps["count"].outputs["result"] == "3"
    assert counter.read_text() == "3"


def test_exec_while_stops_at_its_iteration_limit(tmp_path):
    workflow = Workflow("loop")
    workflow.exec_while(equal(Ref("same"), "x"), run_script("same", "print('x')"), 3)
    result, steps = execute(workflow, tmp_path)
    assert steps["same"].state == "failed" and steps["same"].attempts == 3
    assert "still holds after 3 iterations" in result.error.message


FLAKY = """
from pathlib import Path
import sys
path = Path({path!r})
n = int(path.read_text()) + 1 if path.exists() else 1
path.write_text(str(n))
sys.exit(0 if n >= {succeed_at} else 'not yet')
"""


@pytest.mark.parametrize(("limit", "state", "attempts"), [(3, "succeeded", 3), (1, "failed", 2)])
def test_retries_with_backoff(tmp_path, limit, state, attempts):
    source = FLAKY.format(path=str(tmp_path / "tries"), succeed_at=3)
    workflow = Workflow("flaky")
    workflow.add(run_script("flaky", source, retry=Retry(limit=limit, backoff=0.05)))
    result, steps = execute(workflow, tmp_path)
    assert (steps["flaky"].state, steps["flaky"].attempts) == (state, attempts)
    log = (tmp_path / "runs" / result.run_id / "flaky.log").read_text()
    assert "retrying in 0.05 s" in log and "not yet" in log


def test_executor_wide_retry_applies_to_steps_without_their_own(tmp_path):
    source = FLAKY.format(path=str(tmp_path / "tries"), succeed_at=2)
    workflow = Workflow("flaky")
    workflow.add(run_script("flaky", source))
    _, steps = execute(workflow, tmp_path, retry=Retry(limit=1, backoff=0))
    assert (steps["flaky"].state, steps["flaky"].attempts) == ("succeeded", 2)


def test_timeout_stops_a_script(tmp_path):
    workflow = Workflow("slow")
    workflow.add(run_script("slow", "import time; time.sleep(3600)", timeout=0.5))
    _, steps = execute(workflow, tmp_path)
    assert steps["slow"].state == "failed"
    assert "ran longer than its timeout of 0.5 s" in steps["slow"].error
    took = steps["slow"].ended_at - steps["slow"].started_at
    assert took < 600, f"the script ran on {took:.0f} s past its timeout"  # a deadlock guard


def test_exit_handler_runs_after_a_failure_and_sees_the_status(tmp_path):
    status = tmp_path / "status.txt"
    workflow = Workflow("w")
    workflow.add(run_script("boom", "raise SystemExit('boom')"))
    workflow.on_exit(
        run_script("cleanup", f"open({str(status)!r}, 'w').write('{{{{workflow.status}}}}')")
    )
    result, steps = execute(workflow, tmp_path)
    assert not result.succeeded and "boom" in result.error.message
    assert steps["cleanup"].state == "succeeded"
    assert status.read_text() == "Failed"


def test_downstream_steps_of_a_failure_are_omitted_the_others_run(tmp_path):
    workflow = Workflow("w")
    boom = workflow.add(run_script("boom", "raise SystemExit(3)"))
    workflow.add(run_script("after_boom", "print(1)", after=[boom]))
    workflow.add(run_script("independent", "print(2)"))
    result, steps = execute(workflow, tmp_path, jobs=1)
    assert "exited with status 3" in result.error.message
    assert {name: step.state for name, step in steps.items()} == {
        "boom": "failed",
        "after_boom": "omitted",
        "independent": "succeeded",
    }


def test_parameters_and_artifacts_pass_between_steps(tmp_path):
    workflow = Workflow("w")
    produce = workflow.add(
        run_script(
            "produce",
            "open('n.txt', 'w').write('7'); open('table.csv', 'w').write('a,b\\n1,2\\n')",
            outputs={"n": "n.txt"},
            output_artifacts={"table": "table.csv"},
        )
    )
    workflow.add(
        run_container(
            "consume",
            "python:3.12-slim",
            ["python", "-c", "import sys; print(sys.argv[1], open('in/t.csv').read().split()[1])"],
            ["{{inputs.parameters.n}}"],
            inputs={"n": produce.output("n")},
            input_artifacts=(ArtifactInput("table", "in/t.csv", produce.output("table")),),
        )
    )
    result, steps = execute(workflow, tmp_path)
    assert result.succeeded, result.error
    assert steps["consume"].outputs["result"] == "7 1,2"


def test_prerequisites_run_around_the_step_in_order(tmp_path):
    order = tmp_path / "order.txt"
    workflow = Workflow("w")
    for name in ("one", "two"):
        workflow.prerequisite(
            script(name, [f"echo start-{name} >> {order}"], [f"echo exit-{name} >> {order}"])
        )
    workflow.add(
        run_script(
            "step", f"open({str(order)!r}, 'a').write('step\\n')", prerequisites=("one", "two")
        )
    )
    workflow.add(run_script("plain", "print(1)"))
    result, _ = execute(workflow, tmp_path)
    assert result.succeeded
    assert order.read_text().split() == ["start-one", "start-two", "step", "exit-two", "exit-one"]


def test_a_failing_prerequisite_fails_the_step_and_still_runs_exit_commands(tmp_path):
    marker = tmp_path / "exited"
    workflow = Workflow("w")
    workflow.prerequisite(script("bad", ["exit 4"], [f"touch {marker}"]))
    workflow.add(run_script("step", "print(1)", prerequisites=("bad",)))
    _, steps = execute(workflow, tmp_path)
    assert "prerequisite command 'exit 4' exited with status 4" in steps["step"].error
    assert marker.exists()


def test_secrets_come_from_the_environment_locally(tmp_path, monkeypatch):
    secret = Secret("SQLML_TEST_TOKEN", "creds", "token")
    workflow = Workflow("w")
    workflow.add(
        run_script(
            "use", "import os; print(len(os.environ['SQLML_TEST_TOKEN']))", secrets=(secret,)
        )
    )
    monkeypatch.delenv("SQLML_TEST_TOKEN", raising=False)
    result, _ = execute(workflow, tmp_path)
    assert "needs the secret creds/token as $SQLML_TEST_TOKEN" in result.error.message
    monkeypatch.setenv("SQLML_TEST_TOKEN", "abcd")
    result, steps = execute(workflow, tmp_path)
    assert steps["use"].outputs["result"] == "4"


def test_kubernetes_resource_steps_are_refused_locally(tmp_path):
    workflow = Workflow("w")
    workflow.add(run_job("job", {"kind": "TFJob"}, "status.succeeded > 0", "status.failed > 0"))
    result, _ = execute(workflow, tmp_path)
    assert "cannot run it" in result.error.message and "--backend argo" in result.error.hint
