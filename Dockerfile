# The step image: runs one sqlml statement per container (python -m sqlml.runtime.step IR_JSON),
# with the datasource URL from $SQLML_DATASOURCE (a Kubernetes Secret).
# Build: docker build -t sqlml:0.1.0 .   (EXTRAS=tensorflow,plot,sklearn by default; "" for XGBoost only)
#
# The base image is pinned to an exact tag: Python 3.11.7 (the interpreter the test suite ran
# on) on Debian 12 "bookworm". A tag can still be re-pushed; a digest cannot. This file gives
# no digest because none could be had from an authoritative source: the only network open
# when it was written was PyPI's and Debian's, neither of which publishes Docker Hub's
# digests, and the digests for this tag that public Dockerfiles quote disagree with each
# other (the tag was rebuilt, and a digest may name one platform's manifest or the
# multi-platform index), so copying one would pin an image nobody here has verified. Where
# Docker Hub is reachable, pin it by appending the index digest it reports to the tag:
#   docker buildx imagetools inspect python:3.11.7-slim-bookworm    # prints "Digest: sha256:..."
#   FROM python:3.11.7-slim-bookworm@sha256:<that digest>
#
# Docker names the built image docker.io/library/sqlml:0.1.0, the name the Argo backend's
# pods use by default (spelled in full: an unqualified name is resolved by each container
# runtime's own registries configuration, e.g. CRI-O's short-name mode).
FROM python:3.11.7-slim-bookworm

ARG EXTRAS=tensorflow,plot,sklearn

# XGBoost's OpenMP runtime (from bookworm's archive, whose updates are security fixes only).
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/*

# A numeric, non-root user: Kubernetes' runAsNonRoot can check it.
RUN groupadd --gid 1000 sqlml \
    && useradd --uid 1000 --gid 1000 --create-home --home-dir /home/sqlml sqlml

WORKDIR /opt/sqlml
# Every Python dependency at the exact version in docker/constraints.txt (which .dockerignore
# must let into the build context: "!docker/constraints.txt").
COPY docker/constraints.txt ./docker/constraints.txt
COPY pyproject.toml README.md ./
COPY sqlml ./sqlml
RUN pip install --no-cache-dir -c docker/constraints.txt ".${EXTRAS:+[$EXTRAS]}"

USER 1000:1000
WORKDIR /home/sqlml
ENV PYTHONUNBUFFERED=1
# Pods are ephemeral: an input cache in the container would be written and thrown away with
# it (and under another --run-as-user, HOME may not be writable at all).
ENV SQLML_CACHE=off
ENTRYPOINT ["python", "-m", "sqlml.runtime.step"]
