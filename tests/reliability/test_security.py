"""Security: hostile names, a password that must never show, and hostile stored models.

1. Table, column, model, result-column and LABEL names carrying SQL (quotes, backticks,
   semicolons, ``; DROP TABLE canary; --``) through every extended statement, on DuckDB,
   SQLite, MySQL and PostgreSQL: each is a correctly quoted object or a clean error, and a
   canary table keeps its rows.
2. A sentinel password never shows in the CLI's output (run, -e, check, compile, parse;
   success and failure), the run record, the step logs or error messages.
3. Models planted in the models table (a pickle that would write a file, .keras archives
   naming a Lambda or subprocess.Popen, an XGBoost blob that is not JSON/UBJSON, skops
   archives naming os.system, builtins.eval or another estimator) are refused with a
   ModelError and run nothing.
4. The step image and the Argo workflow run as non-root with least privilege.
"""

from __future__ import annotations

import io
import json
import pickle
import re
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import KINDS, datasource_url, import_or_skip

from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.models.store import ModelStore

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = "S3ntinel-pw-XYZ"


def dq(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def bq(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sqlml(capfd, *args: str) -> tuple[int, str]:
    """Run the sqlml command in-process; its exit status and everything it printed."""
    status = main(list(args))
    out, err = capfd.readouterr()
    return status, out + err


@pytest.fixture(params=KINDS)
def db(request, tmp_path, unique_name):
    """A database of each kind with a canary table (3 rows) and training data (40 rows).

    Yields (url, names); every table named in ``names`` is dropped afterwards.
    """
    url = datasource_url(request.param, tmp_path)
    names = {"canary": f"{unique_name}_canary", "data": f"{unique_name}_d"}
    ds = connect(url)
    ds.execute(f"CREATE TABLE {ds.quote([names['canary']])} (v INTEGER)")
    ds.execute(f"INSERT INTO {ds.quote([names['canary']])} VALUES (1), (2), (3)")
    rows = ", ".join(f"({i}, {int(i >= 20)})" for i in range(40))
    ds.execute(f"CREATE TABLE {ds.quote([names['data']])} (x INTEGER, y INTEGER)")
    ds.execute(f"INSERT INTO {ds.quote([names['data']])} VALUES {rows}")
    ds.close()
    yield url, names
    ds = connect(url)
    for table in names.values():
        ds.execute(f"DROP TABLE IF EXISTS {ds.quote([table])}")
    ds.close()


def canary_rows(url: str, names: dict[str, str]) -> list[tuple]:
    ds = connect(url)
    try:
        result = ds.execute(f"SELECT v FROM {ds.quote([names['canary']])} ORDER BY v")
        return result.rows
    finally:
        ds.close()


# 1. Names that carry SQL --------------------------------------------------------------------


def test_hostile_names_are_quoted_objects(db, capfd, unique_name):
    url, names = db
    drop = f"; DROP TABLE {names['canary']}; --"
    model = f"{unique_name}_m'{drop}"
    feature, label = f"f\"'`{drop}", f"l'{drop}"
    names |= {
        "predict": f'{unique_name}_p"{drop}',
        "evaluate": f"{unique_name}_e`{drop}",
        "explain": f"{unique_name}_x'){drop}",
    }
    result = f"y`){drop}"
    ds = connect(url)
    q = ds.quote  # the SELECTs are the database's own SQL: its own quoting
    ds.close()
    select = f"SELECT x AS {q([feature])}, y AS {q([label])} FROM {q([names['data']])}"
    features_only = f"SELECT x AS {q([feature])} FROM {q([names['data']])}"
    program = f"""
        {select} TO TRAIN xgboost.gbtree
          WITH objective = 'binary:logistic', train.num_boost_round = 10, validation.split = 0.0
          LABEL {dq(label)} INTO {dq(model)};
        SHOW TRAIN {dq(model)};
        {features_only} TO PREDICT {dq(names["predict"])}.{bq(result)}
          WITH predict.extra_outputs = 'probabilities' USING {dq(model)};
        {select} TO EVALUATE {dq(model)} LABEL {dq(label)} INTO {dq(names["evaluate"])};
        {features_only} TO EXPLAIN {dq(model)} INTO {bq(names["explain"])};
    """
    status, output = sqlml(capfd, "-e", program, "--datasource", url)
    assert status == 0, output

    ds = connect(url)
    try:
        predicted = ds.execute(f"SELECT * FROM {ds.quote([names['predict']])} ORDER BY 1")
        metrics = ds.execute(f"SELECT * FROM {ds.quote([names['evaluate']])}")
        explained = ds.execute(f"SELECT * FROM {ds.quote([names['explain']])}")
        stored = [name for name, _, _ in ModelStore(ds).list()]
    finally:
        ds.close()
    assert predicted.columns == [feature, result, f"{result}_0", f"{result}_1"]
    assert [tuple(row[:2]) for row in predicted.rows] == [(i, int(i >= 20)) for i in range(40)]
    assert all(row[3] > 0.5 for row in predicted.rows if row[1] == 1)
    accuracy = metrics.rows[0][metrics.columns.index("accuracy")]
    assert accuracy == 1.0
    assert len(explained.rows) == 1  # one feature, ranked
    assert model in stored

    status, output = sqlml(capfd, "-e", f"DROP MODEL {dq(model)};", "--datasource", url)
    assert status == 0, output
    ds = connect(url)
    assert model not in [name for name, _, _ in ModelStore(ds).list()]
    ds.close()
    assert canary_rows(url, names) == [(1,), (2,), (3,)]


def test_hostile_names_that_name_nothing_are_clean_errors(db, capfd):
    url, names = db
    drop = f"; DROP TABLE {names['canary']}; --"
    data = names["data"]
    statements = [
        f"SELECT x FROM {data} TO PREDICT p.y USING {dq('m' + drop)};",
        f"SHOW TRAIN {dq('m' + drop)};",
        f"SELECT x, y FROM {data} TO EVALUATE {bq('m`' + drop)} LABEL y INTO e;",
        f"SELECT x FROM {data} TO EXPLAIN {dq(chr(39) + drop)};",
        f"SELECT x, y FROM {data} TO TRAIN xgboost.gbtree LABEL {dq('y' + drop)} INTO m;",
        # validation.select reaches the database: it must be one SELECT
        f"SELECT x, y FROM {data} TO TRAIN xgboost.gbtree "
        f"WITH validation.select = 'SELECT x, y FROM {data}{drop}' LABEL y INTO m;",
    ]
    for statement in statements:
        status, output = sqlml(capfd, "-e", statement, "--datasource", url)
        assert status == 1, (statement, output)
        assert re.search(r"<-e>:1:\d+: error: ", output), output
        assert "Traceback" not in output, output
    drop_model = f"DROP MODEL IF EXISTS {dq('m' + drop)};"
    status, output = sqlml(capfd, "-e", drop_model, "--datasource", url)
    assert status == 0, output
    assert canary_rows(url, names) == [(1,), (2,), (3,)]


# 2. A password that never shows -----------------------------------------------------------


@pytest.fixture(params=["mysql", "postgresql"])
def sentinel_url(request, tmp_path, unique_name):
    """A server URL holding the sentinel password: on MySQL a user created for the test
    (dropped afterwards), on PostgreSQL the test server's user (its server trusts
    local connections, so any password connects)."""
    base = datasource_url(request.param, tmp_path)
    scheme, rest = base.split("://", 1)
    location = rest.split("@", 1)[-1]
    if request.param == "postgresql":
        user = rest.split("@", 1)[0].split(":", 1)[0] if "@" in rest else "postgres"
        yield f"{scheme}://{user}:{SENTINEL}@{location}"
        return
    user = f"sec_{unique_name}"
    ds = connect(base)
    ds.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{SENTINEL}'")
    ds.execute(f"GRANT ALL ON {location.rsplit('/', 1)[1]}.* TO '{user}'@'%'")
    ds.close()
    yield f"{scheme}://{user}:{SENTINEL}@{location}"
    ds = connect(base)
    ds.execute(f"DROP USER '{user}'@'%'")
    ds.close()


def test_a_sentinel_password_never_shows(sentinel_url, capfd, tmp_path, monkeypatch, unique_name):
    run_dir = tmp_path / "runs"
    monkeypatch.setenv("SQLML_RUN_DIR", str(run_dir))
    table, model = f"{unique_name}_d", f"{unique_name}_m"
    program = tmp_path / "p.sql"
    program.write_text(
        f"CREATE TABLE {table} AS SELECT 1 AS x, 0 AS y UNION ALL SELECT 2, 1 "
        "UNION ALL SELECT 3, 0 UNION ALL SELECT 4, 1;\n"
        f"SELECT x, y FROM {table} TO TRAIN xgboost.gbtree "
        "WITH objective = 'binary:logistic', train.num_boost_round = 2, validation.split = 0.0 "
        f"LABEL y INTO {model};\n"
        f"SELECT x FROM {table} TO PREDICT {table}_p.y USING {model};\n"
        f"SELECT * FROM {table}_p;\n"
    )
    bad = tmp_path / "bad.sql"
    bad.write_text(f"SELECT x FROM {table} TO PREDICT q.y USING no_such_model;\n")
    closed_port = re.sub(r":\d+/", ":1/", sentinel_url)
    commands = [
        # checked before it runs: once run, its CREATE TABLE would fail (check says so)
        ("check", str(program), "--datasource", sentinel_url),
        ("run", str(program), "--datasource", sentinel_url),
        ("-e", f"SHOW TRAIN {model}; DESCRIBE MODEL {model};", "--datasource", sentinel_url),
        ("compile", str(program), "--target", "python"),
        ("compile", str(program), "--target", "argo"),
        ("parse", str(program), "--json"),
        # failures: a failing statement, no server, no such database
        ("run", str(bad), "--datasource", sentinel_url),
        ("-e", "SELECT 1;", "--datasource", closed_port),
        ("check", str(program), "--datasource", closed_port),
        ("export", model, str(tmp_path / "m.json"), "--datasource", closed_port),
        ("run", str(program), "--datasource", sentinel_url.rsplit("/", 1)[0] + "/no_such_db"),
    ]
    if sentinel_url.startswith("mysql"):  # a wrong password: the sentinel plus a character
        commands.append(("-e", "SELECT 1;", "--datasource", sentinel_url.replace("@", "x@")))
    monkeypatch.setenv("SQLML_DATASOURCE", sentinel_url)  # compile and parse may read it
    outputs = []
    for command in commands:
        status, output = sqlml(capfd, *command)
        assert status == (0 if len(outputs) < 6 else 1), (command, output)
        assert SENTINEL not in output, output
        outputs.append(output)
    assert "***" in outputs[7], outputs[7]  # the URL, shown without its password
    if sentinel_url.startswith("mysql"):
        assert "Access denied" in outputs[-1], outputs[-1]

    logs = [path.read_text(errors="replace") for path in run_dir.rglob("*") if path.is_file()]
    assert logs, "no step logs were written"
    ds = connect(sentinel_url)
    try:
        records = [
            repr(ds.execute(f"SELECT * FROM {ds.quote([name])}").rows)
            for name in ("sqlml_runs", "sqlml_run_steps", "sqlml_model_versions")
        ]
        ModelStore(ds).drop(model)
        for name in (table, f"{table}_p"):
            ds.execute(f"DROP TABLE IF EXISTS {ds.quote([name])}")
    finally:
        ds.close()
    for text in [*logs, *records]:
        assert SENTINEL not in text


# 3. Hostile stored models -------------------------------------------------------------------


class _WritesAFile:
    """Unpickling this writes the marker file: what a pickle payload could do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('ran')",))


def _keras_archive(layer: dict) -> bytes:
    config = {
        "module": "keras",
        "class_name": "Sequential",
        "config": {"name": "s", "layers": [layer]},
        "registered_name": None,
    }
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as archive:
        archive.writestr("config.json", json.dumps(config))
        archive.writestr("metadata.json", json.dumps({"keras_version": "3.0.0"}))
    return data.getvalue()


def _payloads(marker: Path) -> dict[str, tuple[str, bytes]]:
    popen = {
        "module": "subprocess",
        "class_name": "Popen",
        "config": {"args": ["touch", str(marker)]},
        "registered_name": "Popen",
    }
    lambda_layer = {
        "module": "keras.layers",
        "class_name": "Lambda",
        "config": {"function": {"class_name": "__lambda__", "config": {"code": "eA=="}}},
        "registered_name": None,
    }
    # A Dense layer whose activation is os.system: called with the layer's input
    os_system = {
        "module": "keras.layers",
        "class_name": "Dense",
        "config": {
            "units": 1,
            "activation": {
                "module": "os",
                "class_name": "function",
                "config": "system",
                "registered_name": "function",
            },
        },
        "registered_name": None,
    }
    pickled = pickle.dumps(_WritesAFile(marker))
    return {
        "xgboost pickle": ("xgboost", pickled),
        "xgboost bytes": ("xgboost", bytes(range(256)) * 4),
        "xgboost JSON of no model": ("xgboost", b'{"learner": {}}'),
        "keras pickle": ("keras", pickled),
        "keras subprocess.Popen": ("keras", _keras_archive(popen)),
        "keras Lambda": ("keras", _keras_archive(lambda_layer)),
        "keras os.system": ("keras", _keras_archive(os_system)),
    }


def _plant_and_predict(capfd, tmp_path, families: set[str]) -> dict[str, str]:
    """Train a real model, plant each payload under its metadata, predict with each."""
    url, marker = f"duckdb:///{tmp_path / 'models.duckdb'}", tmp_path / "marker"
    program = (
        "CREATE TABLE d AS SELECT i AS x, i % 2 AS y FROM range(20) t(i);"
        "SELECT x, y FROM d TO TRAIN xgboost.gbtree WITH objective = 'binary:logistic', "
        "train.num_boost_round = 2 LABEL y INTO good;"
    )
    assert sqlml(capfd, "-e", program, "--datasource", url)[0] == 0
    ds = connect(url)
    store = ModelStore(ds)
    metadata = store.load("good").metadata
    planted = {}
    for i, (name, (family, data)) in enumerate(_payloads(marker).items()):
        if family in families:
            formats = {"xgboost": metadata["format"], "keras": "keras-v3"}
            store.save(f"evil{i}", {**metadata, "family": family, "format": formats[family]}, data)
            planted[name] = f"evil{i}"
    ds.close()
    outputs = {}
    for name, model in planted.items():
        status, output = sqlml(
            capfd, "-e", f"SELECT x FROM d TO PREDICT p.y USING {model};", "--datasource", url
        )
        assert status == 1, (name, output)
        outputs[name] = output
    assert not marker.exists(), "a stored model ran code"
    return outputs


def test_planted_xgboost_payloads_are_refused(capfd, tmp_path):
    for name, output in _plant_and_predict(capfd, tmp_path, {"xgboost"}).items():
        refused = "cannot be used: its stored model is damaged or was altered ("
        assert refused in output, (
            name,
            output,
        )
        assert "hint: train the model again" in output


@pytest.mark.keras
def test_planted_keras_payloads_are_refused(capfd, tmp_path):
    pytest.importorskip("keras")
    outputs = _plant_and_predict(capfd, tmp_path, {"keras"})
    assert "is not a .keras archive" in outputs["keras pickle"]
    popen = outputs["keras subprocess.Popen"]
    assert "names Popen (from subprocess), which could run code" in popen
    assert "names a Lambda, which could run code" in outputs["keras Lambda"]
    assert "names system (from os), which could run code" in outputs["keras os.system"]
    for output in outputs.values():
        assert "error: the stored Keras model is not loaded" in output


def _skops_tampered(data: bytes, change) -> bytes:
    """The skops archive ``data`` with ``change`` applied to its schema (a function of the
    parsed schema), written anew as skops writes it (members stored, not compressed)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    schema = json.loads(members["schema.json"])
    change(schema)
    members["schema.json"] = json.dumps(schema).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def _skops_node(schema: dict, class_name: str) -> dict:
    """The first node of the schema of the class ``class_name``."""
    pending = [schema]
    while pending:
        node = pending.pop(0)
        if isinstance(node, dict):
            if node.get("__class__") == class_name:
                return node
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    raise AssertionError(f"no {class_name} in the schema")


def test_planted_sklearn_payloads_are_refused(capfd, tmp_path):
    import_or_skip("skops")
    url, marker = f"duckdb:///{tmp_path / 'models.duckdb'}", tmp_path / "marker"
    program = (
        "CREATE TABLE d AS SELECT i AS x, i % 2 AS y FROM range(20) t(i);"
        "SELECT x, y FROM d TO TRAIN sklearn.linear_model.LogisticRegression LABEL y INTO good;"
        "SELECT x FROM d TO TRAIN sklearn.cluster.KMeans WITH model.n_clusters = 2 INTO other;"
    )
    assert sqlml(capfd, "-e", program, "--datasource", url)[0] == 0
    code = f"open({str(marker)!r}, 'w').write('ran')"

    def os_system(schema: dict) -> None:  # the estimator's class swapped for os.system
        _skops_node(schema, "LogisticRegression").update(__module__="os", __class__="system")

    def builtins_eval(schema: dict) -> None:  # a parameter rebuilt by calling eval(code)
        node = _skops_node(schema, "LogisticRegression")["content"]["content"]
        argument = {"__class__": "str", "__module__": "builtins", "__loader__": "JsonNode"}
        node["C"] = {
            "__class__": "eval",
            "__module__": "builtins",
            "__loader__": "ReduceNode",
            "__reduce__": {
                "args": {
                    "__class__": "tuple",
                    "__module__": "builtins",
                    "__loader__": "TupleNode",
                    "content": [{**argument, "content": json.dumps(code), "is_json": True}],
                }
            },
        }

    ds = connect(url)
    store = ModelStore(ds)
    good, other = store.load("good"), store.load("other")
    payloads = {
        "pickle": pickle.dumps(_WritesAFile(marker)),
        "os.system": _skops_tampered(good.data, os_system),
        "builtins.eval": _skops_tampered(good.data, builtins_eval),
        "another estimator": other.data,
    }
    for i, data in enumerate(payloads.values()):
        store.save(f"evil{i}", good.metadata, data)
    ds.close()
    outputs = {}
    for i, name in enumerate(payloads):
        predict = f"SELECT x FROM d TO PREDICT p.y USING evil{i};"
        status, outputs[name] = sqlml(capfd, "-e", predict, "--datasource", url)
        assert status == 1, (name, outputs[name])
        assert "error: the stored scikit-learn model is not loaded" in outputs[name], name
        assert "hint: train the model again" in outputs[name], name
    assert not marker.exists(), "a stored model ran code"
    assert "it is not a skops archive" in outputs["pickle"]
    assert "its schema names os.system, which sqlml does not load" in outputs["os.system"]
    assert "its schema names builtins.eval, which sqlml does not load" in outputs["builtins.eval"]
    assert (
        "it holds sklearn.cluster._kmeans.KMeans, not the "
        "sklearn.linear_model.LogisticRegression its metadata names"
    ) in outputs["another estimator"]


# 4. Least privilege on Kubernetes -----------------------------------------------------------


def test_the_step_image_runs_as_a_numeric_non_root_user():
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", dockerfile, re.MULTILINE)
    assert users and users[-1].split(":")[0].isdigit() and users[-1].split(":")[0] != "0"


def test_argo_pods_run_without_privilege(tmp_path, capfd):
    program = tmp_path / "p.sql"
    program.write_text(
        "CREATE TABLE d AS SELECT 1 AS x, 0 AS y;\n"
        "SELECT x, y FROM d TO TRAIN xgboost.gbtree LABEL y INTO m;\n"
        "SELECT x FROM d TO PREDICT p.y USING m;\n"
    )
    status, output = sqlml(capfd, "compile", str(program), "--target", "argo")
    assert status == 0, output
    workflow = yaml.safe_load(output)
    pod = workflow["spec"]["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] != 0
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    containers = [t["container"] for t in workflow["spec"]["templates"] if "container" in t]
    assert containers
    for container in containers:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"]["drop"] == ["ALL"]
        assert context.get("privileged") in (None, False)
        for variable in container.get("env", []):  # the datasource URL comes from a Secret
            assert "://" not in str(variable.get("value", "")), variable
    status, output = sqlml(capfd, "compile", str(program), "--target", "argo", "--run-as-user", "0")
    assert status != 0 and "root" in output


def test_the_kubernetes_guide_documents_least_privilege_rbac():
    guide = (ROOT / "docs" / "kubernetes.md").read_text()
    section = guide[guide.index("RBAC with least privilege") :]
    section = section.split("\n## ")[0]
    assert "kind: Role" in section and "kind: RoleBinding" in section
    assert "runAsNonRoot" in guide


def test_compiled_programs_take_the_datasource_at_run_time(tmp_path, capfd, monkeypatch):
    """The compiled Python program takes --datasource when it runs; it never embeds one."""
    monkeypatch.setenv("SQLML_DATASOURCE", f"mysql://u:{SENTINEL}@127.0.0.1:1/test")
    program = tmp_path / "p.sql"
    program.write_text("SELECT 1;\n")
    status, output = sqlml(capfd, "compile", str(program), "--target", "python")
    assert status == 0 and "[--datasource URL]" in output
    assert SENTINEL not in output and "127.0.0.1" not in output
