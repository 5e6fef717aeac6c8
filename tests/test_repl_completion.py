"""The shell's completion order: the statement's own columns first, columns before keywords
where an expression starts, the statement kinds after TO, prefix matches before fuzzy ones;
and completion while typing, in a real pseudo-terminal."""

from __future__ import annotations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from sqlml.datasources import connect
from sqlml.repl.catalog import Catalog
from sqlml.repl.completion import SqlmlCompleter
from tests.test_repl import TAB, Shell

# aaa_other comes first in the catalog: it must not come first in iris_train's statements.
CATALOG = Catalog(
    tables={
        "aaa_other": [("aaa_col", "INTEGER"), ("class", "TEXT")],
        "iris_train": [("sepal_length", "DOUBLE"), ("sepal_width", "DOUBLE"), ("class", "TEXT")],
        "sales": [("amount", "DOUBLE"), ("region", "TEXT")],
    },
    models=["iris_model"],
)
IRIS = ["sepal_length", "sepal_width", "class"]
TRAIN = "SELECT * FROM iris_train TO TRAIN xgboost.gbtree "


def offered(text: str, typing: bool = False) -> list[tuple[str, str]]:
    """(completion, description) at the end of ``text``, in order: after Tab, or while typing."""
    event = CompleteEvent(text_inserted=typing, completion_requested=not typing)
    return [
        (c.text, c.display_meta_text)
        for c in SqlmlCompleter(CATALOG).get_completions(Document(text), event)
    ]


def names(text: str, typing: bool = False) -> list[str]:
    return [name for name, _ in offered(text, typing)]


def test_predict_calls_offer_the_models():
    assert offered("SELECT id, PREDICT(") == [("iris_model", "model")]
    assert names("SELECT * FROM sales WHERE predict_proba(ir") == ["iris_model"]


def test_label_and_column_offer_only_the_columns_of_the_statements_tables():
    assert offered(TRAIN + "LABEL ") == [(name, "column of iris_train") for name in IRIS]
    assert names(TRAIN + "WITH max_depth = 3 LABEL cl") == ["class"]
    # COLUMN: the columns, then the feature column functions; inside one, the columns only
    after_column = names(TRAIN + "COLUMN sepal_length, ")
    assert after_column[:4] == [*IRIS, "NUMERIC"] and "aaa_col" not in after_column
    assert names(TRAIN + "COLUMN NUMERIC(") == IRIS
    assert names("SELECT * FROM iris_train TO EVALUATE iris_model LABEL ") == IRIS
    joined = "SELECT * FROM sales JOIN iris_train ON amount = sepal_length TO TRAIN x LABEL "
    assert names(joined) == ["amount", "region", *IRIS]  # in the order the statement names them
    # a name the SELECT list gives is a column of the result: it comes first
    ratio = "SELECT *, sepal_length / sepal_width AS ratio FROM iris_train TO TRAIN x COLUMN "
    assert offered(ratio)[:2] == [
        ("ratio", "column of the SELECT"),
        ("sepal_length", "column of iris_train"),
    ]
    # a source the catalog does not know (a file, a subquery): every table's columns
    from_file = names("SELECT * FROM read_csv('iris.csv') TO TRAIN x LABEL ")
    assert from_file == ["aaa_col", "class", "sepal_length", "sepal_width", "amount", "region"]


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * FROM iris_train WHERE ",
        "SELECT * FROM iris_train WHERE sepal_length > 1 AND ",
        "SELECT * FROM iris_train WHERE class = 'a' OR ",
        "SELECT * FROM iris_train WHERE NOT ",
        "SELECT * FROM iris_train ORDER BY ",
        "SELECT class, count(*) FROM iris_train GROUP BY ",
        "SELECT class FROM iris_train GROUP BY class HAVING max(",
    ],
)
def test_columns_come_before_keywords_where_an_expression_starts(text):
    found = offered(text)
    assert found[:4] == [*((name, "column of iris_train") for name in IRIS), ("SELECT", "keyword")]
    assert "aaa_col" not in names(text)


def test_the_select_list_and_on_offer_the_statements_columns_then_keywords():
    # no table named yet: every table's columns
    assert names("SELECT ")[:7] == ["aaa_col", "class", *IRIS[:2], "amount", "region", "SELECT"]
    # going back to the SELECT list of a statement whose FROM is written: its columns only
    select_list = SqlmlCompleter(CATALOG).get_completions(
        Document("SELECT  FROM sales WHERE amount > 1; SELECT 2;", cursor_position=7),
        CompleteEvent(completion_requested=True),
    )
    assert [c.text for c in select_list][:3] == ["amount", "region", "SELECT"]
    on = names("SELECT * FROM sales JOIN iris_train ON ")
    assert on[:5] == ["amount", "region", *IRIS[:3]] and on[5] == "SELECT"
    assert names("SELECT * FROM iris_train, ") == ["aaa_other", "iris_train", "sales"]
    # after a column or a table: keywords first (FROM, AS...), then names
    assert names("SELECT sepal_length F")[0] == "FROM"
    after_table = names("SELECT * FROM iris_train ")
    assert after_table[0] == "SELECT" and after_table.index("sepal_length") > 50


