#!/usr/bin/env bash
# The main job on corpus/: lint every program and summarize what was parsed.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/prosec lint corpus --exclude corpus/invalid || true
