"""A small, deterministic render used by prosec's end-to-end tests and demo.

It publishes `truth.json` = {"own": <world/{node}.json minus "_control">, "inputs":
{producer: <its truth>}, "caller": {name: <binding text>}, "data": <trigger data>}.
`world/{node}.json` may carry a "_control" object to make the render misbehave:
  fail: N         exit with status N
  error: NAME     write __error.md ("# Error: NAME") instead of publishing
  sleep: S        sleep S seconds first
  fifo: PATH      block until a line can be read from the fifo PATH (relative to ROOT)
  attest: [ids]   write __attest.json with these ids
  stamp: true     also write an immaterial "fetched_at" with the current time
  omit: [keys]    leave these keys out of "own"
Every invocation appends "<node>\n" to ROOT/renders.log, so tests can count renders,
and "<node> start|end <monotonic seconds>" lines to ROOT/timeline.log.
"""

import json
import os
import time
from pathlib import Path

env = os.environ
root = Path(env["PROSEC_ROOT"])
node = env["PROSEC_NODE"]
output = Path(env["PROSEC_OUTPUT"])
workspace = Path(env["PROSEC_WORKSPACE"])

with open(root / "renders.log", "a", encoding="utf-8") as log:
    log.write(node + "\n")
with open(root / "timeline.log", "a", encoding="utf-8") as timeline:
    timeline.write(f"{node} start {time.monotonic()}\n")

world_file = root / "world" / f"{node}.json"
own = json.loads(world_file.read_text(encoding="utf-8")) if world_file.exists() else {}
control = own.pop("_control", {})

if control.get("fifo"):
    with open(root / control["fifo"], encoding="utf-8") as fifo:
        fifo.readline()
if control.get("sleep"):
    time.sleep(float(control["sleep"]))
if control.get("fail"):
    raise SystemExit(int(control["fail"]))
if control.get("error"):
    (workspace / "__error.md").write_text(f"# Error: {control['error']}\n\nasked to fail\n")
    raise SystemExit(0)
if control.get("attest"):
    (workspace / "__attest.json").write_text(json.dumps({"attested": control["attest"]}))
for key in control.get("omit", []):
    own.pop(key, None)

pinned = json.loads(Path(env["PROSEC_INPUTS"]).read_text(encoding="utf-8"))
inputs = {}
for item in pinned["inputs"]:
    if item["path"]:
        truth_file = Path(item["path"]) / "truth.json"
        inputs[item["producer"]] = (
            json.loads(truth_file.read_text(encoding="utf-8")) if truth_file.exists() else {}
        )
    else:
        inputs[item["producer"]] = None
caller = {
    item["name"]: Path(item["path"]).read_text(encoding="utf-8")
    for item in pinned["caller"]
    if Path(item["path"]).exists()
}
wake = json.loads(Path(env["PROSEC_WAKE"]).read_text(encoding="utf-8"))

truth = {"own": own, "inputs": inputs}
if caller:
    truth["caller"] = caller
if "data" in wake:
    truth["data"] = wake["data"]
if control.get("stamp"):
    truth["fetched_at"] = time.time()
(output / "truth.json").write_text(json.dumps(truth, sort_keys=True, indent=1))
(workspace / "notes.md").write_text(f"rendered {node} for wake {wake['source']}\n")
with open(root / "timeline.log", "a", encoding="utf-8") as timeline:
    timeline.write(f"{node} end {time.monotonic()}\n")
