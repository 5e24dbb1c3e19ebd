// prosec devtools: replays the receipt timeline over the server-drawn topology SVG.
// No framework, no build step: the server lays the DAG out; this file toggles classes.
"use strict";

const $ = (id) => document.getElementById(id);
const CAUSES = ["input", "self", "external"];
const state = {
  scene: null, position: 0, playing: false, timer: null, speed: 1,
  follow: true, selected: null, stream: null,
};

function token() { return sessionStorage.getItem("prosec-token") || ""; }

async function api(path) {
  const headers = token() ? { Authorization: "Bearer " + token() } : {};
  const response = await fetch(path, { headers });
  if (response.status === 401) { askToken(); throw new Error("unauthorized"); }
  if (!response.ok) throw new Error((await response.json()).error || response.statusText);
  return response.json();
}

function askToken() {
  $("login").hidden = false;
  $("login").onsubmit = (event) => {
    event.preventDefault();
    sessionStorage.setItem("prosec-token", $("token").value);
    $("login").hidden = true;
    start();
  };
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

const short = (hash) => (hash || "").replace("sha256:", "").slice(0, 12);

// -- the scene ---------------------------------------------------------------------------

function load(scene) {
  state.scene = scene;
  $("title").textContent = `${scene.kind}: ${scene.title} · ${scene.nodes.length} nodes · ${scene.edges.length} edges · ${scene.steps.length} receipts`;
  $("live").hidden = !scene.live;
  $("graph").innerHTML = scene.svg;  // drawn and escaped by the server
  for (const node of $("graph").querySelectorAll(".node")) {
    node.addEventListener("click", () => inspect(node.dataset.node));
    node.addEventListener("keydown", (e) => { if (e.key === "Enter") inspect(node.dataset.node); });
  }
  $("scrubber").max = scene.steps.length;
  seek(state.follow ? scene.steps.length : Math.min(state.position, scene.steps.length), false);
  if (state.selected) inspect(state.selected);
}

function nodeEl(name) { return $("graph").querySelector(`.node[data-node="${CSS.escape(name)}"]`); }

// Show the state after the first `position` receipts; animate the last one.
function seek(position, animate = true) {
  const steps = state.scene.steps;
  state.position = Math.max(0, Math.min(position, steps.length));
  $("scrubber").value = state.position;
  $("position").textContent = `${state.position} / ${steps.length}`;
  const last = new Map();
  for (const step of steps.slice(0, state.position)) last.set(step.node, step.status);
  for (const node of $("graph").querySelectorAll(".node")) {
    node.classList.remove("st-never", "st-rendered", "st-skipped", "st-failed", "current");
    node.classList.add("st-" + (last.get(node.dataset.node) || "never"));
  }
  for (const edge of $("graph").querySelectorAll(".edge.lit")) edge.classList.remove("lit");
  const step = steps[state.position - 1];
  if (step) {
    const node = nodeEl(step.node);
    if (node) {
      node.classList.add("current");
      if (animate) {
        node.classList.remove("flash-rendered", "flash-skipped", "flash-failed");
        void node.getBoundingClientRect();  // restart the animation
        node.classList.add("flash-" + step.status);
      }
    }
    for (const id of step.edges) {
      const edge = $("graph").querySelector(`.edge[data-edge="${id}"]`);
      if (edge) edge.classList.add("lit");
    }
    const moved = step.moved.length ? ` · moved ${step.moved.join(", ")}` : "";
    const why = step.error ? ` · ${step.error}: ${step.reason || ""}` : "";
    $("caption").textContent = `#${step.index} ${step.node} ${step.status} (woken by ${step.source})${moved}${why}` +
      (step.run ? ` · run ${step.run}` : "");
  } else {
    $("caption").textContent = steps.length ? "before the first receipt" : "no receipts yet";
  }
  meter(steps.slice(0, state.position));
}

function meter(steps) {
  const rows = CAUSES.map((cause) => ({ cause, fresh: 0, reused: 0 }));
  for (const step of steps) {
    let row = rows.find((r) => r.cause === step.cause);
    if (!row) { row = { cause: step.cause, fresh: 0, reused: 0 }; rows.push(row); }
    row.fresh += step.fresh; row.reused += step.reused;
  }
  const most = Math.max(1, ...rows.map((r) => r.fresh + r.reused));
  const box = $("meter");
  box.replaceChildren();
  for (const row of rows) {
    const bar = el("div", { class: "bar", "data-cause": row.cause });
    const fresh = el("span", { class: "fresh" });
    const reused = el("span", { class: "reused" });
    fresh.style.width = (100 * row.fresh / most) + "%";
    reused.style.width = (100 * row.reused / most) + "%";
    bar.append(fresh, reused);
    box.append(el("span", {}, row.cause), bar,
      el("span", { class: "muted", "data-meter": row.cause }, `${row.fresh} fresh · ${row.reused} reused`));
  }
}

// -- playback ----------------------------------------------------------------------------

function play(on) {
  state.playing = on;
  $("play").textContent = on ? "❚❚" : "▶";
  clearTimeout(state.timer);
  if (!on) return;
  if (state.position >= state.scene.steps.length) seek(0, false);
  const tick = () => {
    if (!state.playing) return;
    if (state.position >= state.scene.steps.length) { play(false); return; }
    seek(state.position + 1);
    state.timer = setTimeout(tick, 800 / state.speed);
  };
  state.timer = setTimeout(tick, 200 / state.speed);
}

// -- the inspector -----------------------------------------------------------------------

async function inspect(name) {
  state.selected = name;
  for (const node of $("graph").querySelectorAll(".node.selected")) node.classList.remove("selected");
  const box = nodeEl(name);
  if (box) box.classList.add("selected");
  let info;
  try { info = await api(`/api/nodes/${encodeURIComponent(name)}`); } catch (error) { return; }
  const pane = $("inspector");
  pane.replaceChildren(el("h2", {}, name));
  const contract = info.contract || {};
  const facts = el("table", {});
  const fact = (key, value) => facts.append(el("tr", {}, el("td", { class: "muted" }, key), el("td", {}, value ?? "—")));
  fact("wake source", info.wake_source);
  fact("cadence", info.cadence);
  fact("contract", short(contract.fingerprint));
  fact("facets", (info.facets || []).join(", "));
  fact("published", short(info.published));
  fact("tokens", `${info.cost.fresh} fresh · ${info.cost.reused} reused`);
  pane.append(el("h3", {}, "Contract"), facts);
  const wiring = el("ul", {});
  for (const e of info.inputs) wiring.append(el("li", {}, `reads ${e.facet} of ${e.producer}`));
  for (const e of info.subscribers) wiring.append(el("li", {}, `${e.subscriber} reads its ${e.facet}`));
  pane.append(wiring);
  if (contract.text) pane.append(el("pre", { class: "source" }, contract.text));
  const receipts = el("table", { class: "receipts" });
  for (const step of info.receipts.slice().reverse()) {
    const row = el("tr", {}, el("td", {}, "#" + step.index), el("td", { class: "status-" + step.status }, step.status),
      el("td", {}, step.cause), el("td", {}, step.moved.join(", ")), el("td", {}, short(step.hash)));
    row.addEventListener("click", () => seek(step.index + 1));
    receipts.append(row);
  }
  pane.append(el("h3", {}, `Receipts (${info.receipts.length})`), receipts);
  versions(pane, name, info.versions);
}

function versions(pane, name, list) {
  pane.append(el("h3", {}, `Versions (${list.length})`));
  if (!list.length) { pane.append(el("p", { class: "muted" }, "nothing published yet")); return; }
  const pick = (id, chosen) => {
    const select = el("select", { id });
    list.forEach((v, i) => select.append(el("option", { value: v }, `${i + 1}: ${short(v)}`)));
    select.value = chosen;
    return select;
  };
  const old = pick("diff-old", list[Math.max(0, list.length - 2)]);
  const now = pick("diff-new", list[list.length - 1]);
  const show = el("button", { type: "button", id: "diff-show" }, "Diff");
  const view = el("button", { type: "button", id: "artifact-show" }, "Artifact");
  const out = el("div", { id: "diff", class: "diff" });
  show.addEventListener("click", async () => {
    const diff = await api(`/api/nodes/${encodeURIComponent(name)}/diff?old=${encodeURIComponent(old.value)}&new=${encodeURIComponent(now.value)}`);
    out.replaceChildren();
    if (!diff.files.length) out.append(el("p", { class: "muted" }, "the two versions are identical"));
    for (const file of diff.files) {
      const pre = el("pre", { "data-path": file.path });
      for (const line of file.diff.split("\n")) {
        const kind = line.startsWith("@@") ? "hunk" : line.startsWith("+") && !line.startsWith("+++") ? "add"
          : line.startsWith("-") && !line.startsWith("---") ? "del" : "";
        pre.append(el("span", { class: kind }, line + "\n"));
      }
      out.append(el("div", {}, `${file.change}: ${file.path}`), pre);
    }
  });
  view.addEventListener("click", async () => {
    const artifact = await api(`/api/nodes/${encodeURIComponent(name)}/versions/${encodeURIComponent(now.value)}`);
    out.replaceChildren();
    for (const [path, text] of Object.entries(artifact.files)) out.append(el("div", {}, path), el("pre", {}, text));
  });
  pane.append(el("div", {}, old, " → ", now, " ", show, " ", view), out);
}

// -- live attach ---------------------------------------------------------------------------

async function attach() {
  const headers = token() ? { Authorization: "Bearer " + token() } : {};
  for (let attempt = 0; attempt < 1000; attempt++) {
    try {
      const response = await fetch(`/api/events?since=${state.scene.steps.length}`, { headers });
      if (!response.ok) throw new Error(response.statusText);
      $("status").textContent = "attached";
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          handle(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (error) { /* retry below */ }
    $("status").textContent = "reconnecting…";
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

function handle(block) {
  let event = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return;
  const payload = JSON.parse(data);
  if (event === "scene") { load(payload); return; }
  if (event === "status") {
    if (payload.type === "run") $("status").textContent = `run ${payload.run_id} ${payload.state}`;
    else if (payload.type === "tick") $("status").textContent = `cadence: ${payload.node} woke`;
    else if (payload.type === "error") $("status").textContent = payload.message;
    return;
  }
  if (event === "steps") {
    const steps = state.scene.steps;
    const atEnd = state.position >= steps.length;
    steps.length = payload.from;
    steps.push(...payload.steps);
    $("scrubber").max = steps.length;
    if (atEnd && !state.playing) {  // following live: play the new receipts as they land
      state.playing = true;
      $("play").textContent = "❚❚";
      const tick = () => {
        if (!state.playing) return;
        if (state.position >= state.scene.steps.length) { play(false); return; }
        seek(state.position + 1);
        state.timer = setTimeout(tick, 500 / state.speed);
      };
      clearTimeout(state.timer);
      tick();
    } else {
      $("position").textContent = `${state.position} / ${steps.length}`;
    }
    if (state.selected) inspect(state.selected);
  }
}

// -- start -----------------------------------------------------------------------------------

async function start() {
  let scene;
  try { scene = await api("/api/scene"); } catch (error) { $("status").textContent = error.message; return; }
  load(scene);
  document.body.dataset.ready = "true";
  if (scene.live && !state.stream) state.stream = attach();
}

$("play").addEventListener("click", () => play(!state.playing));
$("speed").addEventListener("change", () => { state.speed = Number($("speed").value); });
$("scrubber").addEventListener("input", () => { play(false); seek(Number($("scrubber").value)); });
start();
