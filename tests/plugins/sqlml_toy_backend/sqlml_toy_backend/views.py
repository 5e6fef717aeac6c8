"""The toy backend's runs in ``sqlml ui``: listed beside the others, with their DAG, steps
and logs, from the records in the page's run folder."""

from __future__ import annotations

from typing import Any, ClassVar

from sqlml.backends.runs import RUN_ID, RunView, RunViews, StepView, ViewError, Where
from sqlml.errors import SqlmlError
from sqlml_toy_backend.record import RUN_FILE, log, read


class ToyRunView(RunView):
    backend: ClassVar[str] = "toy"

    @property
    def badge(self) -> tuple[str, str] | None:
        return "Toy", "recorded by the toy backend"


class ToyRunViews(RunViews):
    def runs(self, where: Where) -> tuple[list[RunView], str | None]:
        found: list[RunView] = []
        for description in sorted(where.run_dir.glob(f"*/{RUN_FILE}")):
            view = _view(read(description.parent.name, where.run_dir), steps=False)
            found.append(view)
        return found, None

    def owns(self, where: Where, run_id: str) -> bool:
        return bool(RUN_ID.match(run_id)) and (where.run_dir / run_id / RUN_FILE).is_file()

    def run(self, where: Where, run_id: str) -> RunView | None:
        if not self.owns(where, run_id):
            return None
        return _view(read(run_id, where.run_dir), steps=True)

    def log(self, where: Where, run_id: str, step: str) -> str:
        try:
            recorded = read(run_id, where.run_dir)
        except SqlmlError:
            recorded = {"steps": []}
        if not any(s["name"] == step for s in recorded["steps"]):
            raise ViewError(404, "there is no such step in this run")
        return log(run_id, step, where.run_dir)


def _view(recorded: dict[str, Any], *, steps: bool) -> ToyRunView:
    run = ToyRunView(
        recorded["run_id"],
        workflow=recorded["workflow"],
        source=recorded["source"],
        started_at=recorded["started_at"],
        ended_at=recorded["ended_at"],
        state=recorded["state"],
    )
    if steps:
        run.steps = [StepView(**step) for step in recorded["steps"]]
    return run


VIEWS = ToyRunViews()
