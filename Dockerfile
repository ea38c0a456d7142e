# Standalone image of the Wyoming Kokoro server (without Home Assistant's Supervisor),
# built from this repository:
#   docker build -t wyoming-kokoro .
#   docker run -d --network host -v kokoro-data:/data wyoming-kokoro --zeroconf
# Debian, not Alpine: onnxruntime publishes no musl wheels.
# BUILD_FROM: any Debian bookworm image with python3 and its venv module (the tests
# build with a stand-in, no registry being reachable there). Python 3.11, not 3.13:
# misaki 0.9.4 requires Python < 3.13.
ARG BUILD_FROM=python:3.11-slim-bookworm
# hadolint ignore=DL3006
FROM ${BUILD_FROM}

SHELL ["/bin/bash", "-o", "pipefail", "-c"]

ENV PATH="/opt/kokoro/bin:${PATH}" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    KOKORO_CACHE_DIR=/data/cache

# Where pip finds the packages: PyPI unless told otherwise, e.g. an offline wheelhouse:
#   --build-arg PIP_NO_INDEX=1 --build-arg PIP_FIND_LINKS=http://127.0.0.1:8000/
# (build arguments reach the RUN steps as environment variables; not kept in the image).
ARG PIP_INDEX_URL
ARG PIP_FIND_LINKS
ARG PIP_NO_INDEX

# Only what the package build needs, so editing tests or docs keeps the layer cached.
COPY pyproject.toml README.md /tmp/src/
COPY wyoming_kokoro /tmp/src/wyoming_kokoro
COPY cli /tmp/src/cli
# The app's script that trims the environment in the same layer as pip and cuts the
# embedded model there (a first start then neither cuts nor needs onnx).
COPY addon/slim.sh /tmp/slim.sh
# Links that cut into the /data volume's cache before the server starts.
COPY addon/cut-seed.sh /opt/kokoro/bin/kokoro-cut-seed
# A virtual environment keeps pip away from the base's own Python packages. binutils
# (its strip) is needed by slim.sh only. The base image picks the package versions.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && python3 -m venv /opt/kokoro \
    && pip install /tmp/src \
    && /tmp/slim.sh /opt/kokoro \
    && rm -rf /tmp/src /tmp/slim.sh \
    && apt-get purge -y --auto-remove binutils \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --uid 1000 --user-group --home-dir /data --no-create-home \
        --shell /usr/sbin/nologin kokoro \
    && mkdir -p /data \
    && chown 1000:1000 /data

# Nothing here needs root; a named volume takes /data's owner from the image.
USER 1000:1000
WORKDIR /data
VOLUME /data
# 8880: the OpenAI-compatible HTTP API, served only with --http tcp://0.0.0.0:8880
EXPOSE 10200 8880

# A real Describe → Info round trip, as Home Assistant does, not a bare port check.
# The long start period covers a first start that downloads a model variant.
HEALTHCHECK --start-period=10m --interval=1m --timeout=15s --retries=3 \
    CMD ["python3", "-m", "wyoming_kokoro.healthcheck", "--uri", "tcp://127.0.0.1:10200", "--timeout", "10"]

# Arguments after the image name are added, e.g. --zeroconf, --voice af_heart,
# --download fp16 (fetches the model into /data on the first start),
# --http tcp://0.0.0.0:8880 (the OpenAI-compatible API and its page).
ENTRYPOINT ["kokoro-cut-seed", "wyoming-kokoro", "--uri", "tcp://0.0.0.0:10200", "--data-dir", "/data"]
CMD []
