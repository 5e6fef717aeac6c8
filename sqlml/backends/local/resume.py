"""Resuming a run: each step's content hash, and whether the previous run's result stands.

A step's content hash covers its definition, the values it reads and the fingerprints of the
tables and models it reads. A resumed run skips a step that succeeded in the run it resumes
when its hash is unchanged, every table it reads has a fingerprint (one without may have
changed unseen), no step it waits for ran again and what its kind declares it writes
(models, tables, files) still exists.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from sqlml import ir
from sqlml.backends.local import record as rec
from sqlml.datasources import Datasource
from sqlml.tables import MODEL_VERSIONS
from sqlml.workflow.core import CONTAINER, RESOURCE, SCRIPT, Ref, Step


class Resume:
    """Content hashes of steps, read from ``ds``, and the skips a resumed run makes given the
    ``previous`` run's steps (none for a new run); ``note`` tells why a step runs again.
    Without ``hashed`` (a run that is not recorded) steps have no content hash."""

    def __init__(
        self,
        ds: Datasource,
        previous: Mapping[str, rec.StepRecord],
        note: Callable[[str], None],
        hashed: bool = True,
    ) -> None:
        self._ds, self._previous, self._note, self._hashed = ds, previous, note, hashed
        self._unknown: dict[str, list[str]] = {}  # step -> tables read without a fingerprint

    def content_hash(self, step: Step, resolve: Callable[[Ref], str]) -> str:
        """The step's definition, the values it reads and the fingerprints of the tables and
        models it reads (empty if not ``hashed``)."""
        if not self._hashed:
            return ""
        content: dict[str, Any] = {
            "template": step.template,
            "params": step.params,
            "inputs": {
                name: resolve(value) if isinstance(value, Ref) else value
                for name, value in step.inputs.items()
            },
            "items": resolve(step.items) if isinstance(step.items, Ref) else step.items,
            **self._fingerprints(step),
        }
        text = json.dumps(content, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def kept_outputs(
        self, step: Step, content_hash: str, states: Mapping[str, str]
    ) -> dict[str, str] | None:
        """The outputs of ``step`` in the previous run if it need not run again, else None."""
        before = self._previous.get(step.name)
        if (
            before is None
            or before.state not in (rec.SUCCEEDED, rec.CACHED)
            or before.content_hash != content_hash
            or any(states[d] == rec.SUCCEEDED for d in step.after)
        ):
            return None
        unknown = self._unknown.get(step.name)
        if unknown:
            self._note(
                f"step {step.name} runs again: the database has no fingerprint of "
                f"{', '.join(unknown)}, which may have changed"
            )
            return None
        from sqlml.backends.local.written import gone_output  # the model store: only here

        gone = gone_output(step, self._ds)
        if gone is not None:
            self._note(f"step {step.name} runs again: its {gone} is gone")
            return None
        return before.outputs

    def _fingerprints(self, step: Step) -> dict[str, dict[str, str | None]]:
        """The fingerprints of the tables and of the models a statement step reads. A model
        is fingerprinted by its own versions: the model store as a whole changes with every
        model saved, as other steps of the run train theirs (SHOW MODELS reads it whole)."""
        if step.template in (CONTAINER, SCRIPT, RESOURCE):
            return {}
        from sqlml.plan import dependencies

        statement = ir.from_dict(step.params)
        io = dependencies([statement], self._ds.dialect).io[statement.id]
        tables = set(io.reads_tables) | ({MODEL_VERSIONS} if io.reads_all_models else set())
        found = {"tables": {n: self._ds.table_fingerprint(n.split(".")) for n in sorted(tables)}}
        self._unknown[step.name] = [name for name, value in found["tables"].items() if not value]
        if io.reads_models:
            from sqlml.models.store import ModelStore  # only where a model is read

            store = ModelStore(self._ds)
            found["models"] = {name: store.fingerprint(name) for name in sorted(io.reads_models)}
        return found
