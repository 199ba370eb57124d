#!/usr/bin/env bash
# Installs everything, starts kb's own Neo4j, builds the graph of the example vault (structure, chunks,
# embeddings, and the knowledge layer from the extraction shipped with the vault) and asks it questions.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export KB_EMBEDDER=${KB_EMBEDDER:-onnx:minilm}   # offline; set ollama:bge-m3 if Ollama runs here
.venv/bin/kb db start
.venv/bin/kb refresh --vault examples/vault
.venv/bin/kb search "How has the number of customers changed over time?" --mode auto --k 5
.venv/bin/kb timeline "Lumen Ledger Ltd" customer_count
.venv/bin/kb path "Ingrid Solberg" "Harrow Freight"
