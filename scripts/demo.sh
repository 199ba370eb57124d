#!/usr/bin/env bash
# Installs everything, starts kb's own Neo4j, builds the graph of the example vault and searches it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export KB_EMBEDDER=${KB_EMBEDDER:-onnx:minilm}   # offline; set ollama:bge-m3 if Ollama runs here
.venv/bin/kb db start
.venv/bin/kb refresh --vault examples/vault
.venv/bin/kb search "Who introduced the investor that led the seed round?" --k 5
