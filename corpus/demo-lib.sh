# Helpers the demo scripts share (sourced, not run): headings, notes, payloads, the scratch
# folder and the graph. A new story is a script in its program's folder that sources this
# file and calls these; corpus/demo.sh runs each story in turn.
#
# Colour only on a terminal: NO_COLOR (any value) turns it off, FORCE_COLOR turns it on
# even when the output is captured, as prosec itself does.

if [ -n "${NO_COLOR:-}" ]; then
  demo_bold='' demo_dim='' demo_reset=''
elif [ -n "${FORCE_COLOR:-}" ] || [ -t 1 ]; then
  demo_bold=$'\033[1m' demo_dim=$'\033[2m' demo_reset=$'\033[0m'
else
  demo_bold='' demo_dim='' demo_reset=''
fi

# step TEXT: a heading for the next command(s)
step() { printf '\n%s== %s%s\n' "$demo_bold" "$*" "$demo_reset"; }

# note TEXT: a line that explains what the output above or below means
note() { printf '%s-- %s%s\n' "$demo_dim" "$*" "$demo_reset"; }

# demo_folder NAME: the story's scratch project, $PROSEC_DEMO_DIR/NAME (default
# $TMPDIR/prosec-demo/NAME: outside the checkout, whose .gitignore would hide the sources
# from discovery). Kept after the demo and reused by the next one: its sources are copied
# afresh and its dist/, runs/ and state/ cleared, so every demo starts cold. Prints the
# folder and sets $work.
demo_folder() {
  local base="${PROSEC_DEMO_DIR:-${TMPDIR:-/tmp}/prosec-demo}"
  work="$base/$1"
  if [ -d "$work" ]; then
    note "reusing the scratch project $work (sources copied afresh, dist/ runs/ state/ cleared)"
    rm -rf "$work"
  else
    note "the scratch project is $work (kept afterwards; the next demo reuses it)"
  fi
  mkdir -p "$work"
}

# trigger_with GATEWAY NAME JSON: write the payload to triggers/NAME.json, print it, and
# `prosec trigger` the gateway with it
trigger_with() {
  local gateway="$1" name="$2" payload="$3"
  mkdir -p triggers
  printf '%s\n' "$payload" > "triggers/$name.json"
  note "payload (triggers/$name.json): $payload"
  "$prosec" trigger "$gateway" --data "@triggers/$name.json"
}

# show_truth NODE: the files the node last published (filesystem backend)
show_truth() {
  local folder="state/world-model/$1/published" file
  for file in "$folder"/*; do
    [ -f "$file" ] || continue
    printf '%s: %s\n' "${file#state/world-model/}" "$(cat "$file")"
  done
}

# draw_graph: the topology as graph.svg with Graphviz (`$DOT`, default `dot`), else the
# Mermaid text in graph.mmd with a note saying how to see it
draw_graph() {
  local dot="${DOT:-dot}"
  if command -v "$dot" >/dev/null 2>&1; then
    "$prosec" graph --format dot > graph.dot
    "$dot" -Tsvg graph.dot -o graph.svg
    note "the graph, drawn by Graphviz: $work/graph.svg (open it in a browser)"
  else
    "$prosec" graph > graph.mmd
    cat graph.mmd
    note "Graphviz ('$dot') is not installed, so no SVG: the Mermaid text above is in"
    note "$work/graph.mmd; paste it into any Mermaid viewer, or install graphviz"
    note "(apt-get install graphviz, brew install graphviz) and run the demo again"
  fi
}
