#!/usr/bin/env bash
# The Dockerfile's three stages without Docker (which cannot run on the development
# machine): export the dashboard from a clean copy, build the wheel that carries it,
# install that wheel alone into a fresh virtualenv, start `nmafc serve`, and probe it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "== stage ui: npm ci && npm run build"
mkdir -p "$work/src/web-ui"
(cd "$root/web-ui" && git ls-files -z . | xargs -0 -I{} cp --parents {} "$work/src/web-ui/")
cp -r "$root/openapi" "$work/src/openapi"
(cd "$work/src/web-ui" && npm ci --no-audit --no-fund --loglevel=error && npm run build)

echo "== stage wheel: python -m build --wheel"
cp -r "$root/pyproject.toml" "$root/README.md" "$root/migrations" "$work/src/"
(cd "$root" && git ls-files -z service | xargs -0 -I{} cp --parents {} "$work/src/")
mkdir -p "$work/src/service/nmafc/web/static"
cp -r "$work/src/web-ui/out/." "$work/src/service/nmafc/web/static/"
python3 -m venv "$work/build"
"$work/build/bin/pip" install --quiet build==1.2.2
(cd "$work/src" && "$work/build/bin/python" -m build --wheel --outdir "$work/wheels" >/dev/null)

echo "== stage runtime: pip install the wheel into a fresh virtualenv"
python3 -m venv "$work/runtime"
"$work/runtime/bin/pip" install --quiet "$(ls "$work"/wheels/nmafc-*.whl)[postgres,s3]"
"$work/runtime/bin/python" -c "from pathlib import Path; from nmafc.embedding.onnx_minilm import OnnxMiniLM; OnnxMiniLM(cache_dir=Path('$work/cache')).close()"
port=$("$work/runtime/bin/python" -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
NMAFC_DATA_DIR="$work/data" NMAFC_CACHE_DIR="$work/cache" NMAFC_AUTH=off "$work/runtime/bin/nmafc" serve --host 127.0.0.1 --port "$port" \
  >"$work/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$work/serve.log"; exit 1; }
curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null
curl -fsS "http://127.0.0.1:$port/" | grep -qi "<html" || { echo "dashboard missing"; exit 1; }
curl -fsS "http://127.0.0.1:$port/docs" | grep -qi swagger
echo "== ok: the wheel alone serves the API, /docs and the dashboard on one port"
