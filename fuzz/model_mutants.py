"""Structural mutants of stored models, and the paths that load them.

Seed models are trained by sqlml (tiny: a few rows, rounds, trees, one epoch) into a
temporary DuckDB database; each mutant changes one to three things in a seed's stored bytes
where the library reads structure: XGBoost's JSON or UBJSON (tree links, parents, split
indices, array lengths and types, counts, tree groups, rounds, intercepts, huge and
negative numbers, bytes flipped or cut), scikit-learn's skops archive (schema.json and its
.npy arrays: tree nodes, shapes, dtypes, values) and Keras's .keras archive (config.json,
the weights' shapes, dtypes and values). :func:`use` loads a mutant as sqlml does (the
model store's checks, then scoring; for XGBoost also SHAP contributions, importances,
export and a training continued from it): it must return or raise a SqlmlError.

    python fuzz/model_mutants.py --seed 1 --mutants 2000 [--families xgboost,sklearn,keras]

runs mutants in this process, writing each to ``--last`` before loading it (a crash leaves
the mutant that caused it there), and prints a JSON report: the outcomes counted, and any
mutant that raised anything else. ``fuzz/fuzz_models.py`` runs it in child processes, and
``tests/reliability/test_model_fuzz.py`` runs a bounded number.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import re
import sys
import tempfile
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from sqlml.datasources import connect
from sqlml.errors import SqlmlError
from sqlml.ir import FeatureColumn
from sqlml.models import family
from sqlml.models import store as model_store
from sqlml.models.store import ModelStore, StoredModel
from sqlml.runtime.context import Context
from sqlml.runtime.features_apply import transform
from sqlml.runtime.labels import LabelEncoding

ROWS = 24
TABLE = (
    "CREATE TABLE d AS SELECT i AS x1, (i * 7) % 11 AS x2, chr((97 + i % 3)::INTEGER) AS y, "
    f"i % 2 AS b, i * 0.5 AS r FROM range({ROWS}) t(i);"
)
# The seed models of each family: name, the statement that trains it.
SEEDS = {
    "xgboost": {
        "multi": "SELECT x1, x2, y FROM d TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 2, max_depth = 3 LABEL y INTO multi;",
        "binary": "SELECT x1, x2, b FROM d TO TRAIN xgboost.gbtree WITH "
        "objective = 'binary:logistic', train.num_boost_round = 2 LABEL b INTO binary;",
        "dart": "SELECT x1, x2, r FROM d TO TRAIN xgboost.dart WITH "
        "train.num_boost_round = 2 LABEL r INTO dart;",
        "linear": "SELECT x1, x2, y FROM d TO TRAIN xgboost.gblinear WITH "
        "train.num_boost_round = 2 LABEL y INTO linear;",
        "forest": "SELECT x1, x2, b FROM d TO TRAIN XGBRFRegressor WITH "
        "n_estimators = 2 LABEL b INTO forest;",
        "pruned": "SELECT x1, x2, r FROM d TO TRAIN xgboost.gbtree WITH "
        "train.num_boost_round = 2, tree_method = 'exact', gamma = 0.5 LABEL r INTO pruned;",
    },
    "sklearn": {
        "forest": "SELECT x1, x2, y FROM d TO TRAIN sklearn.ensemble.RandomForestClassifier "
        "WITH model.n_estimators = 2, model.max_depth = 3 LABEL y INTO forest;",
        "logistic": "SELECT x1, x2, y FROM d TO TRAIN sklearn.linear_model.LogisticRegression "
        "LABEL y INTO logistic;",
        "kmeans": "SELECT x1, x2 FROM d TO TRAIN sklearn.cluster.KMeans WITH "
        "model.n_clusters = 2 INTO kmeans;",
        "isolation": "SELECT x1, x2 FROM d TO TRAIN sklearn.ensemble.IsolationForest WITH "
        "model.n_estimators = 2 INTO isolation;",
        "svm": "SELECT x1, x2 FROM d TO TRAIN sklearn.svm.OneClassSVM INTO svm;",
    },
    "keras": {
        "dnn": "SELECT x1, x2, y FROM d TO TRAIN DNNClassifier WITH model.n_classes = 3, "
        "model.hidden_units = [4], train.epoch = 1 LABEL y INTO dnn;",
    },
}
BIG = (2**31 - 1, 2**31, 2**32, 2**63 - 1, 10**30)
SMALL = (-(2**63), -(2**31), -2, -1, 0, 1, 2, 3)


@dataclass(frozen=True)
class Seed:
    """A stored model and the features of the rows it was trained on."""

    stored: StoredModel
    columns: dict[str, np.ndarray]


def seeds(folder: Path, families: list[str]) -> list[Seed]:
    """Train the seed models of ``families`` into a database in ``folder``."""
    from sqlml.cli import main

    url = f"duckdb:///{folder / 'seeds.duckdb'}"
    program = TABLE + "".join(s for f in families for s in SEEDS[f].values())
    with contextlib.redirect_stdout(sys.stderr):  # the report alone goes to standard output
        status = main(["-e", program, "--datasource", url])
    if status != 0:
        raise RuntimeError("the seed models did not train")
    datasource = connect(url)
    store = ModelStore(datasource)
    rows = datasource.execute("SELECT x1, x2, y, b, r FROM d")
    columns = {
        name: np.array([row[i] for row in rows.rows], dtype=object if name == "y" else float)
        for i, name in enumerate(("x1", "x2", "y", "b", "r"))
    }
    found = [Seed(store.load(name), columns) for f in families for name in SEEDS[f]]
    datasource.close()
    return found


def use(stored: StoredModel, columns: dict[str, np.ndarray], folder: Path) -> None:
    """Load ``stored`` as sqlml does and use it every way sqlml does; returns, or raises a
    SqlmlError."""
    metadata = stored.metadata
    model_store._check_data(stored.name, stored.version, metadata, stored.data)
    features = transform(columns, [FeatureColumn.from_dict(f) for f in metadata["features"]])
    context = Context(None)  # type: ignore[arg-type]  # scoring reads no database
    trainer: Any = family(metadata["family"]).trainer()
    trainer.scorer(context, stored.data, metadata)(features, 8)
    if metadata["family"] != "xgboost":
        return
    trainer.contributions(context, stored.data, features, metadata)
    if metadata["params"].get("booster") != "gblinear":  # gain: trees only (a known bug)
        trainer.importances(stored.data, features, metadata)
    family("xgboost").exporter(stored)(folder / "exported.ubj")
    labels = LabelEncoding.from_dict(metadata["labels"])
    y = np.arange(len(features.numbers)) % max(len(labels.classes), 2)
    attributes = {**metadata["attributes"], "train.num_boost_round": 1}
    trainer.train(context, features, y.astype(float), labels, attributes, base=stored)


# Mutations ---------------------------------------------------------------------------------


def _slots(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """The paths of every value in a decoded document (its containers' keys and indices)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _slots(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _slots(item, (*path, index))


def _get(document: Any, path: tuple) -> Any:
    for key in path:
        document = document[key]
    return document


def _set(document: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    _get(document, path[:-1])[path[-1]] = value
    return document


def _number(rng: np.random.Generator, around: int = 0) -> int | float:
    choices = [*BIG, *SMALL, around - 1, around, around + 1]
    if rng.random() < 0.1:
        return float(rng.choice([np.nan, np.inf, -np.inf, 0.5, -1e300]))
    return int(choices[rng.integers(len(choices))])


def _other(rng: np.random.Generator) -> Any:
    """A value of another type."""
    return [None, True, "x", "-1", "99999999999", {}, [], [[1]], 1.5, {"a": [1]}][rng.integers(10)]


def _mutate_array(array: np.ndarray | list, rng: np.random.Generator, size: int) -> Any:
    values = np.asarray(array)
    choice = rng.integers(8)
    if choice == 0 or not len(values):
        return values[: rng.integers(len(values) + 1)] if len(values) else _other(rng)
    if choice == 1:
        return np.concatenate([values, values[-1:]])
    if choice == 2:
        return _other(rng)
    if choice == 3 and values.dtype.kind in "iu":
        return values.astype(np.float32)
    wide = values.astype(object).copy()
    for _ in range(rng.integers(1, 3)):
        at = rng.integers(len(wide))
        wide[at] = _number(rng, int(rng.choice([at, size, len(wide)])))
    if values.dtype.kind in "iuf" and isinstance(array, np.ndarray):
        try:
            return np.array([_wrap(v, values.dtype) for v in wide], dtype=values.dtype)
        except (OverflowError, ValueError):
            return values
    return [v.item() if isinstance(v, np.generic) else v for v in wide]


def _wrap(value: Any, dtype: np.dtype) -> Any:
    if dtype.kind == "f":
        return float(value)
    if isinstance(value, float):
        return 0 if not np.isfinite(value) else int(value)
    bits = dtype.itemsize * 8
    value %= 1 << bits
    return value - (1 << bits) if dtype.kind == "i" and value >= 1 << (bits - 1) else value


def mutate_document(document: Any, rng: np.random.Generator) -> tuple[Any, str]:
    """``document`` (a decoded JSON document) with one value changed, and what changed."""
    paths = list(_slots(document))
    path = paths[rng.integers(len(paths))]
    value = _get(document, path) if path else document
    shown = "/".join(map(str, path))
    if isinstance(value, np.ndarray) or (
        isinstance(value, list) and value and all(isinstance(v, int | float) for v in value)
    ):
        return _set(document, path, _mutate_array(value, rng, len(value))), f"{shown}: values"
    if isinstance(value, str) and value.lstrip("-").isdecimal() and rng.random() < 0.8:
        new = str(_number(rng, int(value)))
        return _set(document, path, new), f"{shown}: {value} -> {new}"
    if isinstance(value, int | float) and not isinstance(value, bool) and rng.random() < 0.8:
        new = _number(rng, int(value) if isinstance(value, int) else 0)
        return _set(document, path, new), f"{shown}: {value} -> {new}"
    if path and rng.random() < 0.3:
        container = _get(document, path[:-1])
        del container[path[-1]]
        return document, f"{shown}: removed"
    if isinstance(value, list) and value and rng.random() < 0.5:
        value.append(copy.deepcopy(value[rng.integers(len(value))]))
        return document, f"{shown}: an item repeated"
    return _set(document, path, _other(rng)), f"{shown}: another type"


def _tree_mutation(document: Any, rng: np.random.Generator) -> str:
    """Change the links of one node of one tree (an XGBoost gbtree or dart document)."""
    booster = document["learner"]["gradient_booster"]
    model = booster.get("model") or booster["gbtree"]["model"]
    index = rng.integers(len(model["trees"]))
    tree = model["trees"][index]
    size = len(tree["left_children"])
    node = int(rng.integers(size))
    key = ["left_children", "right_children", "parents", "split_indices"][rng.integers(4)]
    array = np.asarray(tree[key], dtype=np.int64).copy()
    choice = rng.integers(4)
    if choice == 0:
        value = node  # itself
    elif choice == 1:
        value = int(rng.integers(size))  # another node of the tree: a loop, a shared child
    elif choice == 2:
        value = int(np.asarray(tree["parents"])[node]) if node else 0
    else:
        value = _number(rng, size)
        value = value if isinstance(value, int) else -1
    array[node] = _wrap(value, np.dtype(np.int32))
    tree[key] = array.astype(np.int32).tolist()
    return f"tree {index} {key}[{node}] = {array[node]}"


def xgboost_mutant(seed: Seed, rng: np.random.Generator) -> tuple[bytes, str]:
    """A mutant of an XGBoost seed: JSON or UBJSON, with its structure or bytes changed."""
    from sqlml.models.xgboost.checks import xgboost_document

    document = _plain(xgboost_document(seed.stored.data))
    changes = []
    tree_model = document["learner"]["gradient_booster"]["name"] != "gblinear"
    kinds = sorted(rng.random(rng.integers(1, 4)) < 0.5, reverse=True)  # links first
    for links in kinds:
        if tree_model and links:
            changes.append(_tree_mutation(document, rng))
        else:
            document, change = mutate_document(document, rng)
            changes.append(change)
    if rng.random() < 0.5:
        return json.dumps(document, default=_jsonable).encode(), "json: " + "; ".join(changes)
    data = ubjson(document)
    if rng.random() < 0.15:
        data, change = _bytes_mutation(data, rng)
        changes.append(change)
    return data, "ubjson: " + "; ".join(changes)


def _plain(value: Any) -> Any:
    """A decoded document with typed arrays kept as numpy arrays, copied."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.astype(value.dtype.newbyteorder("=")).copy()
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value))


def _bytes_mutation(data: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    at = int(rng.integers(len(data)))
    choice = rng.integers(3)
    if choice == 0:
        return data[:at], f"cut at {at}"
    if choice == 1:
        flipped = bytearray(data)
        flipped[at] = int(rng.integers(256))
        return bytes(flipped), f"byte {at} = {flipped[at]}"
    return data[:at] + bytes(rng.integers(0, 256, 4, dtype=np.uint8)) + data[
        at:
    ], f"4 bytes at {at}"


_MARKERS = {"i1": b"i", "u1": b"U", "i2": b"I", "i4": b"l", "i8": b"L", "f4": b"d", "f8": b"D"}


def ubjson(value: Any) -> bytes:
    """``value`` in UBJSON as XGBoost writes it (numpy arrays as typed arrays)."""
    out = bytearray()

    def text(string: str) -> None:
        encoded = string.encode()
        out.extend(b"L" + len(encoded).to_bytes(8, "big") + encoded)

    def write(item: Any) -> None:
        if isinstance(item, dict):
            out.extend(b"{")
            for key, child in item.items():
                text(str(key))
                write(child)
            out.extend(b"}")
        elif isinstance(item, np.ndarray) and item.dtype.kind in "iuf" and item.ndim == 1:
            kind = item.dtype.str[1:]
            out.extend(b"[$" + _MARKERS[kind] + b"#L" + len(item).to_bytes(8, "big"))
            out.extend(item.astype(item.dtype.newbyteorder(">")).tobytes())
        elif isinstance(item, list | np.ndarray):
            out.extend(b"[")
            for child in item:
                write(child)
            out.extend(b"]")
        elif isinstance(item, bool) or item is None:
            out.extend({True: b"T", False: b"F", None: b"Z"}[item])
        elif isinstance(item, int) and -(2**63) <= item < 2**63:
            out.extend(b"L" + item.to_bytes(8, "big", signed=True))
        elif isinstance(item, int | float):
            out.extend(b"D" + np.array(float(item), ">f8").tobytes())
        else:
            out.extend(b"S")
            text(str(item))

    write(value)
    return bytes(out)


def _zip_members(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return out.getvalue()


def _mutate_npy(content: bytes, rng: np.random.Generator) -> tuple[bytes, str]:
    array = np.load(io.BytesIO(content), allow_pickle=False)
    choice = rng.integers(5)
    if choice == 0 and array.size:
        array = array.reshape(-1)[: rng.integers(array.size)]
        what = "cut"
    elif choice == 1 and array.ndim:
        array = np.concatenate([array, array[-1:]])
        what = "a row repeated"
    elif choice == 2 and array.ndim == 2:
        array = array[:, : max(array.shape[1] - 1, 0)] if rng.random() < 0.5 else array.T
        what = "another shape"
    elif array.size:
        flat = array.reshape(-1).copy()
        at = int(rng.integers(flat.size))
        names = flat.dtype.names or (None,)
        field = names[rng.integers(len(names))]
        target = flat[field] if field else flat
        kind = target.dtype.kind
        value = _number(rng, at) if kind in "iuf" else None
        if value is not None:
            with contextlib.suppress(OverflowError, ValueError):
                target[at] = _wrap(value, target.dtype) if kind in "iu" else float(value)
        array = flat.reshape(array.shape)
        what = f"[{at}].{field} = {value}"
    else:
        what = "unchanged"
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue(), what


def sklearn_mutant(seed: Seed, rng: np.random.Generator) -> tuple[bytes, str]:
    """A mutant of a skops archive: schema.json or one of its arrays changed."""
    members = _zip_members(seed.stored.data)
    changes = []
    for _ in range(rng.integers(1, 3)):
        arrays = sorted(name for name in members if name.endswith(".npy"))
        if arrays and rng.random() < 0.6:
            name = arrays[rng.integers(len(arrays))]
            members[name], what = _mutate_npy(members[name], rng)
            changes.append(f"{name}: {what}")
        else:
            schema, what = mutate_document(json.loads(members["schema.json"]), rng)
            members["schema.json"] = json.dumps(schema, default=_jsonable).encode()
            changes.append(f"schema.json {what}")
    data = _zipped(members)
    if rng.random() < 0.1:
        data, what = _bytes_mutation(data, rng)
        changes.append(what)
    return data, "; ".join(changes)


def keras_mutant(seed: Seed, rng: np.random.Generator) -> tuple[bytes, str]:
    """A mutant of a .keras archive: config.json or a weight's values, shape or dtype."""
    import h5py

    members = _zip_members(seed.stored.data)
    if rng.random() < 0.5:
        config, what = mutate_document(json.loads(members["config.json"]), rng)
        members["config.json"] = json.dumps(config, default=_jsonable).encode()
        return _zipped(members), f"config.json {what}"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.h5"
        path.write_bytes(members["model.weights.h5"])
        with h5py.File(path, "r+") as weights:
            names: list[str] = []
            weights.visititems(
                lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None
            )
            name = names[rng.integers(len(names))]
            values = weights[name][()]
            mutated = _mutate_array(values.reshape(-1), rng, values.size)
            if (
                isinstance(mutated, np.ndarray)
                and mutated.size == values.size
                and rng.random() < 0.5
            ):
                mutated = mutated.reshape(values.shape)
            if not isinstance(mutated, np.ndarray) or mutated.dtype == object:
                mutated = np.zeros((3, 5), np.float32)
            del weights[name]
            weights[name] = mutated
        members["model.weights.h5"] = path.read_bytes()
    return _zipped(members), f"weights {name}: shape {getattr(mutated, 'shape', None)}"


MUTANTS: dict[str, Callable[[Seed, np.random.Generator], tuple[bytes, str]]] = {
    "xgboost": xgboost_mutant,
    "sklearn": sklearn_mutant,
    "keras": keras_mutant,
}


def run(seed: int, count: int, families: list[str], last: Path) -> dict[str, Any]:
    """``count`` mutants of the seeds of ``families`` (in turn), each written to ``last``
    before it is used; what became of them."""
    rng = np.random.default_rng(seed)
    outcomes: Counter[str] = Counter()
    unexpected: list[dict[str, str]] = []
    reasons: Counter[str] = Counter()
    examples: dict[str, str] = {}  # a mutant refused for each reason
    with tempfile.TemporaryDirectory(prefix="sqlml-model-fuzz-") as folder:
        found = seeds(Path(folder), families)
        for seed_model in found:  # every seed loads and is used as it is
            use(seed_model.stored, seed_model.columns, Path(folder))
        for number in range(count):
            chosen = found[number % len(found)]
            data, change = MUTANTS[chosen.stored.metadata["family"]](chosen, rng)
            name = f"{chosen.stored.metadata['family']}/{chosen.stored.name}"
            last.write_text(json.dumps({"seed": name, "change": change, "data": data.hex()}))
            try:
                use(replace(chosen.stored, data=data), chosen.columns, Path(folder))
                outcomes["used"] += 1
            except SqlmlError as error:
                outcomes["refused"] += 1
                reason = _reason(error.message)
                reasons[reason] += 1
                examples.setdefault(reason, f"{name}: {change}")
            except Exception as error:  # what the fuzzer looks for
                outcomes["unexpected"] += 1
                unexpected.append(
                    {
                        "seed": name,
                        "change": change,
                        "error": f"{type(error).__name__}: {error}"[:500],
                        "where": traceback.format_exc(limit=-3)[-1500:],
                    }
                )
    return {
        "outcomes": dict(outcomes),
        "reasons": dict(reasons),
        "examples": examples,
        "unexpected": unexpected,
    }


def _reason(message: str) -> str:
    """A refusal's message without the model's name and the numbers that vary."""
    return re.sub(r"\d+", "N", message.split(" cannot be used: ")[-1])[:90]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--families", default="xgboost,sklearn")
    parser.add_argument("--last", type=Path, default=Path("last-mutant.json"))
    args = parser.parse_args()
    report = run(args.seed, args.mutants, args.families.split(","), args.last)
    sys.stdout.write(json.dumps(report) + "\n")


if __name__ == "__main__":
    main()
