"""Run one step (or one instance of a mapped step) on this machine, with its prerequisites,
retries with backoff, a timeout per attempt, repetition (``exec_while``) and a log file.

Statements run in this process on the worker thread's own datasource connection; scripts
and container commands run as child processes in a working directory of their own.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from sqlml import ir
from sqlml.backends.local.progress_file import SUFFIX, progress_sink
from sqlml.datasources import Datasource
from sqlml.errors import InternalError, SqlmlError
from sqlml.local_files import keep_traceback, reason, warn_once
from sqlml.runtime import cancel
from sqlml.runtime.bounds import LOG_LIMIT, MESSAGE_LIMIT, clipped
from sqlml.runtime.context import RunStep
from sqlml.runtime.execute import execute
from sqlml.runtime.outcome import Outcome
from sqlml.runtime.progress import Sink
from sqlml.statements import kind_of, resolve
from sqlml.workflow.core import (
    CONTAINER,
    RESOURCE,
    SCRIPT,
    Condition,
    Ref,
    Retry,
    Step,
    WorkflowError,
)
from sqlml.workflow.prerequisites import Prerequisite, exit_commands, start_commands

_PLACEHOLDER = re.compile(r"\{\{\s*([\w.\-]+)\s*\}\}")
_UNSAFE = re.compile(r"[^\w.\-\[\]]")  # characters kept out of log file names
_UNDOING = threading.Lock()  # one at a time: a search's trials, dropped at once, conflict


class StepTimeout(WorkflowError):
    """A step ran longer than its timeout."""


@dataclass
class Task:
    """One step instance to run and everything it needs besides a datasource."""

    name: str  # the step's name, or ``name[i]`` for instance i of a mapped step
    step: Step
    values: dict[str, str]  # placeholder -> value: inputs.parameters.X, item, workflow.status
    artifacts: dict[str, Path]  # input artifact name -> the file it copies
    prerequisites: list[Prerequisite]
    resolve: Callable[[Ref], str]  # outputs of the steps it reads
    retry: Retry
    timeout: float | None
    run_dir: Path
    base_dir: Path
    run_token: cancel.Token  # cancelled when the whole run is (Ctrl-C)
    sink: Sink | None  # where a statement's progress is shown (None: nowhere)
    run: RunStep = field(default_factory=RunStep)  # the recorded run's id, step and program


@dataclass
class TaskResult:
    """How a task ended."""

    outputs: dict[str, str] = field(default_factory=dict)
    outcome: Outcome | None = None
    attempts: int = 0
    started_at: float = 0.0
    ended_at: float = 0.0
    error: SqlmlError | None = None  # a bug too: an InternalError


def run_task(task: Task, datasource: Callable[[], Datasource]) -> TaskResult:
    """Run ``task`` to its end; never raises: the error is in the result."""
    result = TaskResult(started_at=time.time())
    with StepLog(task.run_dir / (_UNSAFE.sub("_", task.name) + ".log")) as log:
        try:
            for iteration in range(task.step.max_iterations):
                if iteration:
                    _log(log, f"iteration {iteration + 1}: the repeat condition holds")
                result.outputs, result.outcome = _with_retries(task, datasource, log, result)
                condition = task.step.repeat_while
                if condition is None or not holds(condition, _own(task, result.outputs)):
                    break
            else:
                raise WorkflowError(
                    f"step {task.name}: its repeat condition still holds after "
                    f"{task.step.max_iterations} iterations",
                    hint="raise max_iterations or check the condition",
                )
        except Exception as error:
            result.error = reported(error, task.step, task.name, log)
            _log(log, f"failed: {_message(error)}", LOG_LIMIT)  # whole: the record cuts it
        else:
            _log(log, "succeeded")
    result.ended_at = time.time()
    return result


def reported(error: Exception, step: Step, name: str, log: StepLog | None = None) -> SqlmlError:
    """``error``, met running the step ``name`` of ``step``, as the run reports it: a
    :class:`SqlmlError` at the step's statement. Any other exception is a bug, reported as an
    :class:`InternalError` whose traceback ``log`` keeps (else a file of its own)."""
    if not isinstance(error, SqlmlError):
        error = InternalError.of(error, f"step {name}")
    if isinstance(error, InternalError):
        if log is not None and log.kept:
            log.write(error.details)
            error.kept_in(log.path)
        elif path := keep_traceback(error.details):
            error.kept_in(path)
    if "line" in step.params:
        error.at(step.params["line"], step.params["column"])
    return error


class StepLog(io.TextIOBase):
    """A step's log file. One that cannot be created or written (a full disk, a read-only
    folder) is dropped with one warning: the step goes on, and the run record keeps its
    state and error."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._file: IO[str] | None = None
        try:
            self._file = path.open("a", encoding="utf-8")
        except OSError as error:
            self._drop(error)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def kept(self) -> bool:
        """Whether the file is being written (not dropped)."""
        return self._file is not None

    def write(self, text: str) -> int:
        if self._file is not None:
            try:
                self._file.write(text)
            except OSError as error:
                self._drop(error)
        return len(text)

    def flush(self) -> None:
        if self._file is not None:
            try:
                self._file.flush()
            except OSError as error:
                self._drop(error)

    def close(self) -> None:
        self.flush()
        self._drop(None)
        super().close()

    def _drop(self, error: OSError | None) -> None:
        """Close the file and write no more (with a warning when ``error`` made it fail)."""
        file, self._file = self._file, None
        if file is not None:
            with suppress(OSError):
                file.close()
        if error is not None:
            warn_once(
                "logs", f"step logs are not kept: {self._path} cannot be written ({reason(error)})"
            )


