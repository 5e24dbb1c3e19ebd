#!/usr/bin/env bash
# The newsroom story: build, activate, run, then trigger the gateway three times and watch
# only the subscribers of the facet that moved re-render. Its scratch project is kept in
# $PROSEC_DEMO_DIR/newsroom (default $TMPDIR/prosec-demo/newsroom) and reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
demo_repo="$(cd "$here/../.." && pwd)"
prosec="${PROSEC:-$demo_repo/.venv/bin/prosec}"
# shellcheck source=../demo-lib.sh
. "$demo_repo/corpus/demo-lib.sh"

step "the newsroom: a wire-feed gateway, two desks, a front page and an editor's briefing"
demo_folder newsroom
cp -r "$here/src" "$here/renders" "$here/prose.toml" "$work/"
cd "$work"

step "prosec build: compile src/ into dist/manifest.next.json"
"$prosec" build --offline-tools
draw_graph
step "prosec activate: validate and promote it to dist/manifest.active.json"
"$prosec" activate

step "prosec run: a cold start renders every node"
"$prosec" run --input audience=editors
"$prosec" inspect latest
step "prosec run again: nothing changed, nothing renders"
"$prosec" run --input audience=editors

step "trigger wire-feed: a breaking story and a feature arrive"
trigger_with wire-feed 1-first-stories \
  '{"breaking": ["Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "08:00"}'
"$prosec" inspect latest
step "trigger wire-feed: only 'breaking' moves, so features-desk stays asleep"
trigger_with wire-feed 2-storm-warning \
  '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:00"}'
"$prosec" inspect latest
step "trigger wire-feed: only the immaterial received_at moves, so nothing downstream wakes"
trigger_with wire-feed 3-same-news-later \
  '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:05"}'
"$prosec" inspect latest

step "what the last node, editor-briefing, publishes now"
show_truth editor-briefing
step "prosec status: each node's last receipt and what last woke it"
"$prosec" status
step "prosec receipts verify: every hash recomputes, every chain holds"
"$prosec" receipts verify .
step "prosec test corpus/newsroom: its test contracts, each run in a state of its own"
note "each test replaces the producers its subject requires by fixtures; one fails on purpose"
code=0
"$prosec" test "$here" --out "$work/test-runs" || code=$?
if [ "$code" -ne 1 ]; then
  echo "prosec test exited $code: expected 1 (one test fails on purpose)" >&2
  exit 1
fi
note "test-front-page-order fails on purpose: it asks for the feature before the story the desk"
note "led with, but front-page keeps its stories in running order (led stories first); the"
note "✗ line shows the order it observed. Reports: $work/test-runs/<test>/runs/<run>/report.md"
note "the project stays in $work: cd there and try prosec status, prosec inspect latest~2"
