#!/usr/bin/env bash
# Runtime demo: copy the example project to a scratch folder and reconcile it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prosec="${PROSEC:-$here/../../.venv/bin/prosec}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$here/example" "$work/example"
mkdir -p "$work/renders" && cp "$here/renders/node.py" "$work/renders/node.py"
cd "$work/example"
echo "== cold start"; "$prosec" run . --input audience=engineers
echo "== unchanged re-run (renders nothing)"; "$prosec" run .
echo "== trigger: the inbox fills"
"$prosec" trigger inbox --data '{"urgent": [], "newsletters": ["weekly"], "fetched_at": 1}'
echo "== trigger: only the urgent facet moves (summaries stays dark)"
"$prosec" trigger inbox --data '{"urgent": ["outage"], "newsletters": ["weekly"], "fetched_at": 2}'
echo "== trigger: only the immaterial fetched_at moves (inbox renders, skips, nothing wakes)"
"$prosec" trigger inbox --data '{"urgent": ["outage"], "newsletters": ["weekly"], "fetched_at": 3}'
last="$(ls runs | tail -2 | head -1)"
echo "== inspect $last"; "$prosec" inspect "$last"
echo "== status"; "$prosec" status .
echo "== verify"; "$prosec" receipts verify .