def holds(condition: Condition, resolve: Callable[[Ref], str]) -> bool:
    """Whether ``condition`` holds, its Refs resolved; numbers compare as numbers."""
    left, right = (
        resolve(side) if isinstance(side, Ref) else side
        for side in (condition.left, condition.right)
    )
    left_number, right_number = _number(left), _number(right)
    if left_number is not None and right_number is not None:
        left, right = left_number, right_number
    else:
        left, right = _text(left), _text(right)
    match condition.op:
        case "==":
            return left == right
        case "!=":
            return left != right
        case "<":
            return left < right
        case "<=":
            return left <= right
        case ">":
            return left > right
    return left >= right


def substitute(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{{name}}`` of ``values`` replaced; other braces left as they are."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def _with_retries(
    task: Task, datasource: Callable[[], Datasource], log: IO[str], result: TaskResult
) -> tuple[dict[str, str], Outcome | None]:
    for retry in range(task.retry.limit + 1):
        result.attempts += 1
        _log(log, f"attempt {result.attempts}")
        try:
            return _attempt(task, datasource, log)
        except SqlmlError as error:
            _log(log, f"attempt {result.attempts} failed: {_message(error)}")
            if retry == task.retry.limit or task.run_token.stopped:
                raise
            delay = task.retry.delay(retry)
            _log(log, f"retrying in {delay:g} s")
            time.sleep(delay)
    raise AssertionError("unreachable")


def _attempt(
    task: Task, datasource: Callable[[], Datasource], log: IO[str]
) -> tuple[dict[str, str], Outcome | None]:
    step = task.step
    if step.template == RESOURCE:
        raise WorkflowError(
            f"step {task.name} creates a Kubernetes resource: the local executor cannot run it",
            hint="run the workflow with --backend argo",
        )
    statement = step.template not in (CONTAINER, SCRIPT)
    workdir = task.base_dir if statement else task.run_dir / "work" / task.name
    workdir.mkdir(parents=True, exist_ok=True)
    env = _environment(task)
    for artifact in step.input_artifacts:
        target = workdir / artifact.path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(task.artifacts[artifact.name], target)
    try:
        for command in start_commands(task.prerequisites):
            _shell(command, workdir, env, log, task)
        if statement:
            outcome = _statement(task, datasource(), log)
            return {"result": _first_value(outcome), **outcome.outputs()}, outcome
        stdout = _process(task, workdir, env, log)
        return _outputs(task, workdir, stdout), None
    finally:
        for command in exit_commands(task.prerequisites):
            try:
                _shell(command, workdir, env, log, task)
            except SqlmlError as error:
                _log(log, f"exit command failed: {_message(error)}")


