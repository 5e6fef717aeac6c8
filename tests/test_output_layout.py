"""Values with line breaks: multi-line table cells that keep the grid, exact CSV and JSON."""

from __future__ import annotations

import csv
import io
import json

from sqlml.cli import main
from sqlml.datasources import ResultSet
from sqlml.runtime.output import render

MULTI = ResultSet(
    ["n", "text", "tag"],
    [[1, "x\ny\nlonger", "q"], [22, None, "r\r\ns"], [3, "p", "t"]],
)


def test_a_multi_line_cell_keeps_the_table_aligned():
    assert render(MULTI) == (
        "  n | text   | tag\n"
        "----+--------+-----\n"
        "  1 | x     +| q\n"
        "    | y     +|\n"
        "    | longer |\n"
        " 22 | NULL   | r  +\n"
        "    |        | s\n"
        "  3 | p      | t\n"
        "(3 rows)\n"
    )


def test_a_multi_line_column_name_and_a_trailing_line_break():
    result = ResultSet(["a\nb", "c"], [["v\n", 1]])
    assert render(result) == (" a+| c\n b |\n---+---\n v+| 1\n   |\n(1 row)\n")


def test_single_line_tables_are_unchanged():
    assert render(ResultSet(["name", "n"], [["ab", 1], [None, 22]])) == (
        " name |  n\n------+----\n ab   |  1\n NULL | 22\n(2 rows)\n"
    )


def test_csv_and_json_keep_line_breaks_exactly():
    text = render(MULTI, "csv")
    assert list(csv.reader(io.StringIO(text, newline=""))) == [
        ["n", "text", "tag"],
        ["1", "x\ny\nlonger", "q"],
        ["22", "", "r\r\ns"],
        ["3", "p", "t"],
    ]
    lines = render(MULTI, "json").splitlines()
    assert len(lines) == 1  # one line per result: JSON Lines
    assert json.loads(lines[0])[0]["text"] == "x\ny\nlonger"
    assert json.loads(lines[0])[1]["tag"] == "r\r\ns"


def test_show_train_shows_the_statement_on_its_lines(tmp_path, duckdb_url, capsys):
    train = (
        "SELECT x, y\n"
        "FROM tr\n"
        "TO TRAIN xgboost.gbtree\n"
        "WITH objective = 'binary:logistic', train.num_boost_round = 2\n"
        "LABEL y INTO m1"
    )
    text = (
        "CREATE TABLE tr AS SELECT i::DOUBLE AS x, i % 2 AS y FROM range(20) r(i);\n"
        f"{train};\nSHOW TRAIN m1;\n"
    )
    assert main(["-e", text, "--datasource", duckdb_url]) == 0
    assert capsys.readouterr().out == (
        " Model | Train Statement\n"
        "-------+---------------------------------------------------------------\n"
        " m1    | SELECT x, y                                                  +\n"
        "       | FROM tr                                                      +\n"
        "       | TO TRAIN xgboost.gbtree                                      +\n"
        "       | WITH objective = 'binary:logistic', train.num_boost_round = 2+\n"
        "       | LABEL y INTO m1\n"
        "(1 row)\n"
    )
