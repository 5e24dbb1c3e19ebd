"""A fake agent CLI for prosec's end-to-end tests: deterministic, no model behind it.

Run by an `agent` render (`command = ["python3", "fake_agent.py", "--prompt-file",
"{prompt_file}"]`, or with the prompt on stdin). It

- appends one line per session to ROOT/agent.log:
  `<node> model=<PROSEC_MODEL> scope=<PROSEC_MEMORY_SCOPE> segment=<segment file name>
  memory-in-prompt=<yes|no>` (plus ` resumed` when delegation responses were present);
- keeps its memory: reads `sessions: N` from $PROSEC_MEMORY (0 when absent), writes it
  back as N + 1 with the run id, and writes its segment record to $PROSEC_MEMORY_SEGMENT
  (unless the control file says `"no_segment": true`);
- publishes `watches.json` (the session count), `model.json` and `dark_lights.json` (the
  lights whose reports say `dark`, read from the pinned inputs) into $PROSEC_OUTPUT;
- delegates when ROOT/agent/<node>.json says `"delegate": [{"name": …, "id": …,
  "request": …}]`: on a session without the responses it writes each request to
  `workspace/__delegate/<name>/<id>.md` and exits 0 (a yield); once every
  `<id>-response.md` exists it publishes them in `answers.json` and finishes.

As a delegate (PROSEC_WAKE says `"source": "delegation"`) it answers the request: it
writes `answer.md` = "answer to: <the request's text>" into $PROSEC_OUTPUT.
"""

import json
import os
import sys
from pathlib import Path

env = os.environ
root = Path(env["PROSEC_ROOT"])
node = env["PROSEC_NODE"]
output = Path(env["PROSEC_OUTPUT"])
workspace = Path(env["PROSEC_WORKSPACE"])
wake = json.loads(Path(env["PROSEC_WAKE"]).read_text(encoding="utf-8"))

if "--prompt-file" in sys.argv:
    prompt = Path(sys.argv[sys.argv.index("--prompt-file") + 1]).read_text(encoding="utf-8")
else:
    prompt = sys.stdin.read()

if wake.get("source") == "delegation":
    request = Path(wake["request"]).read_text(encoding="utf-8").strip()
    (output / "answer.md").write_text(f"answer to: {request}\n", encoding="utf-8")
    with open(root / "agent.log", "a", encoding="utf-8") as log:
        log.write(f"{node} delegate-of={wake['from']} id={wake['id']}\n")
    raise SystemExit(0)

control_file = root / "agent" / f"{node}.json"
control = json.loads(control_file.read_text(encoding="utf-8")) if control_file.exists() else {}

answers = {}
pending = []
for item in control.get("delegate", []):
    folder = workspace / "__delegate" / item["name"]
    response = folder / f"{item['id']}-response.md"
    if response.exists():
        answers[f"{item['name']}/{item['id']}"] = response.read_text(encoding="utf-8")
    else:
        pending.append((folder, item))
if pending:
    for folder, item in pending:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{item['id']}.md").write_text(item["request"] + "\n", encoding="utf-8")
    with open(root / "agent.log", "a", encoding="utf-8") as log:
        log.write(f"{node} yield {','.join(i['name'] + '/' + i['id'] for _, i in pending)}\n")
    raise SystemExit(0)  # a yield: the runtime runs the delegates and invokes us again

memory = Path(env["PROSEC_MEMORY"]) if env.get("PROSEC_MEMORY") else None
sessions = 0
if memory is not None and memory.exists():
    for line in memory.read_text(encoding="utf-8").splitlines():
        if line.startswith("sessions: "):
            sessions = int(line.split(": ", 1)[1])
sessions += 1
if memory is not None:
    memory.write_text(
        f"# Agent Memory: {node}\n\nsessions: {sessions}\nlast run: {env['PROSEC_RUN_ID']}\n",
        encoding="utf-8",
    )
    if not control.get("no_segment"):
        segment = Path(env["PROSEC_MEMORY_SEGMENT"])
        segment.write_text(
            f"# Segment {sessions:03d}\n\n## Summary\n\n- kept watch {sessions}\n",
            encoding="utf-8",
        )

dark = []
pinned = json.loads(Path(env["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
for item in pinned["inputs"]:
    folder = Path(item["path"]) if item["path"] else None
    if folder is None or not (folder / "reports.json").is_file():
        continue
    for report in json.loads((folder / "reports.json").read_text(encoding="utf-8")):
        if report.get("status") == "dark":
            dark.append(report["light"])

(output / "watches.json").write_text(json.dumps(sessions), encoding="utf-8")
(output / "model.json").write_text(json.dumps(env["PROSEC_MODEL"]), encoding="utf-8")
(output / "dark_lights.json").write_text(json.dumps(sorted(dark)), encoding="utf-8")
if answers:
    (output / "answers.json").write_text(json.dumps(answers, sort_keys=True), encoding="utf-8")

segment_name = Path(env["PROSEC_MEMORY_SEGMENT"]).name if env.get("PROSEC_MEMORY_SEGMENT") else "-"
in_prompt = "yes" if memory is not None and str(memory) in prompt else "no"
with open(root / "agent.log", "a", encoding="utf-8") as log:
    log.write(
        f"{node} model={env['PROSEC_MODEL']} scope={env.get('PROSEC_MEMORY_SCOPE') or '-'} "
        f"segment={segment_name} memory-in-prompt={in_prompt}"
        + (" resumed" if answers else "")
        + "\n"
    )
