"""A deterministic stand-in for an agent CLI, driven by prosec's agent render.

`python3 fake_agent.py TABLE LOG`: reads the prompt on stdin (and ignores it), reads the
step from `$PROSEC_INPUTS` (`call`: kind, target, key, args, prompt, question, options,
returns), answers it from the JSON table TABLE and appends one line
`{kind} {target} {key} {model}` to LOG (so tests can count the steps really run).

The table:
- `answers`: question text → an answer (true/false, or an option label), or a list of
  answers indexed by the loop iteration in the step key (the last `@N`), the last one
  repeating; a question not listed is answered false (a choice: its first option);
- `calls`: function → {return name → value}; a call not listed returns, for each
  declared return, `"{target}:{return}({args as sorted JSON})"`;
- `fail`: function names whose calls write `__error.md` (`# Error: refused`);
- `sleep`: seconds to wait before answering (crash and concurrency tests), or a map
  target → seconds (a target not listed does not wait); the time spent is written to
  `$PROSEC_WORKSPACE/__span.json` as `{"start", "end"}`.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any


def _iteration(key: str) -> int:
    found = re.findall(r"@(\d+)", key)
    return int(found[-1]) if found else 0


def main() -> int:
    table = json.loads(Path(sys.argv[1]).read_text())
    log = Path(sys.argv[2])
    sys.stdin.read()
    call = json.loads(Path(os.environ["PROSEC_INPUTS"]).read_text())["call"]
    out = Path(os.environ["PROSEC_OUTPUT"])
    kind, target, key = call["kind"], call["target"], call["key"]
    started = time.time()
    sleep = table.get("sleep", 0)
    time.sleep(float(sleep.get(target, 0) if isinstance(sleep, dict) else sleep))
    span = {"start": started, "end": time.time()}
    (Path(os.environ["PROSEC_WORKSPACE"]) / "__span.json").write_text(json.dumps(span))
    if target in table.get("fail", []):
        (Path(os.environ["PROSEC_WORKSPACE"]) / "__error.md").write_text("# Error: refused\n")
        with log.open("a") as handle:
            handle.write(f"{kind} {target} {key}\n")
        return 0
    if kind == "question":
        answer: Any = table.get("answers", {}).get(call["question"])
        if isinstance(answer, list):
            answer = answer[min(_iteration(key), len(answer) - 1)]
        if answer is None:
            answer = call["options"][0] if call["options"] else False
        (out / "answer.json").write_text(json.dumps({"answer": answer}))
    elif kind in ("session", "resume"):
        context = json.dumps(call["args"], sort_keys=True)
        (out / "result.md").write_text(f"{kind} {target}: {call['prompt']} {context}\n")
    else:
        listed = table.get("calls", {}).get(target, {})
        args = json.dumps(call["args"], sort_keys=True)
        for name in call["returns"] or ["result"]:
            value = listed.get(name, f"{target}:{name}({args})")
            (out / f"{name}.json").write_text(json.dumps(value))
    with log.open("a") as handle:
        handle.write(f"{kind} {target} {key} {os.environ.get('PROSEC_MODEL', '')}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
