"""SQLFlow's sqlflow_models.GCN (the graph family): trained on a SELECT of nodes joined with
their edges, as doc/tutorial/cora-gcn.md writes it, on a synthetic citation graph of three
communities whose papers' words only hint at their community; their citations tell."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
from scipy import sparse

from sqlml.checking import check_program
from sqlml.cli import main
from sqlml.datasources import connect
from sqlml.errors import ModelError
from sqlml.models.graph import network
from sqlml.models.graph.checks import gcn_document
from sqlml.models.graph.nodes import Adjacency
from sqlml.models.store import ModelStore

COMMUNITIES, SIZE = 3, 40  # papers per community
WORDS, TOPICAL = 60, 12  # the vocabulary; each community's own words
PER_PAPER, SIGNAL = 8, 0.25  # words drawn per paper; the chance one is its community's
CITES_WITHIN, CITES_ACROSS = 0.15, 0.005  # the chance two papers cite each other

# The tutorial's SELECT, of a graph in schema ``{g}``.
JOINED = (
    "SELECT {g}.node.id, features, label as class, {g}.edge.from_node_id, {g}.edge.to_node_id "
    "FROM {g}.node LEFT JOIN {g}.edge "
    "ON ({g}.node.id = {g}.edge.from_node_id OR {g}.node.id = {g}.edge.to_node_id) "
    "ORDER BY {g}.node.id"
)
# The same nodes without their edges: the network sees the words alone.
WORDS_ONLY = (
    "SELECT id, features, label as class, CAST(NULL AS INTEGER) AS from_node_id, "
    "CAST(NULL AS INTEGER) AS to_node_id FROM {g}.node"
)
TRAIN = (
    " TO TRAIN sqlflow_models.GCN WITH model.nhid = 16, model.nclass = 3, model.epochs = 200, "
    "model.train_ratio = 0.3, model.eval_ratio = 0.2, validation.metrics = 'CategoricalAccuracy' "
    "COLUMN id, DENSE(features), from_node_id, to_node_id LABEL class INTO {model};"
)


def citation_graph(seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The node and the edge table of a graph: papers numbered at random from 100."""
    rng = np.random.default_rng(seed)
    community = np.repeat(np.arange(COMMUNITIES), SIZE)
    features = []
    for own in community:
        words = np.zeros(WORDS, dtype=int)
        for _ in range(PER_PAPER):
            topical = rng.random() < SIGNAL
            words[own * TOPICAL + rng.integers(TOPICAL) if topical else rng.integers(WORDS)] = 1
        features.append(",".join(map(str, words)))
    ids = rng.permutation(len(community)) + 100
    pairs = [
        (ids[a], ids[b])
        for a in range(len(community))
        for b in range(a + 1, len(community))
        if rng.random() < (CITES_WITHIN if community[a] == community[b] else CITES_ACROSS)
    ]
    edges = np.array(pairs, dtype=np.int64)
    nodes = {
        "id": ids.astype(np.int64),
        "features": np.array(features, dtype=object),
        "label": np.array([f"topic{c}" for c in community], dtype=object),
    }
    ends = {"from_node_id": edges[:, 0], "to_node_id": edges[:, 1]}
    return nodes, {"id": np.arange(len(edges)), **ends}


@pytest.fixture(scope="module")
def graphs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, dict[int, str]]]:
    """A database of two graphs drawn alike, ``cora`` to train on and ``fresh`` to predict,
    with the model ``gcn`` trained on ``cora``; and each graph's class by node id."""
    url = f"duckdb:///{tmp_path_factory.mktemp('gcn') / 'graphs.duckdb'}"
    truth = {}
    ds = connect(url)
    try:
        for schema, seed in (("cora", 1), ("fresh", 2)):
            nodes, edges = citation_graph(seed)
            ds.execute(f"CREATE SCHEMA {schema}")
            ds.write_table([schema, "node"], nodes, replace=True)
            ds.write_table([schema, "edge"], edges, replace=True)
            truth[schema] = dict(zip(nodes["id"].tolist(), nodes["label"].tolist(), strict=True))
    finally:
        ds.close()
    assert (
        main(["-e", JOINED.format(g="cora") + TRAIN.format(model="gcn"), "--datasource", url]) == 0
    )
    return url, truth


def run(url: str, program: str, capsys) -> str:
    status = main(["-e", program, "--datasource", url])
    _, err = capsys.readouterr()
    assert status == 0, err
    return err


def query(url: str, sql: str) -> list[tuple]:
    ds = connect(url)
    try:
        return ds.execute(sql).rows
    finally:
        ds.close()