def _statement(task: Task, datasource: Datasource, log: IO[str]) -> Outcome:
    """Run the statement (its progress kept beside its log for ``sqlml ui``); past the
    timeout, ask the database to stop it."""
    params = task.step.params
    if task.step.items is not None:  # a mapped statement: its {{item...}} placeholders filled
        params = _substituted(params, task.values)
    statement = ir.from_dict(params)
    token = cancel.Token(parent=task.run_token)
    timer = None
    if task.timeout is not None:

        def stop() -> None:
            token.cancel(f"it ran longer than its timeout of {task.timeout:g} s")
            datasource.interrupt()  # a statement running in the database stops too

        timer = threading.Timer(task.timeout, stop)
        timer.daemon = True
        timer.start()
    try:
        progress = task.run_dir / (_UNSAFE.sub("_", task.name) + SUFFIX)
        sink = progress_sink(task.sink, progress, log)
        outcome = execute(statement, datasource, token=token, sink=sink, log=log, run=task.run)
    except SqlmlError as error:  # an interrupted statement fails with the database's error
        if token.cancelled:
            raise _timeout(task) from None
        if not task.run_token.stopped:
            raise
        on_cancel = kind_of(statement).on_cancel
        if on_cancel is not None:  # what the stopped step leaves behind (a search's trials)
            with _UNDOING:
                undone = resolve(on_cancel)(statement, datasource)
            if undone:
                _log(log, undone)
        raise _cancelled(task.run_token).at(error.line, error.column) from None
    finally:
        if timer is not None:
            timer.cancel()
        with suppress(OSError):  # a stage a failure left open
            progress.unlink(missing_ok=True)
    if outcome.summary:
        _log(log, outcome.summary)
    if outcome.result is not None:
        _log(log, f"{len(outcome.result.rows)} rows")
    return outcome


def _cancelled(run_token: cancel.Token) -> cancel.Cancelled:
    """The error of a statement the run's cancellation stopped, without a hint: the run
    itself says how to resume it."""
    error = cancel.stopped_error(run_token)
    error.hint = None
    return error


def _substituted(value: Any, values: Mapping[str, str]) -> Any:
    """``value`` with :func:`substitute` applied to every string in it."""
    if isinstance(value, str):
        return substitute(value, values)
    if isinstance(value, dict):
        return {key: _substituted(item, values) for key, item in value.items()}
    if isinstance(value, list):
        return [_substituted(item, values) for item in value]
    return value


def _process(task: Task, workdir: Path, env: dict[str, str], log: IO[str]) -> str:
    """Run the script or command; its standard output."""
    import subprocess  # here: a run of statements only starts no process

    params = task.step.params
    command = [_program(part) for part in params["command"]]
    if task.step.template == SCRIPT:
        source = workdir / "step_script"
        source.write_text(substitute(params["source"], task.values), encoding="utf-8")
        argv = [*command, str(source)]
    else:
        argv = [*command, *params["args"]]
        if not argv:
            raise WorkflowError(
                f"container step {task.name} has no command: locally, it needs one",
                hint="give run_container a command",
            )
    argv = [substitute(part, task.values) for part in argv]
    _log(log, f"running {argv}")
    try:
        done = subprocess.run(
            argv, cwd=workdir, env=env, capture_output=True, text=True, timeout=task.timeout
        )
    except subprocess.TimeoutExpired as expired:
        _log(log, _decoded(expired.stdout) + _decoded(expired.stderr))
        raise _timeout(task) from None
    except OSError as error:
        raise WorkflowError(
            f"step {task.name} cannot start {argv[0]}: {error}",
            hint="locally, the step's command must exist on this machine",
        ) from None
    log.write(done.stdout + done.stderr)
    if done.returncode:
        tail = done.stderr.strip().splitlines()[-1:] or ["no error output"]
        raise WorkflowError(
            f"step {task.name} exited with status {done.returncode}: {tail[0]}",
            hint=f"see its log in {task.run_dir}",
        )
    return done.stdout


