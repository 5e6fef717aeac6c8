"""The Argo backend: a program as an Argo Workflow (``codegen``), submitted, watched, logged
and stopped through the Kubernetes API (``submit``, ``kube``, ``status``); ``backend``
declares it, with its command-line options (``options``). Importing the package imports none
of them."""
