"""Every manifest sqlml emits, validated as a real API server and its controllers would.

``tests/k8s_validation.py`` checks each object against the published schemas vendored in
``tests/k8s_schemas/`` (Argo Workflows v4.1.2's full CRD with its CEL limits, the training
operator v1.9's CRDs, mpi-operator's v2beta1 CRD, Katib's OpenAPI), the naming rules of the
controllers and webhooks, and Argo's own validation. No cluster is involved: these are the
published schemas and rules, applied here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from k8s_validation import SAMPLE_WORKFLOW_UID, validate
from pod_runtime import container_env, container_process

from sqlml import ir, steps
from sqlml.backends.argo.codegen import ArgoOptions, to_argo_yaml
from sqlml.grammar import parse
from sqlml.plan import dependencies
from sqlml.semantics import analyze
from sqlml.steps import katib
from sqlml.steps.kubeflow import Replica, RunPolicy, SchedulingPolicy

pytestmark = pytest.mark.usefixtures("tfjob_family")  # TFJobRegressor: a TFJob

pytest.importorskip("hera.workflows.models")

EXAMPLES = sorted(
    path
    for path in (Path(__file__).parent.parent / "examples").glob("*.sql")
    if "load" not in path.name  # LOAD DATA scripts for MySQL, not sqlml programs
)
OPTIONS = ArgoOptions(
    image="registry.example.com/sqlml:1",
    namespace="ml",
    service_account="sqlml-runner",
    requests={"cpu": "500m", "memory": "1Gi"},
    limits={"memory": "2Gi"},
    retries=2,
    image_pull_policy="IfNotPresent",
)
EVERY_KIND = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y, 'a' AS c;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror'
  LABEL y INTO xgb_model;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  train.workers = 3 LABEL y INTO xgb_distributed;
SELECT x, y FROM train TO TRAIN TFJobRegressor WITH train.distributed = true, train.ps = 2,
  train.workers = 12 LABEL y INTO dnn_distributed;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  eta = CHOICE(0.1, 0.3), max_depth = INT_RANGE(2, 4), search.trials = 4,
  search.metric = rmse LABEL y INTO searched;
SELECT x FROM train TO PREDICT predictions.y USING xgb_model;
SELECT x, y FROM train TO EVALUATE xgb_model WITH validation.metrics = 'rmse'
  LABEL y INTO evaluation;
SELECT x FROM train TO EXPLAIN xgb_model INTO explanation;
ASSERT (SELECT count(*) FROM predictions) > 0;
SHOW TRAIN xgb_model;
SHOW MODELS;
DESCRIBE MODEL xgb_model;
DROP MODEL xgb_model;
"""


def workflow(text: str, name: str = "p", options: ArgoOptions = OPTIONS) -> dict[str, Any]:
    return yaml.safe_load(to_argo_yaml(analyze(parse(text)), name, options))


def assert_accepted(document: dict[str, Any]) -> None:
    assert validate(document) == []


