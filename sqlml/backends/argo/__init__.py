"""The Argo backend: a program as an Argo Workflow (``codegen``), submitted, watched, logged
and stopped through the Kubernetes API (``submit``, ``kube``, ``status``)."""

from sqlml.backends.argo.codegen import ArgoOptions, to_argo, to_argo_yaml

__all__ = ["ArgoOptions", "to_argo", "to_argo_yaml"]
