"""Reading in batches with bounded memory, and training from batches (external memory)."""

from __future__ import annotations

import numpy as np
import pytest

from sqlml.runtime.datasource.base import join_batches

ROWS = 1000


@pytest.fixture
def table(datasource, unique_name):
    rng = np.random.default_rng(1)
    score = rng.standard_normal(ROWS)
    score[::7] = np.nan  # NULLs
    datasource.write_table(
        [unique_name],
        {
            "id": np.arange(ROWS, dtype=np.int64),
            "score": score,
            "tag": np.array([None if i % 5 == 0 else f"t{i % 3}" for i in range(ROWS)], object),
        },
    )
    yield unique_name
    datasource.execute(f"DROP TABLE {unique_name}")


def test_batches_are_bounded_and_join_to_the_result(datasource, table):
    select = f"SELECT id, score, tag FROM {table} ORDER BY id"
    batches = list(datasource.read_batches(select, 300))
    assert [len(batch["id"]) for batch in batches] == [300, 300, 300, 100]
    joined = join_batches(batches)
    whole = datasource.read(select)
    assert list(joined) == list(whole) == ["id", "score", "tag"]
    assert joined["id"].tolist() == whole["id"].tolist() == list(range(ROWS))
    assert np.array_equal(joined["score"], whole["score"], equal_nan=True)
    assert np.isnan(joined["score"][::7]).all()
    assert joined["tag"].tolist() == whole["tag"].tolist()
    assert joined["tag"][0] is None and joined["tag"][1] == "t1"


def test_stopping_early_leaves_the_connection_usable(datasource, table):
    batches = datasource.read_batches(f"SELECT id FROM {table} ORDER BY id", 100)
    assert next(batches)["id"].tolist() == list(range(100))
    batches.close()
    found = datasource.execute(f"SELECT COUNT(*) FROM {table}")
    assert found.rows[0][0] == ROWS


def test_an_empty_result_is_one_batch_of_empty_columns(datasource, table):
    batches = list(datasource.read_batches(f"SELECT id, tag FROM {table} WHERE id < 0", 100))
    assert len(batches) == 1
    assert list(batches[0]) == ["id", "tag"]
    assert all(len(values) == 0 for values in batches[0].values())