def statement_tasks(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    dags = [t for t in document["spec"]["templates"] if "dag" in t]
    parts = [t for t in dags if t["name"] != "main"] or dags
    return {task["name"]: task for dag in parts for task in dag["dag"]["tasks"]}


def argument(task: dict[str, Any], name: str) -> str:
    return next(p["value"] for p in task["arguments"]["parameters"] if p["name"] == name)


@pytest.mark.parametrize("example", EXAMPLES, ids=[path.name for path in EXAMPLES])
@pytest.mark.parametrize("options", [ArgoOptions(), OPTIONS], ids=["defaults", "options"])
def test_every_example_is_accepted(example, options):
    assert_accepted(workflow(example.read_text(), example.stem, options))


def test_every_statement_kind_is_accepted():
    document = workflow(EVERY_KIND)
    assert_accepted(document)
    manifests = [
        json.loads(argument(task, "manifest").replace("{{workflow.uid}}", SAMPLE_WORKFLOW_UID))
        for task in statement_tasks(document).values()
        if task["template"] in ("resource", "resource-apply")
    ]
    assert sorted(m["kind"] for m in manifests) == ["Experiment", "TFJob", "XGBoostJob"]
    for manifest in manifests:  # also validated inside the Workflow; here on their own
        assert validate(manifest) == []


REPLICA = Replica(
    image="registry.example.com/trainer:1",
    command=("python", "train.py"),
    args=("--epochs=3",),
    env={"LOG_LEVEL": "info"},
    secret_env={"SQLML_DATASOURCE": ("sqlml-datasource", "url")},
    requests={"cpu": "1", "memory": "2Gi"},
    limits={"memory": "4Gi"},
    service_account="trainer",
    node_selector={"pool": "train"},
    image_pull_policy="Always",
)
POLICY = RunPolicy(
    clean_pod_policy="Running",
    ttl_seconds_after_finished=600,
    active_deadline_seconds=7200,
    backoff_limit=4,
    scheduling_policy=SchedulingPolicy(
        min_available=3, queue="ml", priority_class="high", min_resources={"cpu": "3"}
    ),
)


def _replicas(count: int) -> Replica:
    return Replica(**{**REPLICA.__dict__, "replicas": count})


ZOO_JOBS = {
    "TFJob": lambda: steps.tensorflow.train(
        "tf-job",
        chief=REPLICA,
        workers=_replicas(3),
        ps=_replicas(2),
        evaluator=REPLICA,
        namespace="ml",
        run_policy=POLICY,
        success_policy="AllWorkers",
        labels={"app.kubernetes.io/part-of": "sqlml"},
    ),
    "PyTorchJob": lambda: steps.pytorch.train(
        "pt-job", master=REPLICA, workers=_replicas(2), nproc_per_node="2", run_policy=POLICY
    ),
    "XGBoostJob": lambda: steps.xgboost.train(
        "xgb-job", master=REPLICA, workers=_replicas(4), run_policy=POLICY
    ),
    "MPIJob": lambda: steps.mpi.train(
        "mpi-job",
        launcher=REPLICA,
        workers=_replicas(2),
        slots_per_worker=2,
        run_policy=POLICY,
        mpi_implementation="OpenMPI",
    ),
    "Experiment": lambda: katib.run(
        "search",
        trial_spec=steps.tensorflow.train(
            "trial",
            workers=Replica(image="trainer:1", args=("--lr=${trialParameters.lr}",)),
        ).params["manifest"],
        parameters=[katib.Parameter("lr", "double", min=0.001, max=0.1)],
        trial_parameters={"lr": "lr"},
        objective_metric="accuracy",
        namespace="ml",
    ),
}


@pytest.mark.parametrize("kind", sorted(ZOO_JOBS))
def test_every_step_zoo_job_is_accepted(kind):
    manifest = ZOO_JOBS[kind]().params["manifest"]
    assert manifest["kind"] == kind
    assert validate(manifest) == []


def _independent(count: int) -> str:
    return "\n".join(f"CREATE TABLE t{i} AS SELECT {i} AS x;" for i in range(count))


def _chained(count: int) -> str:
    lines = ["CREATE TABLE t0 AS SELECT 0 AS x;"]
    lines += [f"CREATE TABLE t{i} AS SELECT x + 1 AS x FROM t{i - 1};" for i in range(1, count)]
    return "\n".join(lines)


@pytest.mark.parametrize("count", [1, 199, 200, 201, 1000])
@pytest.mark.parametrize("shape", [_independent, _chained], ids=["independent", "chained"])
def test_programs_of_any_size_are_accepted(count, shape):
    program = analyze(parse(shape(count)))
    document = yaml.safe_load(to_argo_yaml(program, "big"))
    assert_accepted(document)
    templates = {t["name"]: t for t in document["spec"]["templates"]}
    dags = {name: t["dag"]["tasks"] for name, t in templates.items() if "dag" in t}
    assert all(len(tasks) <= 200 for tasks in dags.values())
    tasks = statement_tasks(document)
    assert sorted(tasks) == sorted(statement.id for statement in program)
    if count <= 200:
        assert list(dags) == ["main"]
        return
    # Each statement runs after its prerequisites: in its part, or in a part before it.
    part_of = {
        task["name"]: part for part, members in dags.items() if part != "main" for task in members
    }
    order = {task["name"]: set(task.get("dependencies", [])) for task in dags["main"]}
    graph = dependencies(program, "duckdb")
    for statement in program:
        part = part_of[statement.id]
        for before in graph.after[statement.id]:
            if part_of[before] == part:
                assert before in tasks[statement.id].get("dependencies", [])
            else:
                assert part_of[before] in _ancestors(order, part)
    if shape is _independent:  # independent statements stay in parallel parts
        assert all(not dependencies for dependencies in order.values())


def _ancestors(order: dict[str, set[str]], part: str) -> set[str]:
    found, todo = set(), list(order[part])
    while todo:
        current = todo.pop()
        if current not in found:
            found.add(current)
            todo.extend(order[current])
    return found


@pytest.mark.parametrize(
    "name", ["2024_Q1_churn", "x" * 120, "Überraschung!", "a--b__c", "---", "9"]
)
def test_any_program_name_gives_names_the_controllers_accept(name):
    document = workflow(EVERY_KIND, name)
    assert_accepted(document)
    assert document["metadata"]["generateName"][0].isalpha()
    again = workflow(EVERY_KIND, name)
    assert again["metadata"] == document["metadata"]  # stable: the same program, the same names


@pytest.mark.parametrize(
    ("name", "prefix"),
    [
        ("Ünïcode.Names.V2", "unicode-names-v2-"),
        ("Straße_Größe", "strasse-grosse-"),
        ("prix_€", "prix-"),
        ("ﬁle①", "file1-"),
    ],
)
def test_a_program_name_keeps_its_letters_without_their_accents(name, prefix):
    document = workflow(EVERY_KIND, name)
    assert_accepted(document)
    assert document["metadata"]["generateName"] == prefix


def test_long_names_stay_distinct():
    first = workflow(EVERY_KIND, "q" * 80 + "first")["metadata"]["generateName"]
    second = workflow(EVERY_KIND, "q" * 80 + "second")["metadata"]["generateName"]
    assert first != second
    assert len(first) == len(second) == 58  # 57 and '-': 63 with the 5 generated characters


DOLLARS = """
CREATE TABLE notes AS SELECT '$(SQLML_DATASOURCE)' AS a, '$$ $ $HOME $(' AS b, 'x{{y}}' AS c;
SELECT a, length(b) AS y FROM notes TO TRAIN xgboost.gbtree WITH
  objective = 'reg:squarederror', train.workers = 2 LABEL y INTO dollar_model;
"""


def test_dollars_and_braces_in_sql_reach_the_step_unchanged():
    """The kubelet expands ``$(VAR)`` and turns ``$$`` into ``$`` in container arguments;
    Argo expands ``{{...}}`` in parameters. What the step process gets is the statement."""
    program = analyze(parse(DOLLARS))
    document = yaml.safe_load(to_argo_yaml(program, "p", OPTIONS))
    assert_accepted(document)
    secrets = {"sqlml-datasource": "mysql://root:SECRET@db/test"}
    templates = {t["name"]: t for t in document["spec"]["templates"]}
    tasks = statement_tasks(document)
    create, train = program
    # An Argo step: its template's args take the task's `ir` parameter (Argo substitutes it).
    container = templates["sql"]["container"]
    args = [
        arg.replace("{{inputs.parameters.ir}}", argument(tasks[create.id], "ir"))
        for arg in container["args"]
    ]
    argv = container_process({**container, "args": args}, container_env(container, secrets))
    assert ir.from_argument(argv[-1]) == create
    assert "SECRET" not in argv[-1]
    # A replica of the XGBoostJob.
    job = json.loads(argument(tasks[train.id], "manifest"))
    for spec in job["spec"]["xgbReplicaSpecs"].values():
        (pod,) = spec["template"]["spec"]["containers"]
        argv = container_process(pod, container_env(pod, secrets))
        assert ir.from_argument(argv[-1]) == train


def test_a_step_whose_statement_cannot_be_read_says_so(capsys):
    from sqlml.runtime import step

    assert step.main(["not base64!"]) == 2
    assert "the step's statement cannot be read" in capsys.readouterr().err


EARLY_STOPPING = """
CREATE TABLE train AS SELECT 1.0 AS x, 2.0 AS y;
SELECT x, y FROM train TO TRAIN xgboost.gbtree WITH objective = 'reg:squarederror',
  eta = CHOICE(0.1, 0.3), max_depth = INT_RANGE(2, 4), search.trials = 4,
  search.metric = rmse, search.early_stopping = medianstop{settings} LABEL y INTO searched;
"""


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ("", []),
        (
            ", search.early_stopping.min_trials = 2, search.early_stopping.start_step = 1",
            [
                {"name": "min_trials_required", "value": "2"},
                {"name": "start_step", "value": "1"},
            ],
        ),
    ],
)
def test_a_search_asks_katib_for_median_stopping(settings, expected):
    """Katib v0.19's ``spec.earlyStopping``: medianstop and the settings its service
    validates (``min_trials_required`` > 0, ``start_step`` >= 1)."""
    document = workflow(EARLY_STOPPING.format(settings=settings))
    assert_accepted(document)
    (experiment,) = [
        json.loads(argument(task, "manifest"))
        for task in statement_tasks(document).values()
        if task["template"] == "resource"
    ]
    assert validate(experiment) == []
    stopping = experiment["spec"]["earlyStopping"]
    assert stopping["algorithmName"] == "medianstop"
    assert stopping.get("algorithmSettings", []) == expected


def test_a_search_without_early_stopping_has_none():
    (experiment,) = [
        json.loads(argument(task, "manifest"))
        for task in statement_tasks(workflow(EVERY_KIND)).values()
        if task["template"] == "resource" and "Experiment" in argument(task, "manifest")
    ]
    assert "earlyStopping" not in experiment["spec"]
