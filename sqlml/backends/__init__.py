"""Backends: where a program's workflow runs. Each is one package holding its code
generation, submission, status and logs: ``local`` (this machine; a Python program) and
``argo`` (Argo Workflows on Kubernetes; a Workflow's YAML)."""

# The columns of ``sqlml status``, whatever the backend.
STATUS_COLUMNS = ("step", "state", "started", "finished", "message")
