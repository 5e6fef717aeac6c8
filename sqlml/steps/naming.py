"""Kubernetes names for the objects sqlml creates, by the rules their controllers enforce.

- Every name is a DNS-1035 label: lower-case letters, digits and '-', starting with a
  letter (the training operator's webhooks refuse ``2024-q1-...``), at most 63 characters.
- A Workflow's name is also the value of the ``workflows.argoproj.io/workflow`` label of its
  pods: at most 63 characters.
- The training operator names each replica's Service and pod ``<job>-<replica type>-<index>``
  (training-operator v1.9, ``pkg/common/util``' ``GenGeneralName``), which must be a DNS-1035
  label of at most 63 characters too.
- Katib refuses Experiment names over 40 characters (its Experiment validator).

Names given as ``metadata.generateName`` get 5 random characters appended by the API server.
A name too long for its kind is cut and ends with a stable hash of the whole text, so that
two long names stay distinct and a program compiles to the same names every time.
"""

from __future__ import annotations

import hashlib
import re

from sqlml.errors import KubernetesError
from sqlml.semantics.lowering import unaccented

MAX_NAME = 63  # a DNS label
MAX_EXPERIMENT_NAME = 40
GENERATED_SUFFIX = 5  # characters the API server appends to a generateName
_HASH = 8
_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def dns_label(text: str, max_length: int = MAX_NAME) -> str:
    """``text`` as a DNS-1035 label of at most ``max_length`` characters.

    Letters lose their accents (``Ü`` is ``u``, ``ß`` is ``ss``); other characters become
    '-'; a name that does not start with a letter gets ``sqlml-`` in front; a name too long
    is cut and ends with 8 hex digits of a hash of ``text``.
    """
    name = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]+", "-", unaccented(text))).strip("-")
    if not name[:1].isalpha():
        name = f"sqlml-{name}".rstrip("-")
    if len(name) > max_length:
        digest = hashlib.sha256(text.encode()).hexdigest()[:_HASH]
        name = f"{name[: max_length - _HASH - 1].rstrip('-')}-{digest}"
    return name


def generate_name(text: str, max_name: int = MAX_NAME) -> str:
    """A ``generateName`` for ``text`` whose generated names have at most ``max_name``
    characters: a label of ``max_name - 6`` characters at most, then '-'."""
    return f"{dns_label(text, max_name - GENERATED_SUFFIX - 1)}-"


def job_name_limit(replicas: dict[str, int]) -> int:
    """The longest name a training job with ``replicas`` (type -> count) may have: its
    ``<job>-<type>-<index>`` Services must stay DNS labels."""
    longest = max(
        (len(f"-{kind.lower()}-{count - 1}") for kind, count in replicas.items()), default=0
    )
    return MAX_NAME - longest


def check_label(name: str, what: str, max_length: int = MAX_NAME) -> None:
    """Refuse ``name`` unless it is a DNS-1035 label of at most ``max_length`` characters."""
    if len(name) <= max_length and _LABEL.fullmatch(name):
        return
    if len(name) > max_length:
        reason = f"it has {len(name)} characters, at most {max_length} are allowed"
    elif not name[:1].isalpha() or not name[:1].islower():
        reason = "it must start with a lower-case letter"
    else:
        reason = (
            "it may hold only lower-case letters, digits and '-', ending with a letter or digit"
        )
    raise KubernetesError(
        f"{name!r} is not a valid name for {what}: {reason}",
        hint=f"use at most {max_length} lower-case letters, digits and '-', starting with a "
        "letter and ending with a letter or digit",
    )
