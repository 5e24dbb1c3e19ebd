#!/usr/bin/env bash
# `make demo`: lint every corpus program, then tell each story end to end, each in its own
# scratch project under $PROSEC_DEMO_DIR (default $TMPDIR/prosec-demo), kept and reused.
# A new story: a demo.sh beside its program that sources corpus/demo-lib.sh, and one line
# in STORIES below.
set -euo pipefail
cd "$(dirname "$0")/.."
demo_repo="$PWD"
prosec="${PROSEC:-$PWD/.venv/bin/prosec}"
export PROSEC="$prosec"
# shellcheck source=demo-lib.sh
. ./corpus/demo-lib.sh

STORIES=(
  corpus/newsroom/demo.sh
  corpus/tea-timer/demo.sh
)

step "prosec lint corpus/ (the invalid/ examples, the cycle scenario and menu-board, whose dependency is not installed, excluded)"
"$prosec" lint corpus --exclude corpus/invalid --exclude corpus/wiring-cycle --exclude corpus/menu-board
for story in "${STORIES[@]}"; do
  "./$story"
done