def test_to_offers_the_statement_kinds_and_a_clause_its_sections_first():
    assert names("SELECT * FROM iris_train TO TR") == ["TRAIN"]
    assert names("SELECT * FROM iris_train TO ")[:4] == ["TRAIN", "PREDICT", "EVALUATE", "EXPLAIN"]
    assert {"MAXIMIZE", "MINIMIZE", "RUN"} <= set(names("SELECT * FROM t TO "))
    assert names("select * from iris_train to tr") == ["train"]  # in the case typed
    sections = names(TRAIN + "WITH max_depth = 3 ")
    assert sections[:6] == ["WITH", "COLUMN", "FOR", "LABEL", "USING", "INTO"]
    assert names(TRAIN + "LABEL class I")[0] == "INTO"


def test_prefix_matches_come_before_fuzzy_ones():
    assert names("SELECT * FROM iris_train WHERE sepwid") == ["sepal_width"]
    where_se = names("SELECT * FROM iris_train WHERE se")
    assert where_se[:4] == ["sepal_length", "sepal_width", "select", "set"]  # in the case typed
    assert set(where_se[4:]) >= {"case", "else"}  # s...e inside: after every prefix match
    # fuzzy matches: the closest to the start, then the tightest, first
    assert names("SELECT * FROM sales WHERE rg")[:1] == ["region"]
    assert names("SELECT * FROM iris_train TO TRAIN xgboost.gbtree WITH nbr") == [
        "train.num_boost_round"
    ]
    # the characters matched are marked in the menu
    (completion,) = SqlmlCompleter(CATALOG).get_completions(
        Document("SELECT * FROM iris_train WHERE sepwid"), CompleteEvent()
    )
    marked = "".join(text for style, text in completion.display if style.endswith(".character"))
    assert marked == "sepwid"
    assert names("sel")[0] == "select" and names("SEL")[0] == "SELECT"


def test_qualified_columns_complete_through_a_table_alias():
    assert names("SELECT * FROM iris_train AS t WHERE t.sep") == ["t.sepal_length", "t.sepal_width"]
    assert names("SELECT * FROM iris_train i JOIN sales s ON i.class = s.r") == ["s.region"]
    assert names("SELECT nowhere.") == []


def test_while_typing_a_blank_offers_only_names_expected_there():
    assert names("SELECT 1 AS one ", typing=True) == []  # no menu of every keyword
    assert names("SELECT * FROM iris_train; ", typing=True) == []
    assert names("SELECT 1 AS one ") != []  # Tab: everything
    assert names("SELECT * FROM ", typing=True) == ["aaa_other", "iris_train", "sales"]
    assert names(TRAIN + "LABEL ", typing=True) == IRIS
    assert names("SELECT * FROM iris_train TO ", typing=True)[0] == "TRAIN"
    assert names("SELECT 1 AS one F", typing=True)[0] == "FROM"


# --- in a pseudo-terminal ---------------------------------------------------------------------

MENU_ROW = r"\s+column of iris_train\s+"  # a column's row in the menu, after its name


@pytest.fixture
def shell(iris_duckdb_url, tmp_path):
    """The shell on the iris database, which also holds aaa_other (first in the catalog)."""
    ds = connect(iris_duckdb_url)
    ds.execute("CREATE TABLE aaa_other AS SELECT 1 AS aaa_col")
    ds.close()
    started = Shell(iris_duckdb_url, tmp_path / "history")
    yield started
    if started.child.isalive():
        started.child.terminate(force=True)


def error_line(shell: Shell, rest: str) -> str:
    """Type ``rest`` and Enter, which fails; the entry as the error shows it."""
    shell.child.send(rest + "\r")
    return shell.expect(r"1 \| ([^\r\n]*)").group(1)


def test_label_menu_shows_the_from_tables_columns_and_tab_takes_the_first(shell):
    shell.child.send(TRAIN + "WITH max_depth = -1 LABEL ")
    # shown while typing, without Tab: iris_train's columns, in order, and no other table's
    menu = shell.expect(rf"(?s)id{MENU_ROW}sepal_length{MENU_ROW}sepal_width{MENU_ROW}.*?class")
    assert "aaa_col" not in menu.string
    shell.child.send(TAB)
    shell.expect(r"id\s+column")  # the menu, its first entry chosen
    assert error_line(shell, " INTO m;").endswith("LABEL id INTO m;")
    shell.quit()


def test_to_tr_tab_takes_train(shell):
    shell.child.send("SELECT * FROM iris_train TO TR")
    shell.expect(r"TRAIN\s+train statement")
    shell.child.send(TAB)
    line = error_line(shell, " xgboost.gbtree WITH max_depth = -1 LABEL class INTO m;")
    assert line.startswith("SELECT * FROM iris_train TO TRAIN xgboost.gbtree")
    shell.quit()


def test_a_fuzzy_match_shows_while_typing_and_enter_runs_what_is_typed(shell):
    shell.child.send("SELECT count(*) AS n FROM iris_train WHERE sepwid")
    shell.expect(r"sepal_width\s+column of iris_train")  # no Tab was pressed
    shell.child.send(TAB + " = sepal_width;\r")  # Tab takes it: every row counts
    assert shell.expect(r"\bn\r?\n-+\r?\n\s*(\d+)\r?\n").group(1) == "120"
    # The menu is open but nothing is chosen in it: Enter runs the entry as typed.
    shell.child.send("\\d iris_tr")
    shell.expect(r"iris_train\s+table")
    shell.child.send("\r")
    shell.expect(r"no table iris_tr\b")
    shell.quit()
