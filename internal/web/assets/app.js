// Sluice dashboard: polls /api/overview (and /api/jobs/{id} for the
// selected job) about every second and draws what it gets. The server
// sends running totals; rates are differences between two polls, so the
// page keeps the previous answers. No framework, no build step.
"use strict";

const POLL_MS = 1000;
const WINDOW_MS = 5 * 60 * 1000; // the chart's span
const SVG = "http://www.w3.org/2000/svg";

const state = {
  ov: null,            // the last overview
  prevOv: null,        // the one before, for rates
  epochs: new Map(),   // epoch -> {t, latency} committed epochs seen
  inflight: [],        // [{t, age}] the oldest barrier in flight, per poll
  jobRates: new Map(), // job id -> {rate, busy}
  spark: new Map(),    // job id -> [{t, rate}]
  selected: null,      // selected job id
  detail: null, prevDetail: null,
  password: sessionStorage.getItem("sluice-password") || "",
  busyAction: false,
};

const $ = (id) => document.getElementById(id);

// ---- formatting ----

function fmtDur(s) {
  if (s == null || !isFinite(s)) return "–";
  if (s === 0) return "0";
  if (s < 0.01) return (s * 1000).toFixed(1) + " ms";
  if (s < 1) return Math.round(s * 1000) + " ms";
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + " s";
  if (s < 3600) return Math.floor(s / 60) + " min " + Math.floor(s % 60) + " s";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}

function fmtNum(n) {
  if (n == null || !isFinite(n)) return "–";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return Math.round(n).toLocaleString("en-US");
}

const fmtRate = (r) => (r == null ? "–" : fmtNum(r) + " rows/s");

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k != null) e.append(k);
  return e;
}

