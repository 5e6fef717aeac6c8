"""One attempt of an Argo resource step against the loopback stand-in (tests/kube_standin.py,
NOT a cluster), as Argo v4.1.2 runs it:

- the controller substitutes the task's arguments, the Workflow's globals (``{{workflow.uid}}``)
  included, and with ``setOwnerReference`` makes the Workflow the manifest's controlling owner
  (``workflow/controller/operator.go``, ``executeResource``);
- the executor runs ``kubectl <action> -f manifest -o json`` (``workflow/executor/resource.go``):
  ``create`` fails on a name already taken (409 AlreadyExists); ``apply`` creates the object
  when there is none (``kubectl.kubernetes.io/last-applied-configuration`` recorded) and
  otherwise patches the difference (three-way, from the last applied configuration and the
  live object), which for the same manifest and a live object with only a status added is
  none: the existing object is adopted, untouched (kubectl sends no PATCH for ``{}``);
- then it reads the object until a condition holds (tests/argo_conditions.py).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from argo_conditions import outcome

from tests.kube_standin import TOKEN, KubeStandin

PLURALS = {"TFJob": "tfjobs", "XGBoostJob": "xgboostjobs", "Experiment": "experiments"}
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def parameters(task: Mapping[str, Any], workflow: Mapping[str, Any]) -> dict[str, str]:
    """The task's parameters as the controller substitutes them for ``workflow``."""
    uid = workflow["metadata"]["uid"]
    return {
        p["name"]: p["value"].replace("{{workflow.uid}}", uid)
        for p in task["arguments"]["parameters"]
    }


def start(
    api: KubeStandin, template: Mapping[str, Any], task: Mapping[str, Any], workflow: Mapping
) -> dict[str, Any] | None:
    """The executor's action for ``task`` (a call of the resource ``template``) in
    ``workflow``: the object it created or adopted, None where kubectl failed (the step
    fails)."""
    given = parameters(task, workflow)
    manifest = json.loads(given["manifest"])
    if template["resource"].get("setOwnerReference"):
        manifest["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Workflow",
                "name": workflow["metadata"]["name"],
                "uid": workflow["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    collection = _collection(manifest)
    action = template["resource"]["action"]
    if action == "apply":
        return _apply(api, collection, manifest)
    assert action == "create", f"no model of action {action!r}"
    code, obj = _call(api, "POST", collection, manifest)
    return obj if code == 201 else None


def wait(api: KubeStandin, task: Mapping[str, Any], workflow: Mapping, obj: Mapping) -> str:
    """Read ``obj`` until the task's failure or success condition holds: ``failed`` or
    ``succeeded`` (``waiting`` after 100 reads)."""
    given = parameters(task, workflow)
    path = f"{_collection(obj)}/{obj['metadata']['name']}"
    for _ in range(100):
        code, current = _call(api, "GET", path)
        assert code == 200, current
        if ended := outcome(given["success-condition"], given["failure-condition"], current):
            return ended
    return "waiting"


def read(api: KubeStandin, obj: Mapping[str, Any]) -> dict[str, Any]:
    """One read of ``obj`` by the executor (its controllers reconcile it first)."""
    code, current = _call(api, "GET", f"{_collection(obj)}/{obj['metadata']['name']}")
    assert code == 200, current
    return current


def _collection(obj: Mapping[str, Any]) -> str:
    return f"/apis/{obj['apiVersion']}/namespaces/ml/{PLURALS[obj['kind']]}"


def _apply(api: KubeStandin, collection: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """``kubectl apply``: create with the last applied configuration, or adopt."""
    assert "name" in manifest["metadata"], "kubectl apply cannot use generateName"
    code, existing = _call(api, "GET", f"{collection}/{manifest['metadata']['name']}")
    if code == 404:
        applied = json.dumps(manifest, separators=(",", ":"))
        annotations = {**manifest["metadata"].get("annotations", {}), LAST_APPLIED: applied}
        body = {**manifest, "metadata": {**manifest["metadata"], "annotations": annotations}}
        code, created = _call(api, "POST", collection, body)
        assert code == 201, created
        return created
    assert code == 200, existing
    last = json.loads(existing["metadata"]["annotations"][LAST_APPLIED])
    assert last == manifest, "a retry applies the same manifest: nothing to patch"
    return existing


def _call(api: KubeStandin, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    request = urllib.request.Request(
        api.url + path,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())
