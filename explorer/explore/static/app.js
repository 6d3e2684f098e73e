// kafka-mc explore: the page. Plain JavaScript, no build step, no library. Every text a model
// or a file gave is put in the page with textContent (never as HTML); the one HTML the page
// inserts is the sequence diagram's SVG, which the server builds with every label escaped
// (explorer/report/svg.py). The path is in the URL: #path=0.3.1&at=2 (at: the step shown; the
// steps after it are kept for "Forward").
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
let info = null;      // /api/info: model, config, properties, the loaded counterexample
let full = [0];       // the path, with the steps after the cursor
let at = 0;           // the step shown
let view = null;      // /api/view of full[0..at]
let findTimer = null;
const OPEN_DEPTH = 3; // the state tree is open this deep (and wherever something changed)

const $ = (id) => document.getElementById(id);

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}

async function api(method, route, params, body) {
  const q = new URLSearchParams(params || {});
  const res = await fetch(route + (q.toString() ? "?" + q : ""), {
    method,
    headers: Object.assign({ "X-Token": TOKEN }, body ? { "Content-Type": "application/json" } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  const doc = await res.json().catch(() => ({ error: "HTTP " + res.status }));
  if (!res.ok) throw new Error(doc.error || "HTTP " + res.status);
  return doc;
}

function showError(e) {
  const p = $("error");
  p.textContent = e ? String(e.message || e) : "";
  p.hidden = !e;
}

const prefix = () => full.slice(0, at + 1).join(".");

// -- the URL ----------------------------------------------------------------------------------

function readHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  const p = (h.get("path") || "0").split(".").filter((x) => /^\d+$/.test(x)).map(Number);
  full = p.length ? p : [0];
  const a = h.get("at");
  at = a !== null && /^\d+$/.test(a) ? Math.min(Number(a), full.length - 1) : full.length - 1;
}

function go(path, cursor) {
  full = path;
  at = cursor === undefined ? path.length - 1 : cursor;
  const h = "path=" + full.join(".") + (at < full.length - 1 ? "&at=" + at : "");
  if (location.hash.slice(1) !== h) location.hash = h; // hashchange loads it
  else load();
}

// -- rendering ---------------------------------------------------------------------------------

function treeNode(n, depth) {
  const li = el("li", { class: [n.mark || "", n.mark || n.inner ? "hot" : ""].join(" ").trim() });
  const label = [el("b", { text: n.label })];
  if (n.value !== null) label.push(": " + n.value);
  if (n.mark === "changed") label.push(el("span", { class: "was", text: "was " + (n.was === null ? "(group)" : n.was) }));
  if (n.mark === "added") label.push(el("span", { class: "was", text: "new" }));
  if (!n.children.length) {
    li.append(el("span", { class: "lbl" }, ...label));
    return li;
  }
  const d = el("details", {}, el("summary", {}, ...label));
  if (n.inner || n.mark || depth < OPEN_DEPTH) d.open = true;
  d.append(el("ul", {}, ...n.children.map((c) => treeNode(c, depth + 1))));
  li.append(d);
  return li;
}

function renderState(v) {
  const box = $("state");
  box.replaceChildren();
  const root = v.state;
  box.append(el("ul", {}, treeNode(root, 0)));
  $("removed").replaceChildren(...v.removed.map((r) => el("li", { text: r + " (removed)" })));
  $("state-step").textContent = "at step " + at;
  $("fp").textContent = "fingerprint " + v.fingerprint;
}

function renderActions(v) {
  const box = $("actions");
  box.replaceChildren();
  let actor = null;
  for (const a of v.actions) {
    if (a.actor !== actor) {
      actor = a.actor;
      box.append(el("div", { class: "actor", text: actor }));
    }
    const seen = at < full.length - 1 && full[at + 1] === a.index;
    const b = el("button", {
      class: "action" + (seen ? " seen" : ""),
      "data-index": String(a.index),
      title: "take this action (" + a.kind + ")",
      text: a.text + (a.loops ? "  (changes nothing)" : ""),
      onclick: () => go(full.slice(0, at + 1).concat([a.index])),
    });
    const prev = el("details", {}, el("summary", { text: a.changes.length + " change" + (a.changes.length === 1 ? "" : "s") }),
      el("ul", { class: "changes" }, ...a.changes.map((c) => el("li", { text: c }))));
    box.append(el("div", { class: "action-row" }, b, prev));
  }
  $("action-count").textContent = "(" + v.actions.length + ")";
  $("deadlock").hidden = !v.deadlock;
}

function renderProps(v) {
  const t = $("props");
  t.replaceChildren(el("tr", {}, el("th", { text: "property" }), el("th", { text: "here" })));
  let failing = 0;
  for (const p of v.properties) {
    if (p.verdict === "fails" || p.verdict === "error") failing++;
    const cell = el("td", {}, el("span", { text: p.name }), el("span", { class: "muted", text: " (" + p.kind + ")" }));
    cell.title = p.doc;
    for (const w of p.why || []) cell.append(el("div", { class: "why", text: w }));
    const verdict = p.verdict + (p.triggered ? " (triggered)" : "");
    t.append(el("tr", { class: p.verdict.replace(" ", "-"), "data-property": p.name }, cell, el("td", { class: "verdict", text: verdict })));
  }
  $("prop-summary").textContent = failing ? failing + " failing" : "none failing";
}

function traceMarks() {
  // the loaded counterexample's steps, when the path shown follows it
  if (!info.trace) return null;
  const tp = info.trace.path.split(".").map(Number);
  const follows = (k) => k < tp.length && full.slice(0, k + 1).every((x, i) => x === tp[i]);
  return { tp, follows, loop: info.trace.loop_start, last: tp.length - 1 };
}

function renderPath(v) {
  const marks = traceMarks();
  $("seq").replaceChildren();
  if (v.sequence.svg) {
    const holder = el("div");
    holder.innerHTML = v.sequence.svg; // built by the server, every label escaped
    if (v.sequence.first > 1) $("seq").append(el("p", { class: "muted", text: "from step " + v.sequence.first }));
    $("seq").append(holder);
  } else $("seq").append(el("p", { class: "muted", text: "no step yet" }));
  const cols = v.steps.columns;
  const split = cols.some((c) => c !== "other");
  const heads = split ? cols.map((c) => (c === "other" ? "other changes" : c)) : ["what changed"];
  const t = $("steps");
  t.replaceChildren(el("tr", {}, ...["step", "action", ...heads, "diff"].map((h) => el("th", { text: h }))));
  for (const r of v.steps.rows) {
    const cls = [r.index === at ? "current" : ""];
    if (marks && marks.follows(r.index)) {
      if (marks.loop !== null && marks.loop !== undefined && r.index > marks.loop) cls.push("loop");
      if (r.index === marks.last) cls.push("violating");
    }
    const cells = (split ? cols : ["*"]).map((c) =>
      el("td", {}, el("ul", { class: "changes" }, ...r.changes.filter((x) => !split || x[0] === c).map((x) => el("li", { text: x[1] })))));
    const k = r.index;
    t.append(el("tr", { class: cls.join(" ").trim(), "data-step": String(k) },
      el("td", { class: "num", text: String(k), title: "show this step", onclick: () => go(full, k) }),
      el("td", { text: r.action || "initial state" }), ...cells,
      el("td", {}, el("button", { text: "A", title: "diff from this step", onclick: () => { $("diff-a").value = k; } }),
        el("button", { text: "B", title: "diff to this step", onclick: () => { $("diff-b").value = k; } }))));
  }
  const note = $("loop-note");
  note.hidden = !(marks && marks.loop !== null && marks.loop !== undefined);
  if (!note.hidden) note.textContent = "Lasso: the highlighted steps after step " + marks.loop + " repeat forever.";
}

function renderHeader() {
  $("where").textContent = "step " + at + " of " + (full.length - 1) + " · path " + prefix();
  $("back").disabled = at === 0;
  $("forward").disabled = at >= full.length - 1;
  const prop = $("export-prop").value;
  const q = new URLSearchParams({ path: prefix(), token: TOKEN });
  if (prop) q.set("property", prop);
  $("export-trace").href = "/api/export/trace?" + q;
  $("export-trace").textContent = "trace.json";
  $("export-graph").href = "/api/export/graph?" + new URLSearchParams({ token: TOKEN });
  $("diff-b").value = at;
  $("diff-a").value = Math.max(0, at - 1);
  $("init").value = String(full[0]);
}

async function load() {
  try {
    view = await api("GET", "/api/view", { path: prefix() });
    showError(null);
  } catch (e) {
    showError(e);
    return;
  }
  renderHeader();
  renderState(view);
  renderActions(view);
  renderProps(view);
  renderPath(view);
  document.body.dataset.ready = prefix();
}

// -- tools -------------------------------------------------------------------------------------

async function diffSteps() {
  const out = $("diff-out");
  try {
    const d = await api("GET", "/api/diff", { path: prefix(), a: $("diff-a").value, b: $("diff-b").value });
    const lines = d.changes.length ? d.changes : ["the two states are equal"];
    out.replaceChildren(el("li", { class: "muted", text: "step " + d.a + " → step " + d.b + ": " + d.changes.length + " changes" }),
      ...lines.map((c) => el("li", { text: c })));
    showError(null);
  } catch (e) { showError(e); }
}

function findStatus(s) {
  const st = $("find-status");
  let text = (s.running ? "searching: " : "") + "depth " + s.depth + ", " + (s.states || 0).toLocaleString() + " states, " + s.seconds + " s";
  if (s.found) text = "found " + s.found.what + " " + s.found.steps + " steps from here (" + s.states.toLocaleString() + " states searched)";
  else if (s.none) text = s.none;
  else if (s.error) text = "error: " + s.error;
  st.textContent = text;
  st.className = s.found ? "good" : s.error ? "bad" : "";
  $("find-go").disabled = !!s.running;
  $("find-cancel").disabled = !s.running;
}

async function pollFind() {
  try {
    const s = await api("GET", "/api/find");
    findStatus(s);
    if (s.running) { findTimer = setTimeout(pollFind, 250); return; }
    if (s.found) go(s.found.path.split(".").map(Number));
  } catch (e) { showError(e); }
}

async function find() {
  try {
    const s = await api("POST", "/api/find", {}, {
      path: prefix(), property: $("find-prop").value,
      max_states: Number($("find-states").value), max_seconds: Number($("find-seconds").value),
    });
    findStatus(s);
    clearTimeout(findTimer);
    findTimer = setTimeout(pollFind, 150);
  } catch (e) { showError(e); }
}

async function walk() {
  try {
    const r = await api("POST", "/api/walk", {}, { path: prefix(), steps: Number($("walk-n").value), seed: Number($("walk-seed").value) });
    go(r.path.split(".").map(Number));
  } catch (e) { showError(e); }
}

async function diffPaths() {
  const out = $("tdiff-out");
  try {
    const b = $("path-b").value.trim();
    const d = await api("GET", "/api/tracediff", { a: prefix(), b });
    const t = el("table", {}, el("tr", {}, ...["step", "this path (A)", "path B", ""].map((h) => el("th", { text: h }))));
    for (const r of d.rows)
      t.append(el("tr", { class: r.index === d.parted ? "parted" : "" }, el("td", { text: String(r.index) }),
        el("td", { text: r.a === null ? "—" : r.a }), el("td", { text: r.b === null ? "—" : r.b }),
        el("td", { class: r.same ? "same" : "", text: r.same ? "same state" : "differ" })));
    const head = d.parted === null ? "the two paths are the same" : "they part at step " + d.parted;
    out.replaceChildren(el("p", { text: head + "; their last states differ in " + d.ends.length + " places" }), t,
      el("ul", { class: "changes" }, ...d.ends.map((c) => el("li", { text: c }))));
    showError(null);
  } catch (e) { showError(e); }
}

function fillSelects() {
  const find = $("find-prop");
  const exp = $("export-prop");
  find.replaceChildren();
  exp.replaceChildren(el("option", { value: "", text: "(the property failing at its end)" }));
  const kinds = { always: "violation of", transition: "violation of", eventually: "violation of", reachable: "state where witness holds:" };
  for (const p of info.properties) {
    find.append(el("option", { value: p.name, text: (kinds[p.kind] || p.kind) + " " + p.name }));
    exp.append(el("option", { value: p.name, text: p.name }));
  }
  find.append(el("option", { value: "deadlock", text: "deadlock" }));
  const inits = $("init");
  inits.replaceChildren(...Array.from({ length: info.inits }, (_, i) => el("option", { value: String(i), text: "initial state " + i })));
  inits.hidden = info.inits < 2;
}

async function start() {
  if (!TOKEN) { showError("no token in the URL: open the URL kafka-mc explore printed"); return; }
  try { info = await api("GET", "/api/info"); } catch (e) { showError(e); return; }
  $("model").textContent = info.model;
  $("config").textContent = Object.entries(info.config).map(([k, v]) => k + " = " + v).join(" · ");
  fillSelects();
  if (info.trace) {
    const tr = info.trace;
    const head = $("trace-head");
    head.hidden = false;
    head.replaceChildren(el("b", { class: "bad", text: "Counterexample: " + tr.property + " (" + tr.kind + ")" }),
      " " + tr.doc + " · violated at step " + tr.violating_step + (tr.loop_start !== null ? ", a lasso looping back to step " + tr.loop_start : ""),
      ...tr.explanation.map((w) => el("div", { class: "why", text: "why: " + w })));
    $("jump").hidden = false;
    if (!location.hash) location.hash = "path=" + tr.path;
  }
  readHash();
  load();
}

$("back").addEventListener("click", () => { if (at > 0) go(full, at - 1); });
$("forward").addEventListener("click", () => { if (at < full.length - 1) go(full, at + 1); });
$("restart").addEventListener("click", () => go([full[0]]));
$("init").addEventListener("change", () => go([Number($("init").value)]));
$("jump").addEventListener("click", () => { if (info.trace) go(info.trace.path.split(".").map(Number)); });
$("only-changes").addEventListener("change", (e) => document.body.classList.toggle("only-changes", e.target.checked));
$("diff-go").addEventListener("click", diffSteps);
$("find-go").addEventListener("click", find);
$("find-cancel").addEventListener("click", () => api("POST", "/api/find/cancel", {}, {}).catch(showError));
$("walk-go").addEventListener("click", walk);
$("pin").addEventListener("click", () => { $("path-b").value = prefix(); });
$("tdiff-go").addEventListener("click", diffPaths);
$("export-prop").addEventListener("change", renderHeader);
window.addEventListener("hashchange", () => { readHash(); load(); });
document.addEventListener("keydown", (e) => {
  if (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") return;
  if (e.key === "ArrowLeft") $("back").click();
  if (e.key === "ArrowRight") $("forward").click();
});
start();
