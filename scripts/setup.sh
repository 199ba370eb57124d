#!/usr/bin/env bash
# Installs what kb needs on a fresh Debian/Ubuntu machine: Java 17+, Maven, and kb itself in .venv.
# The Neo4j server's jars are fetched by Maven on the first `kb db start` (or the first test run).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need_apt+=(maven)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
  else
    echo "kb needs: ${need_apt[*]} (install them with your package manager, e.g. sudo apt-get install ${need_apt[*]})" >&2
    exit 1
  fi
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
echo "kb installed in $(pwd)/.venv (run .venv/bin/kb, or activate with: source .venv/bin/activate)"
