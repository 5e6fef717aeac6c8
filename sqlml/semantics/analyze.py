"""Check a parsed program and lower it to IR statements."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from sqlml import ir
from sqlml.errors import CheckError
from sqlml.grammar import ast
from sqlml.metrics import METRICS
from sqlml.semantics import search
from sqlml.semantics.assertions import lower_assertion
from sqlml.semantics.attributes import Attr, check_attributes
from sqlml.semantics.estimators import (
    RANKING_OBJECTIVES,
    Estimator,
    closest_estimator,
    find_estimator,
    user_estimator,
)
from sqlml.semantics.feature_columns import feature_columns
from sqlml.semantics.lineage import same_table, tables_read
from sqlml.semantics.sql_check import check_query, is_query
from sqlml.statements import for_syntax, resolve
from sqlml.tables import HELPER_MARK, OWN_TABLES, is_own_table

EXTRA_OUTPUTS = ("probabilities",)
OUTPUT_REPLACE = Attr(
    "output.replace",
    "bool",
    False,
    "replace the output table even when sqlml did not write it or the SELECT reads it "
    "(without it, only a table sqlml wrote is replaced; sqlml's own tables never are)",
)
PREDICT_ATTRIBUTES = {
    "predict.batch_size": Attr(
        "predict.batch_size", "int", 65536, "rows predicted and written per batch", minimum=1
    ),
    "predict.extra_outputs": Attr(
        "predict.extra_outputs",
        "string",
        None,
        "comma-separated extra result columns; 'probabilities' (classifiers): a column per "
        "class, <result>_<class> (or <result>_prob_<i>), holding its probability",
    ),
    "output.replace": OUTPUT_REPLACE,
}
EVALUATE_ATTRIBUTES = {
    "validation.metrics": Attr(
        "validation.metrics",
        "string",
        None,
        "comma-separated metrics to compute, e.g. 'accuracy,auc' (default: all that apply): "
        + ", ".join(METRICS),
    ),
    "evaluate.plot": Attr(
        "evaluate.plot",
        "string",
        None,
        "also save a plot to this PNG file (relative paths: from the program's folder): ROC "
        "and precision-recall curves for binary classifiers, a confusion matrix for more "
        "classes, predicted against actual values for regressors; needs the plot extra",
    ),
    "output.replace": OUTPUT_REPLACE,
}
EXPLAINERS = ("TreeExplainer", "PermutationExplainer")
EXPLAIN_ATTRIBUTES = {
    "explain.seed": Attr("explain.seed", "int", 0, "seed for PermutationExplainer's shuffles"),
    "explain.plot": Attr(
        "explain.plot",
        "string",
        None,
        "also save a summary plot of the attributions to this PNG file (relative paths: from "
        "the program's folder); needs the plot extra",
    ),
    "output.replace": OUTPUT_REPLACE,
}


_WRITERS = (ir.PredictStatement, ir.EvaluateStatement, ir.ExplainStatement)


def analyze(program: ast.Program, dialect: str = "duckdb") -> list[ir.Statement]:
    """Check every statement (SQL in sqlglot's ``dialect``) and return their IR, in order."""
    width = len(str(len(program.statements)))
    return [
        resolve(for_syntax(statement).analysis)(statement, f"s{index:0{width}d}", dialect)
        for index, statement in enumerate(program.statements, 1)
    ]


# The analysis of each kind (its declaration in sqlml.statements names it): the AST node, the
# prefix of its step id and sqlglot's dialect in, the IR out.


def lower_sql(statement: ast.SqlStatement, prefix: str, dialect: str) -> ir.SqlStatement:
    if is_query(statement.text):
        check_query(statement.text, statement.pos, dialect, None)
    first_word = statement.text.split(None, 1)[0]
    return ir.SqlStatement(**_common(statement, prefix, first_word))


def lower_train(statement: ast.TrainStatement, prefix: str, dialect: str) -> ir.TrainStatement:
    check_query(statement.select, statement.pos, dialect, "TO TRAIN", read_only=True)
    step_id = f"{prefix}-train-{_slug(str(statement.into))}"
    return _checked_output(_train(statement, step_id, dialect), statement, dialect, "TO TRAIN")


def lower_predict(
    statement: ast.PredictStatement, prefix: str, dialect: str
) -> ir.PredictStatement:
    check_query(statement.select, statement.pos, dialect, "TO PREDICT", read_only=True)
    step_id = f"{prefix}-predict-{_slug(str(statement.target))}"
    return _checked_output(_predict(statement, step_id), statement, dialect, "TO PREDICT")


def lower_evaluate(
    statement: ast.EvaluateStatement, prefix: str, dialect: str
) -> ir.EvaluateStatement:
    check_query(statement.select, statement.pos, dialect, "TO EVALUATE", read_only=True)
    step_id = f"{prefix}-evaluate-{_slug(str(statement.model))}"
    return _checked_output(_evaluate(statement, step_id), statement, dialect, "TO EVALUATE")


def lower_explain(
    statement: ast.ExplainStatement, prefix: str, dialect: str
) -> ir.ExplainStatement:
    check_query(statement.select, statement.pos, dialect, "TO EXPLAIN", read_only=True)
    step_id = f"{prefix}-explain-{_slug(str(statement.model))}"
    return _checked_output(_explain(statement, step_id), statement, dialect, "TO EXPLAIN")


def lower_show_train(
    statement: ast.ShowTrainStatement, prefix: str, dialect: str
) -> ir.ShowTrainStatement:
    return ir.ShowTrainStatement(
        **_common(statement, prefix, "show-train"), model=str(statement.model)
    )


def lower_show_models(
    statement: ast.ShowModelsStatement, prefix: str, dialect: str
) -> ir.ShowModelsStatement:
    return ir.ShowModelsStatement(**_common(statement, prefix, "show-models"))


def lower_describe_model(
    statement: ast.DescribeModelStatement, prefix: str, dialect: str
) -> ir.DescribeModelStatement:
    return ir.DescribeModelStatement(
        **_common(statement, prefix, "describe-model"), model=str(statement.model)
    )


def lower_drop_model(
    statement: ast.DropModelStatement, prefix: str, dialect: str
) -> ir.DropModelStatement:
    return ir.DropModelStatement(
        **_common(statement, prefix, "drop-model"),
        model=str(statement.model),
        if_exists=statement.if_exists,
    )


def lower_assert(statement: ast.AssertStatement, prefix: str, dialect: str) -> ir.AssertStatement:
    return lower_assertion(statement, f"{prefix}-assert-{_slug(statement.condition)}", dialect)


def _checked_output(
    lowered: ir.Statement,
    statement: ast.TrainStatement
    | ast.PredictStatement
    | ast.EvaluateStatement
    | ast.ExplainStatement,
    dialect: str,
    clause: str,
) -> ir.Statement:
    """``lowered``, once the table it writes (if any) is one it may write: none of sqlml's
    own tables, and none its queries read unless ``output.replace``."""
    if isinstance(lowered, ir.SearchStatement):
        assert isinstance(statement, ast.TrainStatement)
        given = next((a for a in statement.attributes if a.name == "search.trials_table"), None)
        pos = given.pos if given else statement.into.pos
        table, replace = lowered.search["trials_table"], lowered.search["replace_table"]
        writer, fix = "the hyperparameter search", "name another table in search.trials_table"
    elif isinstance(lowered, _WRITERS) and lowered.table is not None:
        where = statement.target if isinstance(statement, ast.PredictStatement) else statement.into
        assert where is not None
        pos = where.pos
        table, replace = lowered.table, lowered.attributes["output.replace"]
        writer, fix = clause, "write to another table"
    else:
        return lowered
    _check_output(table, pos, writer, fix)
    selects = [lowered.select, lowered.attributes.get("validation.select")]
    _check_overwrite(table, selects, replace, pos, writer, dialect)
    return lowered


def _check_output(table: list[str], pos: ast.Position, writer: str, fix: str) -> None:
    """A :class:`CheckError` if ``table`` is one of sqlml's own tables or helper tables."""
    if not is_own_table(table):
        return
    name = ".".join(table)
    if HELPER_MARK in table[-1].lower():
        raise _error(
            f"{writer} would write {name}, a name sqlml keeps for its staging tables "
            f"(those holding {HELPER_MARK})",
            pos,
            f"{fix}, without {HELPER_MARK} in its name",
        )
    raise _error(
        f"{writer} would write {name}, one of the tables sqlml keeps its models and runs in",
        pos,
        f"{fix}; sqlml never writes {', '.join(OWN_TABLES)}",
    )


def _check_overwrite(
    table: list[str],
    selects: list[str | None],
    replace: bool,
    pos: ast.Position,
    writer: str,
    dialect: str,
) -> None:
    """A :class:`CheckError` if a query of the statement reads the table it writes, unless
    ``output.replace`` says to replace it (table names compare as the DAG compares them)."""
    name = ".".join(table)
    reads = [read for select in selects if select for read in tables_read(select, dialect)]
    if not replace and any(same_table(read, name) for read in reads):
        raise _error(
            f"{writer} would write {name}, a table the statement reads: the output would "
            "replace the rows it reads",
            pos,
            f"write to another table, or add WITH output.replace = true to replace {name}",
        )


def _common(statement: ast.Statement, prefix: str, what: str) -> dict:
    """The fields every IR statement has: a stable id, the text and the position."""
    return {"id": f"{prefix}-{_slug(what)}", "text": statement.text, **_where(statement.pos)}


def _train(statement: ast.TrainStatement, step_id: str, dialect: str) -> ir.TrainStatement:
    estimator = _estimator(statement.estimator)
    if statement.label is None:
        raise _error(
            f"TO TRAIN {estimator.name} needs a LABEL: the column to learn to predict",
            statement.into.pos,
            "add LABEL <column> before INTO",
        )
    plain, candidates, settings = search.split(statement.attributes)
    attributes = check_attributes(
        plain, estimator.attributes, estimator.name, estimator.open_prefix
    )
    _check_validation_select(statement, dialect, attributes)
    if statement.using is not None:
        trained = dataclasses.replace(statement, attributes=plain + candidates)
        attributes = _continued(trained, estimator.attributes, attributes)
    else:
        _check_ranking(statement, attributes)
    label = _single_part(statement.label, "LABEL column")
    task = estimator.task_for(attributes)
    searched: dict[str, Any] = {}
    if candidates or settings:
        space, settings_ = search.check(
            estimator, candidates, settings, attributes, task, str(statement.into)
        )
        searched = {"space": space, "search": settings_}
        for name in space:
            attributes.pop(name, None)
    make = ir.SearchStatement if searched else ir.TrainStatement
    return make(
        id=step_id,
        text=statement.text,
        **_where(statement.pos),
        select=statement.select,
        estimator=estimator.name,
        family=estimator.family,
        task=task,
        attributes={**attributes, **estimator.fixed},
        features=feature_columns(statement, estimator, label),
        label=label,
        model=str(statement.into),
        base_model=str(statement.using) if statement.using is not None else None,
        **searched,
    )


def _estimator(name: ast.Name) -> Estimator:
    """A known estimator, or the user's model builder a dotted name imports."""
    estimator = find_estimator(str(name))
    if estimator is None and len(name.parts) > 1:
        hint = (
            "a user model is a function (features, n_outputs, attributes) that builds Keras "
            "layers; see docs/language.md"
        )
        try:
            estimator = user_estimator(str(name))
        except TypeError as error:
            raise _error(f"estimator {name}: {error}", name.pos, hint) from None
        except (OSError, SyntaxError, ValueError) as error:  # reading the user's module
            raise _error(
                f"estimator {name}: reading its module failed: {type(error).__name__}: {error}",
                name.pos,
                hint,
            ) from None
    if estimator is None:
        closest = closest_estimator(str(name))
        raise _error(
            f"unknown estimator {name}",
            name.pos,
            f"did you mean {closest}?" if closest else "see docs/language.md for the estimators",
        )
    return estimator


def _check_ranking(statement: ast.TrainStatement, attributes: dict[str, Any]) -> None:
    """A rank:* objective and train.group_column go together."""
    ranking = attributes.get("objective") in RANKING_OBJECTIVES
    given = {attribute.name: attribute for attribute in statement.attributes}
    if ranking and "train.group_column" not in attributes:
        raise _error(
            f"objective {attributes['objective']} ranks the rows of each query; "
            "name the column holding the query id",
            given["objective"].pos,
            "add train.group_column = '<column>'",
        )
    if not ranking and "train.group_column" in attributes:
        raise _error(
            "train.group_column is for ranking",
            given["train.group_column"].pos,
            "add objective = 'rank:ndcg' (or rank:pairwise, rank:map), or remove it",
        )


def _check_validation_select(
    statement: ast.TrainStatement, dialect: str, attributes: dict[str, Any]
) -> None:
    """Check ``validation.select`` with sqlglot; a final ``;`` (and what follows) is dropped."""
    select = attributes.get("validation.select")
    if select is None:
        return
    select = select.strip()
    try:
        last = sqlglot.tokenize(select, read=dialect)[-1]
    except (TokenError, IndexError):  # check_query says what is wrong
        last = None
    if last is not None and last.token_type == TokenType.SEMICOLON:
        select = select[: last.start].rstrip()
    attributes["validation.select"] = select
    attribute = next(a for a in statement.attributes if a.name == "validation.select")
    check_query(select, _value_pos(statement, attribute), dialect, None, read_only=True)


def _value_pos(statement: ast.TrainStatement, attribute: ast.Attribute) -> ast.Position:
    """Where a quoted attribute value's text starts (past its quote and leading blanks)."""
    text, start = statement.text, attribute.pos.offset - statement.pos.offset
    match = re.compile(r"[^=]*=\s*['\"`]\s*").match(text, start)
    if match is None:
        return attribute.pos
    end = match.end()
    newlines = text.count("\n", start, end)
    column = end - text.rfind("\n", 0, end) if newlines else attribute.pos.column + end - start
    return ast.Position(attribute.pos.line + newlines, column, statement.pos.offset + end)


def _continued(
    statement: ast.TrainStatement, schema: dict[str, Attr], attributes: dict[str, Any]
) -> dict[str, Any]:
    """The attributes of a training that continues a base model: the architecture is its.

    Attributes outside the schema (a user model's own ``model.*``) are architecture too.
    """

    def architecture(name: str) -> bool:
        return name not in schema or schema[name].architecture

    for attribute in statement.attributes:
        if architecture(attribute.name):
            raise _error(
                f"attribute {attribute.name} comes from the base model {statement.using}",
                attribute.pos,
                f"remove it: TO TRAIN ... USING {statement.using} keeps the base model's "
                f"{', '.join(name for name, attr in schema.items() if attr.architecture)}",
            )
    return {name: value for name, value in attributes.items() if not architecture(name)}


def _predict(statement: ast.PredictStatement, step_id: str) -> ir.PredictStatement:
    target = statement.target
    if len(target.parts) < 2:
        raise _error(
            f"TO PREDICT needs <table>.<result column>, got {target}",
            target.pos,
            f"for example: TO PREDICT {target}_predicted.class",
        )
    attributes = check_attributes(statement.attributes, PREDICT_ATTRIBUTES, "TO PREDICT")
    extras = attributes.get("predict.extra_outputs")
    if extras is not None:
        names = [name.strip().lower() for name in extras.split(",") if name.strip()]
        unknown = [name for name in names if name not in EXTRA_OUTPUTS]
        if unknown or not names:
            attribute = next(a for a in statement.attributes if a.name == "predict.extra_outputs")
            raise _error(
                f"unknown extra output {', '.join(unknown) or repr(extras)} in "
                "predict.extra_outputs",
                attribute.pos,
                "the extra outputs are " + ", ".join(EXTRA_OUTPUTS),
            )
        attributes["predict.extra_outputs"] = ",".join(dict.fromkeys(names))
    return ir.PredictStatement(
        id=step_id,
        text=statement.text,
        **_where(statement.pos),
        select=statement.select,
        table=list(target.parts[:-1]),
        result_column=target.parts[-1],
        model=str(statement.using),
        attributes=attributes,
    )


def _evaluate(statement: ast.EvaluateStatement, step_id: str) -> ir.EvaluateStatement:
    attributes = check_attributes(statement.attributes, EVALUATE_ATTRIBUTES, "TO EVALUATE")
    metrics = attributes.get("validation.metrics")
    if metrics is not None:
        unknown = [m for m in _metric_names(metrics) if m not in METRICS]
        if unknown:
            raise _error(
                f"unknown metric {', '.join(unknown)} in validation.metrics",
                statement.attributes[0].pos,
                "the metrics are " + ", ".join(METRICS),
            )
        attributes["validation.metrics"] = ",".join(_metric_names(metrics))
    _check_plot(statement, attributes, "evaluate.plot", "evaluation")
    return ir.EvaluateStatement(
        id=step_id,
        text=statement.text,
        **_where(statement.pos),
        select=statement.select,
        model=str(statement.model),
        label=_single_part(statement.label, "LABEL"),
        table=list(statement.into.parts),
        attributes=attributes,
    )


def _check_plot(
    statement: ast.EvaluateStatement | ast.ExplainStatement,
    attributes: dict,
    name: str,
    example: str,
) -> None:
    """A :class:`CheckError` unless the plot attribute ``name`` (if given) names a .png file."""
    plot = attributes.get(name)
    if plot is not None and not plot.lower().endswith(".png"):
        where = next(a for a in statement.attributes if a.name.lower() == name)
        raise _error(
            f"{name} must name a .png file, not {plot!r}",
            where.pos,
            f"e.g. {name} = '{Path(plot).stem or example}.png'",
        )


def _metric_names(text: str) -> list[str]:
    aliases = {"f1score": "f1", "logloss": "log_loss"}
    names = [name.strip().lower() for name in text.split(",") if name.strip()]
    return [aliases.get(name, name) for name in names]


def _explain(statement: ast.ExplainStatement, step_id: str) -> ir.ExplainStatement:
    attributes = check_attributes(statement.attributes, EXPLAIN_ATTRIBUTES, "TO EXPLAIN")
    explainer = None
    if statement.explainer is not None:
        explainer = next(
            (e for e in EXPLAINERS if e.lower() == str(statement.explainer).lower()), None
        )
        if explainer is None:
            raise _error(
                f"unknown explainer {statement.explainer}",
                statement.explainer.pos,
                "the explainers are " + ", ".join(EXPLAINERS),
            )
    _check_plot(statement, attributes, "explain.plot", "explain")
    given = next((a for a in statement.attributes if a.name == "output.replace"), None)
    if statement.into is None and given is not None:
        raise _error(
            "TO EXPLAIN without INTO writes no table: output.replace has nothing to replace",
            given.pos,
            "remove it, or add INTO <table>",
        )
    return ir.ExplainStatement(
        id=step_id,
        text=statement.text,
        **_where(statement.pos),
        select=statement.select,
        model=str(statement.model),
        explainer=explainer,
        table=list(statement.into.parts) if statement.into else None,
        attributes=attributes,
    )


def _single_part(name: ast.Name, what: str) -> str:
    if len(name.parts) != 1:
        raise _error(f"{what} takes a column name, not {name}", name.pos, None)
    return name.parts[0]


def _where(pos: ast.Position) -> dict[str, int]:
    return {"line": pos.line, "column": pos.column}


def _error(message: str, pos: ast.Position, hint: str | None) -> CheckError:
    return CheckError(message, line=pos.line, column=pos.column, hint=hint)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "statement"