function svgEl(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// colour of a share of time waited, 0 green → 0.5 amber → 1 red.
function heat(x) {
  const stops = [[63, 185, 80], [210, 153, 34], [248, 81, 73]];
  x = Math.max(0, Math.min(1, x));
  const i = x < 0.5 ? 0 : 1, f = x < 0.5 ? x * 2 : (x - 0.5) * 2;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

let toastTimer = null;
function toast(msg, isError) {
  const t = $("toast");
  t.textContent = msg;
  t.className = "show" + (isError ? " error" : "");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (t.className = ""), isError ? 7000 : 3000);
}

// ---- the API ----

async function getJSON(path) {
  const r = await fetch(path, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw apiError(body, r.status);
  return body;
}

function apiError(body, status) {
  const e = (body && body.error) || { code: "XX000", message: "HTTP " + status };
  const err = new Error(e.code + ": " + e.message + (e.hint ? " (" + e.hint + ")" : ""));
  err.code = e.code;
  return err;
}

async function post(path, body) {
  const headers = { "X-Sluice-Action": "1", "Content-Type": "application/json" };
  if (state.password) headers["X-Sluice-Password"] = state.password;
  const r = await fetch(path, { method: "POST", headers, body: JSON.stringify(body || {}) });
  const data = await r.json();
  if (!r.ok) throw apiError(data, r.status);
  return data;
}

// askPassword shows the password dialog and resolves with what was typed
// (null if cancelled).
function askPassword() {
  const d = $("password-dialog");
  $("password-input").value = "";
  return new Promise((resolve) => {
    const done = (v) => {
      $("password-form").onsubmit = null;
      $("password-cancel").onclick = null;
      d.close();
      resolve(v);
    };
    $("password-form").onsubmit = (ev) => { ev.preventDefault(); done($("password-input").value); };
    $("password-cancel").onclick = () => done(null);
    d.showModal();
    $("password-input").focus();
  });
}

// act runs an action on the selected job, asking for the password first
// when the server needs one, and once more if it was refused.
async function act(action, body, label) {
  const id = state.selected;
  if (id == null || state.busyAction) return;
  if (state.ov && state.ov.password_required && !state.password) {
    const p = await askPassword();
    if (p == null) return;
    setPassword(p);
  }
  state.busyAction = true;
  renderJob();
  try {
    let res;
    try {
      res = await post(`/api/jobs/${id}/${action}`, body);
    } catch (e) {
      if (e.code !== "28P01") throw e;
      setPassword("");
      const p = await askPassword();
      if (p == null) throw e;
      setPassword(p);
      res = await post(`/api/jobs/${id}/${action}`, body);
    }
    toast(label + " " + res.name);
    if (res.dropped) select(null);
    else keepDetail(res);
  } catch (e) {
    toast(e.message, true);
  } finally {
    state.busyAction = false;
    poll();
  }
}

// keepDetail makes d the selected job's detail, keeping the one before
// for rates.
function keepDetail(d) {
  d.at = Date.now();
  state.prevDetail = state.detail && state.detail.id === d.id ? state.detail : null;
  state.detail = d;
}

function setPassword(p) {
  state.password = p;
  if (p) sessionStorage.setItem("sluice-password", p);
  else sessionStorage.removeItem("sluice-password");
}

// ---- polling ----

let pollTimer = null;
async function poll() {
  clearTimeout(pollTimer);
  try {
    const ov = await getJSON("/api/overview");
    absorb(ov);
    if (state.selected != null) await pollJob();
    $("updated").textContent = "updated " + new Date(ov.now_ms).toLocaleTimeString();
  } catch (e) {
    $("health").className = "pill warn";
    $("health").textContent = "no answer from the server";
    $("updated").textContent = e.message;
  }
  render();
  clearTimeout(pollTimer); // one timer, also when polls overlapped
  pollTimer = setTimeout(poll, POLL_MS);
}

async function pollJob() {
  const id = state.selected;
  try {
    const d = await getJSON(`/api/jobs/${id}`);
    if (d.id === state.selected) keepDetail(d);
  } catch (e) {
    if (e.code !== "42704") throw e;
    // Gone: dropped elsewhere, or by an action of this page still
    // waiting for its answer (which then tells).
    if (state.selected === id && !state.busyAction) {
      toast((state.detail ? state.detail.name : "job " + id) + " no longer exists");
      select(null);
    }
  }
}

// absorb folds an overview into the page's history.
function absorb(ov) {
  if (state.ov && ov.now_ms <= state.ov.now_ms) return; // an overlapping poll's older answer
  state.prevOv = state.ov;
  state.ov = ov;
  const now = ov.now_ms;
  for (const e of ov.epochs) state.epochs.set(e.epoch, { t: e.committed_ms, latency: e.latency_seconds });
  const age = ov.barrier.oldest_in_flight_seconds;
  const last = state.inflight[state.inflight.length - 1];
  if (age > 0 && (!last || last.age === 0 || last.t < now - age * 1000)) {
    state.inflight.push({ t: now - age * 1000, age: 0 }); // the barrier's injection: its ramp starts there
  }
  state.inflight.push({ t: now, age });
  for (const [k, v] of state.epochs) if (v.t < now - WINDOW_MS) state.epochs.delete(k);
  while (state.inflight.length && state.inflight[0].t < now - WINDOW_MS) state.inflight.shift();
  jobRates(ov);
}

// jobRates derives each job's rows/s and how busy its busiest fragment
// was (the share of time its actors neither waited for input nor for
// room downstream) since the previous poll.
function jobRates(ov) {
  const prev = state.prevOv;
  const rates = new Map();
  const prevJobs = new Map((prev ? prev.jobs : []).map((j) => [j.id, j]));
  const dt = prev ? (ov.now_ms - prev.now_ms) / 1000 : 0;
  for (const j of ov.jobs) {
    const p = prevJobs.get(j.id);
    if (!p || dt <= 0) { rates.set(j.id, { rate: null, busy: null }); continue; }
    const rate = Math.max(0, (j.rows_out - p.rows_out) / dt);
    const pw = new Map(p.waits.map((w) => [w.fragment, w]));
    let busy = null;
    for (const w of j.waits) {
      const q = pw.get(w.fragment);
      if (!q || w.actors === 0 || !w.inputs) continue; // a source's idle time is not measured
      const waited = (w.input_blocked_seconds - q.input_blocked_seconds) + (w.output_blocked_seconds - q.output_blocked_seconds);
      const b = Math.max(0, Math.min(1, 1 - waited / (dt * w.actors)));
      busy = busy == null ? b : Math.max(busy, b);
    }
    rates.set(j.id, { rate, busy });
    const s = state.spark.get(j.id) || [];
    s.push({ t: ov.now_ms, rate });
    while (s.length > 120) s.shift();
    state.spark.set(j.id, s);
  }
  state.jobRates = rates;
  for (const id of state.spark.keys()) if (!rates.has(id)) state.spark.delete(id);
}

// stalled: the oldest barrier in flight is old for this server, beyond
// 2 s and 10 times the median latency of its recent epochs.
function stalled() {
  const ov = state.ov;
  if (!ov) return false;
  const lat = ov.epochs.map((e) => e.latency_seconds).sort((a, b) => a - b);
  const median = lat.length ? lat[Math.floor(lat.length / 2)] : 0;
  return ov.barrier.oldest_in_flight_seconds > Math.max(2, 10 * median);
}

// holding: a busy job while barriers are stalled is the likely holder.
function holding(id) {
  const r = state.jobRates.get(id);
  return stalled() && r && r.busy != null && r.busy > 0.6;
}

// ---- rendering ----

function render() {
  if (!state.ov) return;
  renderStats();
  renderChart();
  renderJobs();
  renderJob();
}

function renderStats() {
  const b = state.ov.barrier, stuck = stalled();
  const lat = $("stat-latency");
  lat.textContent = fmtDur(b.latency_seconds);
  lat.dataset.seconds = b.latency_seconds.toFixed(3);
  $("card-latency").className = "stat" + (stuck ? " bad" : b.latency_seconds > 2 ? " warn" : "");
  $("stat-latency-hint").textContent = b.oldest_in_flight_seconds > b.last_commit_latency_seconds
    ? "oldest barrier in flight" : "last commit";
  const age = $("stat-age");
  age.textContent = fmtDur(b.committed_age_seconds);
  age.dataset.seconds = b.committed_age_seconds.toFixed(3);
  $("stat-inflight").textContent = b.in_flight;
  $("stat-inflight-hint").textContent = b.in_flight ? "oldest " + fmtDur(b.oldest_in_flight_seconds) : "none";
  $("stat-epoch").textContent = b.committed_epoch > 1e6 ? "…" + String(b.committed_epoch).slice(-6) : b.committed_epoch;
  $("stat-epoch").title = String(b.committed_epoch);
  $("stat-recoveries").textContent = b.recoveries + (b.recoveries === 1 ? " recovery" : " recoveries") + " since start";
  const h = $("health");
  if (b.recovering) { h.className = "pill warn"; h.textContent = "recovering"; }
  else if (stuck) { h.className = "pill bad"; h.textContent = "barrier stuck for " + fmtDur(b.oldest_in_flight_seconds); }
  else { h.className = "pill ok"; h.textContent = "barriers flowing"; }
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function renderChart() {
  const svg = $("latency-chart");
  const W = svg.clientWidth || 800, H = svg.clientHeight || 240;
  const pad = { l: 74, r: 12, t: 10, b: 24 };
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const now = state.ov.now_ms;
  const epochs = [...state.epochs.values()].sort((a, b) => a.t - b.t);
  const first = Math.min(epochs.length ? epochs[0].t : now, state.inflight.length ? state.inflight[0].t : now);
  const t0 = Math.min(Math.max(first, now - WINDOW_MS), now - 30 * 1000);
  const span = now - t0;
  $("chart-range").textContent = "last " + fmtDur(span / 1000);
  let ymax = 0;
  for (const e of epochs) ymax = Math.max(ymax, e.latency);
  for (const p of state.inflight) ymax = Math.max(ymax, p.age);
  ymax = niceMax(ymax * 1.1);
  const x = (t) => pad.l + ((t - t0) / span) * (W - pad.l - pad.r);
  const y = (v) => H - pad.b - (v / ymax) * (H - pad.t - pad.b);
  const grid = svgEl("g", { class: "grid" }), axis = svgEl("g", { class: "axis" });
  for (let i = 0; i <= 4; i++) {
    const v = (ymax * i) / 4;
    grid.append(svgEl("line", { x1: pad.l, x2: W - pad.r, y1: y(v), y2: y(v) }));
    const tx = svgEl("text", { x: pad.l - 8, y: y(v) + 4, "text-anchor": "end" });
    tx.textContent = fmtDur(v);
    axis.append(tx);
  }
  const step = span > 120e3 ? 60e3 : span > 40e3 ? 15e3 : 5e3;
  for (let ago = 0; ago <= span; ago += step) {
    const tx = svgEl("text", { x: x(now - ago), y: H - 6, "text-anchor": ago === 0 ? "end" : "middle" });
    tx.textContent = ago === 0 ? "now" : "−" + fmtDur(ago / 1000).replace(" 0 s", "");
    axis.append(tx);
  }
  svg.append(grid, axis);
  // Each committed epoch is a stem at its commit time as tall as its
  // latency: a gap is a time nothing committed, never interpolated.
  const vis = epochs.filter((e) => e.t >= t0);
  if (vis.length) {
    const base = y(0).toFixed(1);
    const stems = vis.map((e) => "M" + x(e.t).toFixed(1) + "," + base + "V" + Math.min(y(e.latency), y(0) - 1.5).toFixed(1)).join("");
    svg.append(svgEl("path", { class: "committed", d: stems }));
    const last = vis[vis.length - 1];
    svg.append(svgEl("circle", { class: "dot", cx: x(last.t), cy: y(last.latency), r: 3 }));
  }
  const inf = state.inflight.filter((p) => p.t >= t0);
  if (inf.length > 1) {
    svg.append(svgEl("path", { class: "inflight", d: inf.map((p, i) => (i ? "L" : "M") + x(p.t).toFixed(1) + "," + y(p.age).toFixed(1)).join("") }));
  }
  if (!vis.length && inf.length < 2) {
    const tx = svgEl("text", { class: "empty", x: W / 2, y: H / 2, "text-anchor": "middle" });
    tx.textContent = "waiting for the first committed epoch…";
    svg.append(tx);
  }
}

function renderJobs() {
  const tbody = document.querySelector("#jobs tbody");
  const jobs = state.ov.jobs;
  $("jobs-empty").hidden = jobs.length > 0;
  const rows = jobs.map((j) => {
    const r = state.jobRates.get(j.id) || {};
    const hot = holding(j.id);
    const tr = el("tr", { "data-job-id": j.id, "data-job-name": j.name, "data-status": j.status, "data-holding": hot ? "true" : "false" });
    tr.className = (j.id === state.selected ? "selected " : "") + (hot ? "holding" : "");
    tr.onclick = () => select(j.id);
    tr.append(
      el("td", {}, el("span", { class: "job-name", text: j.name }), el("span", { class: "job-kind", text: j.kind })),
      el("td", {}, el("span", { class: "badge " + j.status, text: j.status }), " ",
        hot ? el("span", { class: "badge hot", text: "holding the barrier" }) : null),
      el("td", { class: "num", text: j.freshness_seconds == null ? "–" : fmtDur(j.freshness_seconds) }),
      el("td", { class: "num", text: fmtRate(r.rate) }),
      el("td", {}, progressBar(j)),
      el("td", {}, busyBar(r.busy, hot)),
    );
    return tr;
  });
  tbody.replaceChildren(...rows);
}

function progressBar(j) {
  if (j.progress == null) return el("span", { class: "muted", text: "–" });
  const bar = el("div", { class: "progress" }, el("div", { style: `width:${j.progress.toFixed(1)}%` }));
  return el("span", { class: "progress-cell" }, bar, el("span", { class: "progress-label", text: j.progress.toFixed(1) + " %" }));
}

function busyBar(busy, hot) {
  if (busy == null) return el("span", { class: "muted", text: "–" });
  const b = el("span", { class: "busy" + (hot ? " hi" : ""), title: Math.round(busy * 100) + " % of the time working" },
    el("div", { style: `width:${Math.round(busy * 100)}%` }));
  return el("span", {}, b, el("span", { class: "progress-label", text: Math.round(busy * 100) + " %" }));
}

function select(id) {
  if (id === state.selected) return;
  state.selected = id;
  state.detail = state.prevDetail = null;
  $("drop-confirm").hidden = true;
  history.replaceState(null, "", id == null ? location.pathname : "#job/" + id);
  if (id != null) poll();
  else render();
}

function renderJob() {
  const d = state.detail, card = $("job");
  if (state.selected == null || !d) { card.hidden = true; return; }
  card.hidden = false;
  $("job-title").textContent = d.name;
  const st = $("job-status");
  st.textContent = d.status;
  st.className = "badge " + d.status;
  $("job-kind").textContent = d.kind + " · job " + d.id;
  $("job-definition").textContent = d.definition || "";
  const busy = state.busyAction || d.status === "dropping";
  $("btn-pause").disabled = busy || d.status === "paused";
  $("btn-resume").disabled = busy || d.status !== "paused";
  $("btn-rate").disabled = $("btn-rate-clear").disabled = busy;
  $("btn-cancel").disabled = busy || d.status !== "creating";
  $("btn-drop").disabled = busy;
  $("drop-name").textContent = d.name;
  const r = state.jobRates.get(d.id) || {};
  $("job-throughput").textContent = fmtRate(r.rate);
  drawSpark(state.spark.get(d.id) || []);
  $("job-freshness").textContent = d.freshness_seconds == null
    ? (d.progress == null ? "–" : "creating · " + d.progress.toFixed(1) + " %") : fmtDur(d.freshness_seconds);
  $("job-rate").textContent = d.rate_limit == null ? "none" : fmtNum(d.rate_limit) + " rows/s";
  $("job-guard").textContent = d.amplification_limit ? fmtNum(d.amplification_limit) + " · " + (d.amplification_action || "notice") : "off";
  renderGraph(d);
  renderJoins(d);
}

function drawSpark(points) {
  const svg = $("job-spark");
  const W = 200, H = 34;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.replaceChildren();
  const pts = points.filter((p) => p.rate != null);
  if (pts.length < 2) return;
  const m = Math.max(1, ...pts.map((p) => p.rate));
  const xy = pts.map((p, i) => [(i / (pts.length - 1)) * W, H - 2 - (p.rate / m) * (H - 4)]);
  const line = xy.map((p, i) => (i ? "L" : "M") + p[0].toFixed(1) + "," + p[1].toFixed(1)).join("");
  svg.append(svgEl("path", { class: "area", d: line + `L${W},${H}L0,${H}Z` }), svgEl("path", { class: "line", d: line }));
}

// ---- the streaming graph ----

const BOX_W = 230, BOX_H = 96, GAP_X = 130, GAP_Y = 22;

// layout puts each fragment in the column of its longest path from a
// fragment nothing feeds; upstream fragments of other jobs come first.
function layout(frags, edges) {
  const ids = new Set(frags.map((f) => f.id));
  const preds = new Map(frags.map((f) => [f.id, []]));
  for (const e of edges) if (ids.has(e.from) && ids.has(e.to)) preds.get(e.to).push(e.from);
  const depth = new Map();
  const visit = (id, seen) => {
    if (depth.has(id)) return depth.get(id);
    if (seen.has(id)) return 0; // a cycle: plans have none, but do not hang
    seen.add(id);
    const d = Math.max(-1, ...preds.get(id).map((p) => visit(p, seen))) + 1;
    depth.set(id, d);
    return d;
  };
  for (const f of frags) visit(f.id, new Set());
  const cols = [];
  for (const f of [...frags].sort((a, b) => (b.upstream - a.upstream) || (a.id - b.id))) {
    const c = depth.get(f.id);
    (cols[c] = cols[c] || []).push(f);
  }
  const pos = new Map();
  const tallest = Math.max(...cols.map((c) => (c ? c.length : 0)));
  const H = tallest * BOX_H + (tallest - 1) * GAP_Y;
  cols.forEach((col, ci) => {
    if (!col) return;
    const h = col.length * BOX_H + (col.length - 1) * GAP_Y;
    col.forEach((f, ri) => pos.set(f.id, { x: ci * (BOX_W + GAP_X), y: (H - h) / 2 + ri * (BOX_H + GAP_Y) }));
  });
  return { pos, W: cols.length * BOX_W + (cols.length - 1) * GAP_X, H };
}

// fragRates: per fragment, rows/s out and the shares of time its actors
// waited for input and for room downstream, since the previous poll.
function fragRates(d, prev) {
  const out = new Map();
  const p = new Map(((prev && prev.fragments) || []).map((f) => [f.id, f]));
  const dt = prev ? (d.at - prev.at) / 1000 : 0;
  for (const f of d.fragments) {
    const q = p.get(f.id);
    if (!q || dt <= 0 || !f.actors) { out.set(f.id, null); continue; }
    const n = f.actors * dt;
    out.set(f.id, {
      rows: Math.max(0, (f.rows_out - q.rows_out) / dt),
      inWait: Math.min(1, Math.max(0, (f.input_blocked_seconds - q.input_blocked_seconds) / n)),
      outWait: Math.min(1, Math.max(0, (f.output_blocked_seconds - q.output_blocked_seconds) / n)),
    });
  }
  return out;
}

function renderGraph(d) {
  const svg = $("job-graph");
  const { pos, W, H } = layout(d.fragments, d.edges);
  const rates = fragRates(d, state.prevDetail);
  const pad = 14;
  svg.setAttribute("width", W + 2 * pad);
  svg.setAttribute("height", H + 2 * pad);
  svg.setAttribute("viewBox", `${-pad} ${-pad} ${W + 2 * pad} ${H + 2 * pad}`);
  svg.replaceChildren();
  for (const e of d.edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    const r = rates.get(e.from);
    const x1 = a.x + BOX_W, y1 = a.y + BOX_H / 2, x2 = b.x, y2 = b.y + BOX_H / 2, mx = (x1 + x2) / 2;
    const path = svgEl("path", { class: "edge", d: `M${x1},${y1}C${mx},${y1} ${mx},${y2} ${x2 - 4},${y2}`,
      stroke: r ? heat(r.outWait) : "#484f58", "data-from": e.from, "data-to": e.to });
    const label = svgEl("text", { class: "edge-label", x: mx, y: (y1 + y2) / 2 - 6, "text-anchor": "middle" });
    label.textContent = e.kind.replace("_", "-") + (r ? " " + Math.round(r.outWait * 100) + " %" : "");
    const title = svgEl("title");
    title.textContent = `fragment ${e.from} → ${e.to} (${e.kind}): the sender waited for room ${r ? Math.round(r.outWait * 100) + " %" : "?"} of the time`;
    path.append(title);
    svg.append(path, label);
  }
  for (const f of d.fragments) {
    const p = pos.get(f.id), r = rates.get(f.id);
    const fo = svgEl("foreignObject", { x: p.x, y: p.y, width: BOX_W, height: BOX_H });
    const busy = r ? 1 - r.inWait - r.outWait : 0;
    const hot = r && f.inputs && busy > 0.6 && stalled();
    const box = el("div", { class: "frag" + (f.upstream ? " upstream" : "") + (hot ? " hot" : ""), "data-fragment": f.id },
      el("div", { class: "fh" }, el("span", { text: f.upstream ? f.name : "fragment " + f.id }),
        el("span", { class: "muted", text: f.upstream ? "upstream" : f.actors + (f.actors === 1 ? " actor" : " actors") })),
      el("div", { class: "ops", text: f.operators.join(" ← ") }),
      el("div", { class: "fs", text: !r ? fmtNum(f.rows_out) + " rows out"
        : fmtRate(r.rows) + (f.inputs ? ` · busy ${Math.round(Math.max(0, busy) * 100)} %` : " · source") }));
    fo.append(box);
    svg.append(fo);
  }
}

// ---- joins ----

function renderJoins(d) {
  const box = $("job-joins");
  if (!d.joins.length) { box.replaceChildren(el("p", { class: "muted", text: "This job has no join." })); return; }
  box.replaceChildren(...d.joins.map((j) => joinView(j, d)));
}

function joinView(j, d) {
  const over = d.amplification_limit > 0 && j.max > d.amplification_limit;
  const stats = el("dl", {},
    el("dt", { text: "fragment" }), el("dd", { text: String(j.fragment) }),
    el("dt", { text: "probe rows" }), el("dd", { text: fmtNum(j.probe_rows) }),
    el("dt", { text: "rows matched" }), el("dd", { text: fmtNum(j.matched_rows) }),
    el("dt", { text: "per probe row: mean" }), el("dd", { text: j.probe_rows ? fmtNum(j.matched_rows / j.probe_rows) : "–" }),
    el("dt", { text: "p50" }), el("dd", { text: upTo(j.p50) }),
    el("dt", { text: "p99" }), el("dd", { text: upTo(j.p99) }),
    el("dt", { text: "max" }), el("dd", { text: fmtNum(j.max) }));
  const left = el("div", {}, stats, over ? el("div", { class: "warn-line", text: "over the guard's limit of " + fmtNum(d.amplification_limit) }) : null);
  return el("div", { class: "join", "data-fragment": j.fragment }, left, histogram(j), heavyKeys(j));
}

// upTo is a quantile's bucket bound: "0" or "≤ n".
const upTo = (v) => (v === 0 ? "0" : "≤ " + fmtNum(v));

// histogram draws the probe rows per bucket of matches, log-scaled, from
// the first bucket to the last one used, as HTML bars.
function histogram(j) {
  let last = 0;
  j.buckets.forEach((b, i) => { if (b.count) last = i; });
  const bs = j.buckets.slice(0, Math.max(last + 1, 6));
  const m = Math.log10(1 + Math.max(1, ...bs.map((b) => b.count)));
  const every = Math.ceil(bs.length / 7);
  const cols = bs.map((b, i) => {
    const h = b.count ? Math.max(3, (Math.log10(1 + b.count) / m) * 100) : 0;
    const label = i % every === 0 || i === bs.length - 1 ? (b.up_to == null ? "more" : fmtNum(b.up_to)) : "";
    return el("div", { class: "hcol", title: `${fmtNum(b.count)} probe rows matched ${b.up_to == null ? "more" : "≤ " + fmtNum(b.up_to)} rows` },
      el("div", { class: "hbar-box" }, el("div", { class: "hbar" + (i === last && i > 8 ? " heavy" : ""), style: `height:${h}%` })),
      el("div", { class: "hlabel", text: label }));
  });
  return el("div", {}, el("div", { class: "muted small", text: "probe rows by rows matched (≤ bucket bound, log scale)" }),
    el("div", { class: "hist" }, ...cols));
}

function heavyKeys(j) {
  if (!j.heavy_keys.length) return el("div", { class: "muted small", text: "no heavy keys yet" });
  const m = Math.max(...j.heavy_keys.map((h) => h.matches));
  const list = el("ul", { class: "heavy-keys" }, ...j.heavy_keys.map((h) =>
    el("li", { class: "heavy-key", "data-key": h.key },
      el("code", { text: h.key, title: h.key }),
      el("div", { class: "bar", style: `width:${Math.max(2, (h.matches / m) * 100)}%` }),
      el("span", { text: fmtNum(h.matches) + " rows" }))));
  return el("div", {}, el("div", { class: "muted small", text: "heavy keys: most rows one probe row matched" }), list);
}

// ---- wiring ----

function wire() {
  $("btn-pause").onclick = () => act("pause", {}, "Paused");
  $("btn-resume").onclick = () => act("resume", {}, "Resumed");
  $("btn-rate").onclick = () => {
    const v = $("rate-input").value.trim();
    if (v === "" || !/^\d+$/.test(v)) { toast("Give the rate limit in rows per second (a whole number ≥ 0).", true); return; }
    act("rate-limit", { rows_per_second: Number(v) }, "Rate limit " + v + " rows/s on");
  };
  $("btn-rate-clear").onclick = () => act("rate-limit", { rows_per_second: null }, "No rate limit on");
  $("btn-cancel").onclick = () => act("cancel", {}, "Cancelled");
  $("btn-drop").onclick = () => { $("drop-confirm").hidden = false; };
  $("btn-drop-back").onclick = () => { $("drop-confirm").hidden = true; };
  $("btn-drop-confirm").onclick = () => { $("drop-confirm").hidden = true; act("drop", {}, "Dropped"); };
  window.addEventListener("resize", () => state.ov && renderChart());
  const m = /^#job\/(\d+)$/.exec(location.hash);
  if (m) state.selected = Number(m[1]);
}

wire();
poll();