def _shell(command: str, workdir: Path, env: dict[str, str], log: IO[str], task: Task) -> None:
    import subprocess

    command = substitute(command, task.values)
    _log(log, f"$ {command}")
    done = subprocess.run(
        ["/bin/sh", "-c", command], cwd=workdir, env=env, capture_output=True, text=True
    )
    log.write(done.stdout + done.stderr)
    if done.returncode:
        raise WorkflowError(
            f"step {task.name}: prerequisite command {command!r} exited with status "
            f"{done.returncode}",
            hint=f"see the step's log in {task.run_dir}",
        )


def _environment(task: Task) -> dict[str, str]:
    env = dict(os.environ)
    for secret in task.step.secrets:
        if secret.env not in env:
            raise WorkflowError(
                f"step {task.name} needs the secret {secret.name}/{secret.key} as ${secret.env}",
                hint=f"locally, set the environment variable {secret.env}",
            )
    extra = task.step.params.get("env", {}) if task.step.template in (CONTAINER, SCRIPT) else {}
    env.update({key: substitute(value, task.values) for key, value in extra.items()})
    # Scripts started as `python` find the running interpreter's packages.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _outputs(task: Task, workdir: Path, stdout: str) -> dict[str, str]:
    outputs = {"result": stdout.strip()}
    for name, path in task.step.outputs.items():
        file = workdir / path
        if not file.is_file():
            raise WorkflowError(
                f"step {task.name} did not write its output {name} to {path}",
                hint="write the output parameter's file before the step ends",
            )
        outputs[name] = file.read_text(encoding="utf-8").strip()
    for name, path in task.step.output_artifacts.items():
        file = workdir / path
        if not file.is_file():
            raise WorkflowError(
                f"step {task.name} did not write its artifact {name} to {path}",
                hint="write the artifact's file before the step ends",
            )
        stored = task.run_dir / "artifacts" / task.name / name
        stored.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(file, stored)
        outputs[name] = str(stored)
    return outputs


def _own(task: Task, outputs: dict[str, str]) -> Callable[[Ref], str]:
    """Resolve Refs to the task's own step from ``outputs``, the others as the task does."""

    def resolve(ref: Ref) -> str:
        if ref.step != task.step.name:
            return task.resolve(ref)
        if ref.name not in outputs:
            raise WorkflowError(f"step {task.name} has no output {ref.name}")
        return outputs[ref.name]

    return resolve


def _first_value(outcome: Outcome) -> str:
    """A statement's ``result``: the first value of its rows, or its summary."""
    if outcome.result is not None and outcome.result.rows and outcome.result.rows[0]:
        return _text(outcome.result.rows[0][0])
    return outcome.summary or ""


def _timeout(task: Task) -> StepTimeout:
    return StepTimeout(
        f"step {task.name} ran longer than its timeout of {task.timeout:g} s",
        hint="raise the step's timeout or make it faster",
    )


def _program(part: str) -> str:
    return sys.executable if part == "python" else part


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _decoded(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def _message(error: BaseException) -> str:
    return error.message if isinstance(error, SqlmlError) else repr(error)


def _log(log: IO[str], message: str, limit: int = MESSAGE_LIMIT) -> None:
    log.write(f"{time.strftime('%H:%M:%S')} {clipped(message, limit)}\n")
    log.flush()
