# syntax=docker/dockerfile:1
# NMAFC: API + dashboard + /docs on one port. Three stages: the dashboard's static export,
# a wheel that carries it, and a slim runtime that installs only the wheel.

FROM node:20-bookworm-slim AS ui
WORKDIR /src/web-ui
COPY web-ui/package.json web-ui/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY openapi/ /src/openapi/
COPY web-ui/ ./
RUN npm run build

FROM python:3.11-slim-bookworm AS wheel
WORKDIR /src
RUN pip install --no-cache-dir build==1.2.2
COPY pyproject.toml README.md ./
COPY migrations/ migrations/
COPY service/ service/
COPY --from=ui /src/web-ui/out/ service/nmafc/web/static/
RUN python -m build --wheel --outdir /wheels

FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    NMAFC_DATA_DIR=/data \
    NMAFC_CACHE_DIR=/opt/nmafc/cache
COPY --from=wheel /wheels/ /wheels/
RUN pip install --no-cache-dir "$(ls /wheels/nmafc-*.whl)[postgres,s3]" \
    && rm -rf /wheels \
    && useradd --create-home --uid 10001 nmafc \
    && mkdir -p /data /opt/nmafc/cache && chown nmafc /data /opt/nmafc/cache
USER nmafc
# Build the model's quantized query graph into the image's cache now, not at every start.
RUN python -c "from pathlib import Path; from nmafc.embedding.onnx_minilm import OnnxMiniLM; \
OnnxMiniLM(cache_dir=Path('/opt/nmafc/cache')).close()"
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=2).status != 200)"]
CMD ["nmafc", "serve", "--host", "0.0.0.0", "--port", "8000"]
