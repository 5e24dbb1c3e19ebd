#!/usr/bin/env bash
# The end-to-end demo: build, activate, run, then trigger the gateway with changed data
# and watch only the subscribers of the facet that moved re-render.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prosec="${PROSEC:-$here/../../.venv/bin/prosec}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/src" "$here/renders" "$here/prose.toml" "$work/"
cd "$work"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "prosec build: compile src/ into dist/manifest.next.json"
"$prosec" build --offline-tools
"$prosec" graph
step "prosec activate: validate and promote it to dist/manifest.active.json"
"$prosec" activate
step "prosec run: cold start renders every node"
"$prosec" run --input audience=editors
step "prosec run again: nothing changed, nothing renders"
"$prosec" run --input audience=editors
step "trigger wire-feed: a breaking story and a feature arrive"
"$prosec" trigger wire-feed --data '{"breaking": ["Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "08:00"}'
step "trigger wire-feed: only 'breaking' moves, so features-desk is not woken"
"$prosec" trigger wire-feed --data '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:00"}'
step "trigger wire-feed: only the immaterial received_at moves, so nothing downstream wakes"
"$prosec" trigger wire-feed --data '{"breaking": ["Storm warning", "Bridge reopens"], "features": ["A day with the ferry crew"], "received_at": "09:05"}'
step "prosec inspect: the last two runs"
"$prosec" inspect latest~1
"$prosec" inspect latest
step "prosec status"
"$prosec" status
step "prosec receipts verify: every hash recomputes, every chain holds"
"$prosec" receipts verify .
