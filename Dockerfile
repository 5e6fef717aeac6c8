# The step image: runs one sqlml statement per container (python -m sqlml.runtime.step IR_JSON),
# with the datasource URL from $SQLML_DATASOURCE (a Kubernetes Secret).
# Build: docker build -t sqlml:0.1.0 .   (EXTRAS=tensorflow,plot by default; "" for XGBoost only)
FROM python:3.11-slim

ARG EXTRAS=tensorflow,plot

# XGBoost's OpenMP runtime.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libgomp1 \
    && rm -rf /var/lib/apt/lists/*

# A numeric, non-root user: Kubernetes' runAsNonRoot can check it.
RUN groupadd --gid 1000 sqlml \
    && useradd --uid 1000 --gid 1000 --create-home --home-dir /home/sqlml sqlml

WORKDIR /opt/sqlml
COPY pyproject.toml README.md ./
COPY sqlml ./sqlml
RUN pip install --no-cache-dir ".${EXTRAS:+[$EXTRAS]}"

USER 1000:1000
WORKDIR /home/sqlml
ENV PYTHONUNBUFFERED=1
ENTRYPOINT ["python", "-m", "sqlml.runtime.step"]
