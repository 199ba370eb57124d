#!/usr/bin/env bash
# Installs everything and runs the test suite; the tests start their own Neo4j through kb's launcher.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/python -m mypy
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