def accuracy(url: str, table: str, truth: dict[int, str]) -> float:
    """The share of nodes given their class; every row of a node gives it the same one."""
    classes = dict(query(url, f"SELECT DISTINCT id, class FROM {table}"))
    assert len(classes) == len(truth)  # one class per node, for every node
    return float(np.mean([classes[node] == label for node, label in truth.items()]))


def test_the_citations_lift_the_accuracy_on_a_fresh_graph(graphs, capsys):
    """Trained on one graph, the GCN classifies the papers of another drawn alike (none of
    them seen in training) far better than the same network on the words alone."""
    url, truth = graphs
    run(url, WORDS_ONLY.format(g="cora") + TRAIN.format(model="words"), capsys)
    found = {}
    for name, select in (("gcn", JOINED), ("words", WORDS_ONLY)):
        predict = f" TO PREDICT {name}_predicted.class USING {name};"
        run(url, select.format(g="fresh") + predict, capsys)
        found[name] = accuracy(url, f"{name}_predicted", truth["fresh"])
    # measured: 0.98 with the citations, 0.42 with the words alone (over six pairs of
    # graphs drawn with other seeds: 0.92 to 0.99, and 0.42 to 0.58)
    assert found["gcn"] >= 0.9
    assert found["gcn"] >= found["words"] + 0.3


def test_training_reports_the_evaluation_nodes_and_the_graph(graphs):
    url, _ = graphs
    metadata = ModelStore(connect(url)).load("gcn").metadata
    params, metrics = metadata["params"], metadata["metrics"]
    assert params["nodes"] == COMMUNITIES * SIZE
    assert (params["train_nodes"], params["eval_nodes"]) == (36, 24)
    assert params["edges"] == query(url, "SELECT count(*) FROM cora.edge")[0][0]
    assert metrics["validation_accuracy"] == metrics["validation_CategoricalAccuracy"] >= 0.85
    assert metadata["validation"] is None  # no rows of the join held out


def test_to_predict_gives_each_row_of_a_node_its_class(graphs, capsys):
    url, truth = graphs
    run(url, JOINED.format(g="cora") + " TO PREDICT cora.predicted.class USING gcn;", capsys)
    rows = query(url, "SELECT count(*), count(DISTINCT id) FROM cora.predicted")[0]
    joined = query(url, f"SELECT count(*) FROM ({JOINED.format(g='cora')})")[0][0]
    assert rows == (joined, COMMUNITIES * SIZE)  # a row per row of the join, every node
    assert accuracy(url, "cora.predicted", truth["cora"]) >= 0.9


def test_a_graph_split_across_prediction_batches_is_refused(graphs, capsys):
    url, _ = graphs
    predict = " TO PREDICT cora.split.class WITH predict.batch_size = 100 USING gcn;"
    status = main(["-e", JOINED.format(g="cora") + predict, "--datasource", url])
    _, err = capsys.readouterr()
    assert status == 1
    assert "scores a graph whole" in err and "raise predict.batch_size" in err
    assert not query(
        url, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'split'"
    )[0][0]


def test_check_refuses_a_select_without_the_edge_columns_at_the_column(graphs):
    url, _ = graphs
    program = "SELECT id, features, label as class FROM cora.node\n" + TRAIN.format(model="m")
    errors = check_program(program, "duckdb", connect(url))
    column = program.split("\n")[1].index("from_node_id, to") + 1
    assert [(e.line, e.column) for e in errors] == [(2, column)]
    assert "from_node_id, to_node_id is not in the result of the SELECT" in errors[0].message


def test_the_tutorials_column_clause_reads_the_graph_columns_too(graphs, capsys):
    """The tutorial's COLUMN DENSE(features) alone: the id and edge columns the model.*_col
    attributes name are read besides it."""
    url, _ = graphs
    program = JOINED.format(g="cora") + TRAIN.format(model="m").replace(
        "COLUMN id, DENSE(features), from_node_id, to_node_id", "COLUMN DENSE(features)"
    )
    status = main(["-e", program, "--datasource", url])
    _, err = capsys.readouterr()
    assert status == 0, err
    metadata = ModelStore(connect(url)).load("m").metadata
    features = [feature["column"] for feature in metadata["features"]]
    assert features == ["features", "id", "from_node_id", "to_node_id"]


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ("model.nclass = 4", "model.nclass is 4, but the LABEL column holds 3 classes"),
        (
            "model.train_ratio = 0.9, model.eval_ratio = 0.2",
            "model.train_ratio (0.9) and model.eval_ratio (0.2) add up to more than 1",
        ),
    ],
)
def test_attributes_that_contradict_the_graph_are_refused(graphs, capsys, attributes, message):
    url, _ = graphs
    program = (
        JOINED.format(g="cora") + f" TO TRAIN sqlflow_models.GCN WITH {attributes} "
        "COLUMN id, DENSE(features), from_node_id, to_node_id LABEL class INTO refused;"
    )
    status = main(["-e", program, "--datasource", url])
    _, err = capsys.readouterr()
    assert status == 1
    assert message in err


