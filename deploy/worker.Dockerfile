# fulcrum-worker on a CUDA node. Build from the repository root:
#   docker build -f deploy/worker.Dockerfile -t fulcrum-worker .
# torch's wheels bring their own CUDA libraries (CUDA 13), so the base image needs only the CUDA runtime layout and a
# host driver new enough for CUDA 13 (R580+). Python 3.12 from Ubuntu 24.04.
ARG CUDA_IMAGE=nvidia/cuda:13.0.1-base-ubuntu24.04
FROM ${CUDA_IMAGE}

RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && python3 -m venv /opt/fulcrum-worker \
 && useradd --create-home --uid 1000 worker

COPY worker/pyproject.toml worker/README.md /src/worker/
COPY worker/src /src/worker/src
RUN /opt/fulcrum-worker/bin/pip install --no-cache-dir /src/worker && rm -rf /src

USER 1000
ENV PATH=/opt/fulcrum-worker/bin:$PATH \
    HF_HOME=/cache/huggingface \
    PYTHONUNBUFFERED=1
# Arguments: --server, --base-model (and --model-path for local weights); the API key from FULCRUM_API_KEY.
# One job over all GPUs of the pod: the same image with `torchrun` (installed with torch) as the command, e.g.
# deploy/kubernetes/fulcrum-worker-multi-gpu.yaml.
ENTRYPOINT ["sh", "-c", "exec fulcrum-worker run --api-key \"$FULCRUM_API_KEY\" \"$@\"", "fulcrum-worker"]
