#!/usr/bin/env bash
# `make demo`: lint every corpus program, then run the newsroom example end to end
# (build, activate, run, trigger) in a scratch copy.
set -euo pipefail
cd "$(dirname "$0")/.."
prosec="${PROSEC:-$PWD/.venv/bin/prosec}"
printf '\033[1m== prosec lint corpus/ (the invalid/ examples and the cycle scenario excluded)\033[0m\n'
"$prosec" lint corpus --exclude corpus/invalid --exclude corpus/wiring-cycle
PROSEC="$prosec" ./corpus/newsroom/demo.sh
