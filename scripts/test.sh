#!/usr/bin/env bash
# Installs everything and runs the test suite; the tests start their own Neo4j through kb's launcher.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m ruff format --check .
.venv/bin/python -m ruff check .
.venv/bin/python -m mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
# Issue 16: kb installed with pip alone, no java or mvn on PATH, runs its server on the wheel's Java.
if [ $# -eq 0 ]; then bash scripts/pip_only_check.sh; fi
