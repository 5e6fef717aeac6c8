"""The Argo backend's command-line options: the Workflow's (image, namespace, resources,
the datasource Secret) and the cluster's (kubeconfig, context), and what they parse to."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from sqlml.errors import SqlmlError

if TYPE_CHECKING:
    from sqlml.backends.argo.codegen import ArgoOptions
    from sqlml.backends.argo.kube import Cluster


def add_workflow_options(parser: argparse.ArgumentParser, title: str, retries: bool = True) -> None:
    """The options of the Workflow, in a group called ``title``; ``retries`` False where
    the parser has ``--retries`` already."""
    argo = parser.add_argument_group(title)
    argo.add_argument("--image", help="the step image (default: sqlml:VERSION)")
    argo.add_argument("--namespace", help="the workflow's namespace")
    argo.add_argument("--service-account", metavar="NAME", help="the pods' service account")
    argo.add_argument(
        "--secret",
        metavar="NAME",
        default="sqlml-datasource",
        help="the Secret holding the datasource URL (default: sqlml-datasource)",
    )
    argo.add_argument(
        "--secret-key", metavar="KEY", default="url", help="the URL's key in it (default: url)"
    )
    argo.add_argument("--cpu", help="CPU request of every step pod, e.g. 500m")
    argo.add_argument("--memory", help="memory request of every step pod, e.g. 2Gi")
    argo.add_argument("--cpu-limit", metavar="CPU", help="CPU limit of every step pod")
    argo.add_argument("--memory-limit", metavar="MEMORY", help="memory limit of every step pod")
    argo.add_argument(
        "--run-as-user", type=int, default=1000, metavar="UID", help="non-root user id (1000)"
    )
    if retries:
        argo.add_argument(
            "--retries",
            type=int,
            default=0,
            help="retries of a failed step (0: only a step whose pod was deleted, 3 times)",
        )
    argo.add_argument(
        "--job-deadline",
        type=int,
        metavar="SECONDS",
        help="fail a distributed TO TRAIN's job that runs longer (default: 86400, a day)",
    )


def add_cluster_options(parser: argparse.ArgumentParser, namespace: bool = False) -> None:
    """The options that reach the cluster; ``namespace``: also ``-n/--namespace``."""
    cluster = parser.add_argument_group("Kubernetes")
    if namespace:
        cluster.add_argument("-n", "--namespace", help="the run's namespace (the context's)")
    cluster.add_argument(
        "--kubeconfig",
        metavar="PATH",
        help="the cluster's configuration (default: $KUBECONFIG, else ~/.kube/config, "
        "else the pod's service account)",
    )
    cluster.add_argument("--context", metavar="NAME", help="its context (default: the current)")


def cluster(args: argparse.Namespace) -> Cluster:
    """The cluster the options :func:`add_cluster_options` added name."""
    from sqlml.backends.argo.kube import Cluster

    return Cluster(args.kubeconfig, args.context, args.namespace)


def argo_options(args: argparse.Namespace) -> ArgoOptions:
    """The Workflow's options, as :func:`add_workflow_options` parsed them."""
    from sqlml.backends.argo.codegen import ArgoOptions
    from sqlml.steps.kubeflow import RunPolicy

    def quantities(cpu: str | None, memory: str | None) -> dict[str, str]:
        return {key: value for key, value in (("cpu", cpu), ("memory", memory)) if value}

    image = {"image": args.image} if args.image else {}
    deadline = {}
    if args.job_deadline is not None:
        if args.job_deadline < 1:
            raise SqlmlError(
                f"--job-deadline must be at least 1 second, not {args.job_deadline}",
                hint="give the seconds a distributed training job may run, e.g. 86400",
            )
        deadline["job_run_policy"] = RunPolicy(active_deadline_seconds=args.job_deadline)
    return ArgoOptions(
        **image,
        namespace=args.namespace,
        service_account=args.service_account,
        secret=args.secret,
        secret_key=args.secret_key,
        requests=quantities(args.cpu, args.memory),
        limits=quantities(args.cpu_limit, args.memory_limit),
        run_as_user=args.run_as_user,
        retries=args.retries,
        **deadline,
    )
