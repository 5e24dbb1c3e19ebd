#!/usr/bin/env bash
# The tea-timer story: a lone function run straight from its file, no build or activate,
# with its inputs on the command line. Its scratch project is kept in
# $PROSEC_DEMO_DIR/tea-timer (default $TMPDIR/prosec-demo/tea-timer) and reused.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
demo_repo="$(cd "$here/../.." && pwd)"
prosec="${PROSEC:-$demo_repo/.venv/bin/prosec}"
# shellcheck source=../demo-lib.sh
. "$demo_repo/corpus/demo-lib.sh"

step "the tea timer: one function, run from its file"
demo_folder tea-timer
cp -r "$here/src" "$here/renders" "$here/prose.toml" "$work/"
cd "$work"

step "prosec run src/tea-timer.prose.md --tea green --strength strong"
"$prosec" run src/tea-timer.prose.md --tea green --strength strong
note "the function's two returns, printed as JSON; nothing was built or activated"

step "the same inputs after --, as upstream writes them"
"$prosec" run src/tea-timer.prose.md -- tea: black strength: mild

step "a missing input is a usage error that names it (exit 2)"
"$prosec" run src/tea-timer.prose.md --tea oolong || note "exit $?: nothing ran"

step "the run's log: the inputs bound and the call done"
cat "$(ls -td runs/*/ | head -n 1)vm.log.md"