def test_permutation_explainer_finds_the_citations_and_the_words_matter(graphs):
    """Shuffling the ids or an edge end rewires the graph; shuffling the words moves them to
    other nodes: each costs accuracy. TO EVALUATE counts the rows of the join."""
    url, _ = graphs
    source = connect(url)
    select = JOINED.format(g="cora")
    explained = main(
        [
            "-e",
            f"{select} TO EXPLAIN gcn WITH label_col = class INTO cora.explained;",
            "--datasource",
            url,
        ]
    )
    evaluated = main(
        ["-e", f"{select} TO EVALUATE gcn LABEL class INTO cora.evaluated;", "--datasource", url]
    )
    assert explained == evaluated == 0
    importance = dict(source.execute("SELECT feature, importance FROM cora.explained").rows)
    assert set(importance) == {"id", "features", "from_node_id", "to_node_id"}
    assert min(importance.values()) > 0.1
    assert source.execute("SELECT accuracy FROM cora.evaluated").rows[0][0] >= 0.9
    source.close()


def test_the_stored_model_is_json_that_runs_nothing(graphs):
    url, _ = graphs
    data = ModelStore(connect(url)).load("gcn").data
    document = json.loads(data)
    assert gcn_document(data) == document
    assert document["columns"] == {
        "model.id_col": "id",
        "model.from_node_col": "from_node_id",
        "model.to_node_col": "to_node_id",
    }
    shapes = [np.array(layer["weights"]).shape for layer in document["layers"]]
    assert shapes == [(WORDS, 16), (16, COMMUNITIES)]
    with pytest.raises(ModelError, match="not JSON"):
        gcn_document(pickle.dumps(document))
    document["layers"][1]["weights"] = document["layers"][1]["weights"][:3]
    with pytest.raises(ModelError, match="layer 2 is not 16 rows"):
        gcn_document(json.dumps(document).encode())


def test_the_gradients_are_the_loss_s_slopes():
    """The hand-written backward pass against finite differences, dropout masks fixed."""
    rng = np.random.default_rng(0)
    adjacency = Adjacency.of(12, rng.integers(0, 12, 20), rng.integers(0, 12, 20))
    x = sparse.csr_array(rng.random((12, 5)) * (rng.random((12, 5)) < 0.5))
    y, train = rng.integers(0, 3, 12), np.array([0, 2, 3, 7, 9])
    layers = network.initial([5, 4, 4, 3], rng)

    def loss(trial: list[network.Layer]) -> float:
        done = network.forward(trial, x, adjacency, 0.3, np.random.default_rng(5))
        return network.loss(trial, done, y, train, 0.01)

    done = network.forward(layers, x, adjacency, 0.3, np.random.default_rng(5))
    grads = network.gradients(layers, done, adjacency, y, train, 0.01)
    for number, (weights, bias) in enumerate(layers):
        for part, values in enumerate((weights, bias)):
            for index in np.ndindex(values.shape):
                slopes = []
                for step in (1e-6, -1e-6):
                    moved = values.copy()
                    moved[index] += step
                    trial = [list(layer) for layer in layers]
                    trial[number][part] = moved
                    slopes.append(loss([(w, b) for w, b in trial]))
                numeric = (slopes[0] - slopes[1]) / 2e-6
                assert abs(numeric - grads[number][part][index]) < 1e-7


def test_the_adjacency_is_normalised_with_self_loops():
    """D^-1/2 (A + I) D^-1/2 of a path 0-1-2 (given twice, once reversed) and a lone node 3."""
    adjacency = Adjacency.of(4, np.array([0, 1, 2]), np.array([1, 2, 1]))
    dense = np.zeros((4, 4))
    dense[adjacency.rows, adjacency.cols] = adjacency.values
    degree = np.array([2.0, 3.0, 2.0, 1.0])
    linked = np.eye(4) + np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
    assert np.allclose(dense, linked / np.sqrt(np.outer(degree, degree)))
    assert adjacency.edges == 2
    h = np.arange(8.0).reshape(4, 2)
    assert np.allclose(adjacency.propagate(h), dense @ h)
