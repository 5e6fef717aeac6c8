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
    the parser has ``--retries`` and ``--jobs`` already."""
    from sqlml.backends.argo import pods

    argo = parser.add_argument_group(title)
    argo.add_argument("--image", help="the step image (default: docker.io/library/sqlml:VERSION)")
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
    requests, limits = pods.DEFAULT_REQUESTS, pods.DEFAULT_LIMITS
    argo.add_argument(
        "--cpu", help=f"CPU request of every step, job and trial pod ({requests['cpu']})"
    )
    argo.add_argument("--memory", help=f"memory request of the same ({requests['memory']})")
    argo.add_argument("--cpu-limit", metavar="CPU", help="CPU limit of the same (none)")
    argo.add_argument(
        "--memory-limit", metavar="MEMORY", help=f"memory limit of the same ({limits['memory']})"
    )
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
            "--jobs",
            type=int,
            metavar="N",
            help="steps run at once (default: as many as the datasource's database takes: 20 "
            "on a server, 1 on a file that one process at a time writes)",
        )
    argo.add_argument(
        "--pod-gc",
        choices=[*pods.POD_GC_STRATEGIES, "Never"],
        default=pods.DEFAULT_POD_GC,
        help=f"when Argo deletes step pods ({pods.DEFAULT_POD_GC}, {pods.POD_GC_DELAY} after "
        "the pod ends)",
    )
    argo.add_argument(
        "--ttl",
        type=int,
        metavar="SECONDS",
        default=pods.DEFAULT_TTL,
        help=f"delete a finished run's Workflow and pods after this long ({pods.DEFAULT_TTL}, "
        "a week; 0: keep them)",
    )
    argo.add_argument(
        "--run-deadline",
        type=int,
        metavar="SECONDS",
        default=pods.DEFAULT_RUN_DEADLINE,
        help=f"fail a run that takes longer ({pods.DEFAULT_RUN_DEADLINE}, three days)",
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
    from sqlml.backends.argo import pods
    from sqlml.backends.argo.codegen import ArgoOptions
    from sqlml.semantics.quantities import check_quantity
    from sqlml.steps.kubeflow import RunPolicy

    def quantities(cpu: str | None, memory: str | None) -> dict[str, str]:
        given = {key: value for key, value in (("cpu", cpu), ("memory", memory)) if value}
        for key, value in given.items():
            try:
                check_quantity(value)
            except ValueError as error:
                raise SqlmlError(
                    f"the {key} quantity {value!r} {error}",
                    hint="e.g. --cpu 500m --memory 2Gi --memory-limit 4Gi",
                ) from None
        return given

    for name in ("jobs", "ttl", "run_deadline"):
        value = getattr(args, name, None)
        if value is not None and value < (0 if name == "ttl" else 1):
            option = "--" + name.replace("_", "-")
            raise SqlmlError(
                f"{option} must be at least {0 if name == 'ttl' else 1}, not {value}",
                hint=f"see sqlml {'run' if 'detach' in args else 'compile'} --help",
            )

    image = {"image": args.image} if args.image else {}
    deadline = {}
    if args.job_deadline is not None:
        if args.job_deadline < 1:
            raise SqlmlError(
                f"--job-deadline must be at least 1 second, not {args.job_deadline}",
                hint="give the seconds a distributed training job may run, e.g. 86400",
            )
        deadline["job_run_policy"] = RunPolicy(active_deadline_seconds=args.job_deadline)
    requests, limits = pods.merged(
        pods.DEFAULT_REQUESTS,
        pods.DEFAULT_LIMITS,
        quantities(args.cpu, args.memory),
        quantities(args.cpu_limit, args.memory_limit),
        "the options",
    )
    return ArgoOptions(
        **image,
        namespace=args.namespace,
        service_account=args.service_account,
        secret=args.secret,
        secret_key=args.secret_key,
        requests=requests,
        limits=limits,
        run_as_user=args.run_as_user,
        retries=args.retries,
        parallelism=args.jobs,
        pod_gc=None if args.pod_gc == "Never" else args.pod_gc,
        ttl_seconds=args.ttl or None,
        deadline_seconds=args.run_deadline,
        **deadline,
    )
