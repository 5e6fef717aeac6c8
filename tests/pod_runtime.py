"""What happens to a container's command between a manifest and the process, for tests.

- Katib fills a trial template's ``${trialParameters.NAME}`` placeholders by replacing text
  in the template's serialised form (Katib's experiment manifest generator).
- With a metrics collector, Katib's pod webhook rewrites the trial's primary container to
  ``sh -c "<command and args joined by spaces> 1>FILE 2>&1 && echo completed > DIR/$$$$.pid"``
  (``pkg/webhook/v1beta1/pod/utils.go``, ``wrapWorkerContainer``).
- The kubelet expands ``$(VAR)`` in command, args and env values from the container's
  environment, turns ``$$`` into ``$`` and leaves other text alone (Kubernetes'
  ``third_party/forked/golang/expansion``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def katib_fill(template: Any, values: Mapping[str, str]) -> Any:
    """``template`` with each ``${trialParameters.NAME}`` replaced by ``values[NAME]``."""
    text = json.dumps(template)
    for name, value in values.items():
        text = text.replace(f"${{trialParameters.{name}}}", value)
    return json.loads(text)


def katib_wrap(container: Mapping[str, Any], metrics_file: str) -> list[str]:
    """The StdOut collector's command line for ``container`` (command and args)."""
    words = [*container.get("command", []), *container.get("args", [])]
    directory = metrics_file.rsplit("/", 1)[0]
    line = " ".join(
        [*words, f"1>{metrics_file} 2>&1", "&&", f"echo completed > {directory}/$$$$.pid"]
    )
    return ["sh", "-c", line]


def kubelet_expand(text: str, env: Mapping[str, str]) -> str:
    """``text`` as the kubelet passes it to the container: ``$(VAR)`` of a defined variable
    replaced, ``$$`` made ``$``; anything else, an undefined ``$(VAR)`` included, kept."""
    out: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char != "$" or index + 1 == len(text):
            out.append(char)
            index += 1
            continue
        following = text[index + 1]
        if following == "$":
            out.append("$")
            index += 2
        elif following == "(" and (end := text.find(")", index + 2)) != -1:
            name = text[index + 2 : end]
            out.append(env.get(name, f"$({name})"))
            index = end + 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def container_process(container: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """The argv the container's process gets: command and args after expansion."""
    words = [*container.get("command", []), *container.get("args", [])]
    return [kubelet_expand(word, env) for word in words]


def container_env(container: Mapping[str, Any], secrets: Mapping[str, str]) -> dict[str, str]:
    """The container's environment: plain values expanded in order, Secret keys from
    ``secrets`` (name -> value)."""
    env: dict[str, str] = {}
    for variable in container.get("env", []):
        if "value" in variable:
            env[variable["name"]] = kubelet_expand(variable["value"], env)
        else:
            env[variable["name"]] = secrets[variable["valueFrom"]["secretKeyRef"]["name"]]
    return env
