#!/usr/bin/env bash
# `make demo`: lint every corpus program, then run the newsroom example end to end
# (build, activate, run, trigger) in a scratch copy.
set -euo pipefail
cd "$(dirname "$0")/.."
prosec="${PROSEC:-$PWD/.venv/bin/prosec}"
printf '\033[1m== prosec lint corpus/ (the invalid/ examples, the cycle scenario and menu-board, whose dependency is not installed, excluded)\033[0m\n'
"$prosec" lint corpus --exclude corpus/invalid --exclude corpus/wiring-cycle --exclude corpus/menu-board
PROSEC="$prosec" ./corpus/newsroom/demo.sh
