/* page_gate.js: the gate page (architecture.md 9). Recomputes, in float32 exactly as PyTorch does,
 *   hard:  power = FiLM_dec( [p > threshold] * power_raw )
 *   soft:  power = FiLM_dec( smoothstep(p) * power_raw ),  smoothstep(p) = p*p*(3 - 2p)
 *   FiLM_dec(x) = (1 + gamma_dec) * x + beta_dec   (per sample and device)
 * from each device's captured gate logit (float32, exact; p = sigmoid(logit) recomputed in float32 so the
 * threshold decision does not depend on how gate_prob was stored), raw power and the output FiLM's gamma / beta,
 * and compares it with the captured head power (hard, threshold from the checkpoint) or the soft-gate run's output.
 * Record names come from the view (page().data.names, nilmbuild/site/views/gate.py), never literals. The page
 * state lives in module variables set once by run(); each build, draw and update function does one job.
 */
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { palette } from "./colormaps.js";
import { escapeHTML, patchHTML } from "./dom_patch.js";
import { controls, fmt, inTasks, onScreen, page, ready } from "./core.js";
import { kit } from "./film_kit.js";
import { plot2d } from "./plot2d.js";
import { stepTime } from "./time_axis.js";
import { gateWhatIf } from "./whatif_gate.js";

var fr = Math.fround;

/* ---------- the page's state (one page per document; set by run) ---------- */
var N, cap, extra, devs, state, aggW, cur = null, plot = null;
var ui = {};   // the mode select and threshold range

function sigmoid32(x) { return fr(1 / (1 + Math.exp(-x))); }
function smooth32(p) { return fr(fr(p * p) * fr(3 - fr(2 * p))); }
function film32(x, g, b) {
  var y = fr(fr(fr(1 + g) * x) + b);
  if (y !== y) return 0;
  if (y === Infinity) return 1e4;
  if (y === -Infinity) return -1e4;
  return y;
}

// Recompute one device's gated power for one sample. Exposed for tests as nilmbuild.test.gate.recompute.
function recompute(cap, devs, dev, i, threshold, mode) {
  var name = devs[dev];
  var logit = cap.slice(N.heads[name].gate_logit, i), raw = cap.slice(N.heads[name].power_raw, i);
  var p = new Float32Array(logit.length);
  for (var k = 0; k < p.length; k++) p[k] = sigmoid32(logit[k]);
  var D = devs.length, g = cap.get(N.film_dec.gamma)[i * D + dev], b = cap.get(N.film_dec.beta)[i * D + dev];
  var L = p.length, gate = new Float32Array(L), gated = new Float32Array(L), out = new Float32Array(L);
  for (var t = 0; t < L; t++) {
    gate[t] = mode === "soft" ? smooth32(p[t]) : (p[t] > threshold ? 1 : 0);
    gated[t] = fr(gate[t] * raw[t]);
    out[t] = film32(gated[t], g, b);
  }
  return { logit: logit, p: p, raw: raw, gate: gate, gated: gated, power: out, gamma: g, beta: b };
}

// The captured tensor the recomputation must equal, and the precision it was stored with.
function captured(cap, devs, dev, i, mode) {
  var L, D = devs.length;
  if (mode === "soft") {
    var all = cap.slice(N.soft_output, i); L = all.length / D;
    return { values: all.subarray(dev * L, (dev + 1) * L), name: N.soft_output, storage: kit.storage(cap, N.soft_output) };
  }
  var nm = N.heads[devs[dev]].power;
  return { values: cap.slice(nm, i), name: nm, storage: kit.storage(cap, nm) };
}

// Does `x` (float32) equal the captured value `c` at the captured record's storage precision?
// ulps > 0 also accepts that many float16 steps (soft gate: PyTorch's vectorised sigmoid/exp may differ from
// ours by one float32 ulp, which smoothstep passes on).
function same(x, c, storage, ulps) {
  if (x === c) return true;
  if (storage === "f16" && kit.f16round(x) === c) return true;
  if (!ulps) return false;
  var a = Math.abs(c), step = storage === "f16" ? Math.pow(2, Math.max(-14, Math.floor(Math.log2(a || 6e-5))) - 10)
    : Math.pow(2, Math.max(-126, Math.floor(Math.log2(a || 1e-38))) - 23);
  return Math.abs(x - c) <= ulps * step;
}

/* ---------- the curve view: smoothstep vs hard step over the histogram of p ---------- */
function curveFrame(c, top) {   // the plot box (below the legend's last row, `top`) and its scales
  var m = { l: 56, r: 56, t: Math.max(26, top + 10), b: 40 }, pw = c.W - m.l - m.r, ph = c.H - m.t - m.b;
  return { m: m, pw: pw, ph: ph, X: function (x) { return m.l + x * pw; }, Y: function (y) { return m.t + (1 - y) * ph; } };
}
function drawHistogram(g, f) {   // histogram of the captured p
  var m = f.m, bins = 25, hist = new Array(bins).fill(0), p = cur.p;
  for (var t = 0; t < p.length; t++) hist[Math.min(bins - 1, Math.floor(p[t] * bins))]++;
  var hmax = Math.max.apply(null, hist) || 1;
  g.fillStyle = "#d0d7de";
  for (var k = 0; k < bins; k++) {
    var hh = (hist[k] / hmax) * f.ph;
    g.fillRect(f.X(k / bins) + 1, m.t + f.ph - hh, f.pw / bins - 2, hh);
  }
  return hmax;
}
function drawCurveAxes(g, f, W, H, hmax) {   // grid, ticks and axis titles
  var m = f.m, pw = f.pw, ph = f.ph, X = f.X, Y = f.Y;
  g.strokeStyle = "#e6e9ed"; g.lineWidth = 1;
  for (var q = 0; q <= 10; q += 2) { g.beginPath(); g.moveTo(X(q / 10), m.t); g.lineTo(X(q / 10), m.t + ph); g.stroke();
    g.beginPath(); g.moveTo(m.l, Y(q / 10)); g.lineTo(m.l + pw, Y(q / 10)); g.stroke(); }
  g.strokeStyle = "#57606a"; g.strokeRect(m.l + 0.5, m.t + 0.5, pw, ph);
  g.fillStyle = "#57606a"; g.textAlign = "center";
  for (q = 0; q <= 10; q += 2) g.fillText((q / 10).toFixed(1), X(q / 10), m.t + ph + 12);
  g.textAlign = "right";
  for (q = 0; q <= 10; q += 2) g.fillText((q / 10).toFixed(1), m.l - 6, Y(q / 10));
  g.textAlign = "left";
  g.fillText(String(hmax), m.l + pw + 6, m.t + 4); g.fillText("0", m.l + pw + 6, m.t + ph);
  g.fillStyle = "#1b1f24"; g.textAlign = "center";
  g.fillText("gate probability p = sigmoid(logit)", m.l + pw / 2, H - 10);
  g.save(); g.translate(14, m.t + ph / 2); g.rotate(-Math.PI / 2); g.fillText("gate value (× raw power)", 0, 0); g.restore();
  g.save(); g.translate(W - 12, m.t + ph / 2); g.rotate(Math.PI / 2); g.fillStyle = "#57606a"; g.fillText("count of the " + cur.p.length + " steps", 0, 0); g.restore();
}
function drawGateCurves(g, f) {   // smoothstep, the hard step at the threshold, the cursor's point
  var m = f.m, X = f.X, Y = f.Y;
  g.lineWidth = state.mode === "soft" ? 3 : 1.75; g.strokeStyle = palette[0]; g.beginPath();
  for (var i = 0; i <= 200; i++) { var x = i / 200, y = x * x * (3 - 2 * x); if (i) g.lineTo(X(x), Y(y)); else g.moveTo(X(x), Y(y)); }
  g.stroke();
  var th = state.threshold;
  g.lineWidth = state.mode === "hard" ? 3 : 1.75; g.strokeStyle = palette[3]; g.beginPath();
  g.moveTo(X(0), Y(0)); g.lineTo(X(th), Y(0)); g.lineTo(X(th), Y(1)); g.lineTo(X(1), Y(1)); g.stroke();
  g.setLineDash([5, 4]); g.strokeStyle = "#1b1f24"; g.lineWidth = 1;
  g.beginPath(); g.moveTo(X(th) + 0.5, m.t); g.lineTo(X(th) + 0.5, m.t + f.ph); g.stroke(); g.setLineDash([]);
  g.fillStyle = "#1b1f24"; g.textAlign = th > 0.8 ? "right" : "left";
  g.fillText("threshold " + th.toFixed(2), X(th) + (th > 0.8 ? -6 : 6), m.t + 10);
  var pc = cur.p[state.cursor], gc = cur.gate[state.cursor];
  g.fillStyle = "#000"; g.beginPath(); g.arc(X(pc), Y(gc), 4.5, 0, 2 * Math.PI); g.fill();
}
function curveLegend(g, W) {   // legend items laid out in rows that fit the canvas (a phone wraps them)
  g.font = kit.FONT; var lx = 56, ly = 12, out = [];
  [[palette[0], "smoothstep(p) = p²(3 − 2p)  (training)"], [palette[3], "hard: p > threshold  (inference)"],
   ["#d0d7de", "captured p, " + kit.devName(devs[state.dev])], ["#000", "cursor step"]].forEach(function (e) {
    var w = 18 + g.measureText(e[1]).width;
    if (lx > 56 && lx + w > W - 8) { lx = 56; ly += 16; }
    out.push({ color: e[0], text: e[1], x: lx, y: ly }); lx += w + 16;
  });
  return { items: out, bottom: ly };
}
function drawCurveLegend(g, leg) {
  g.font = kit.FONT; g.textAlign = "left";
  leg.items.forEach(function (e) { g.fillStyle = e.color; g.fillRect(e.x, e.y - 4, 14, 8); g.fillStyle = "#1b1f24"; g.fillText(e.text, e.x + 18, e.y); });
}
function drawCurve() {
  var c = kit.ctx2d(document.getElementById("gate-curve")), g = c.g, leg = curveLegend(g, c.W), f = curveFrame(c, leg.bottom);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.W, c.H);
  var hmax = drawHistogram(g, f);
  drawCurveAxes(g, f, c.W, c.H, hmax);
  drawGateCurves(g, f);
  drawCurveLegend(g, leg);
}

/* ---------- the time view: aggregate, p and gate, power ---------- */
function powerSeries(i, d, w, L) {
  var tp = cap.slice(N.target_power, i).subarray(d * L, (d + 1) * L);
  var series = [
    { name: "raw power", y: kit.mapArray(cur.raw, w.f), kind: "line", color: "#8c959f", width: 1.25 },
    { name: "ground truth", y: kit.mapArray(tp, w.f), kind: "area", color: palette[2], width: 1 },
    { name: "gated → FiLM (" + state.mode + ")", y: kit.mapArray(cur.power, w.f), kind: "line", color: palette[3], width: 1.75 },
  ];
  if (state.mode === "soft") {
    series.push({ name: "captured soft run", y: kit.mapArray(captured(cap, devs, d, i, "soft").values, w.f),
                  kind: "line", color: "#000", width: 1, dash: [3, 3] });
  }
  return series;
}
function buildPlot() {
  var i = state.sample, d = state.dev, name = devs[d], w = kit.watts(extra, name), timeCanvas = document.getElementById("gate-time");
  var agg = kit.mapArray(cap.slice(N.input, i).subarray(0, cap.record(N.input).shape[2]), aggW.f);
  var L = cur.p.length, thrLine = new Float32Array(L).fill(state.threshold);
  var opts = {
    title: kit.devName(name) + " · " + kit.sampleLabel(extra, i), x: kit.timeAxis(extra, i, L),
    lanes: [
      { title: "aggregate input", height: 0.7, y: { label: "aggregate", unit: aggW.unit },
        series: [{ name: "aggregate", y: agg, kind: "area", color: palette[0], width: 1 }] },
      { title: "gate probability p (shaded: gate value)", height: 0.8, y: { label: "p", min: 0, max: 1.02 },
        series: [{ name: "gate value", y: cur.gate, kind: "area", color: palette[1], width: 1 },
                 { name: "p", y: cur.p, kind: "line", color: palette[4], width: 1.5 },
                 { name: "threshold", y: thrLine, kind: "line", color: "#1b1f24", width: 1, dash: [5, 4] }] },
      { title: "power of " + kit.devName(name), height: 1.5, y: { label: "power", unit: w.unit }, series: powerSeries(i, d, w, L),
        below0: "below 0 W: raw output, a closed gate's output-FiLM offset β (post-processing clamps it to 0)" },
    ],
  };
  if (!plot) {
    plot = plot2d.create(timeCanvas, opts);
    plot2d.hover(plot, function (x) { state.cursor = Math.round(x); drawCurve(); updateReadout(); });
  } else {
    plot.opts = opts;
  }
  plot.setCursor(state.cursor);
  timeCanvas.setAttribute("aria-label", "Gate probability and power over time for " + kit.devName(name));
}

/* ---------- readout, check badge, device table ---------- */
function updateReadout() {
  var i = state.sample, d = state.dev, t = state.cursor, w = kit.watts(extra, devs[d]), readout = document.getElementById("gate-readout");
  var ref = captured(cap, devs, d, i, state.mode);
  var x = cur.power[t], c = ref.values[t];
  kit.setReadout(readout, [
    ["time", t, stepTime(kit.clock(extra, i), t), "t"],
    ["logit", cur.logit[t], undefined, "logit"],
    ["p = sigmoid(logit)", cur.p[t], undefined, "p"],
    ["gate", cur.gate[t], undefined, "gate"],
    ["raw power", cur.raw[t], fmt(cur.raw[t], 6) + " (" + fmt(w.f(cur.raw[t]), 5) + " W)", "raw"],
    ["γ_dec, β_dec", cur.gamma, fmt(cur.gamma, 5) + ", " + fmt(cur.beta, 5), "gamma"],
    ["output while the gate is closed", cur.beta, "β_dec = " + fmt(cur.beta, 5) + " (" + fmt(w.f(cur.beta), 5) + " W; post-processing clamps it)", "closed"],
    ["recomputed", x, fmt(x, 6) + (ref.storage === "f16" ? " → float16 " + fmt(kit.f16round(x), 6) : "") +
      " (" + fmt(w.f(ref.storage === "f16" ? kit.f16round(x) : x), 5) + " W)", "recomputed"],
    ["captured", c, fmt(c, 6) + " (" + fmt(w.f(c), 5) + " W)", "captured"],
    ["to watts", null, w.desc, "scaler"],
  ]);
  readout.querySelector("[data-key=captured]").title = ref.name + " [" + i + "], stored as " + ref.storage;
}
function updateCheck() {
  var i = state.sample, d = state.dev, ref = captured(cap, devs, d, i, state.mode), n = 0, L = cur.power.length;
  var ulps = state.mode === "soft" ? 1 : 0, check = document.getElementById("gate-check");
  for (var t = 0; t < L; t++) if (same(cur.power[t], ref.values[t], ref.storage, ulps)) n++;
  var atDefault = state.mode === "soft" || state.threshold === extra.gate_thresholds[d];
  check.innerHTML = "";
  var badge = document.createElement("span");
  badge.className = "kit-badge " + (n === L ? "ok" : "off");
  badge.id = "gate-match";
  badge.dataset.matches = String(n);
  badge.textContent = n + " / " + L + " steps equal the captured " + ref.name;
  check.appendChild(badge);
  var note = document.createElement("span");
  note.textContent = " (" + (ref.storage === "f16" ? "compared at the float16 precision it is stored with" : "compared exactly") +
    (state.mode === "soft" ? ", within one stored-precision step" : "") +
    (atDefault ? ")" : "; the capture used threshold " + extra.gate_thresholds[d] + ", so moving it changes the steps near it)");
  check.appendChild(note);
}
function tableRow(name, d, i, L, ts, tp, hours) {   // one device: ON share (gate, truth) and energy (gated, truth)
  var own = state.threshold === extra.gate_thresholds[state.dev];  // slider at rest: each device's own threshold
  var r = recompute(cap, devs, d, i, own ? extra.gate_thresholds[d] : state.threshold, state.mode), w = kit.watts(extra, name);
  var on = 0, truth = 0, e = 0, et = 0;
  for (var t = 0; t < L; t++) {
    if (r.gate[t] > 0.5) on++;
    if (ts[d * L + t] > 0.5) truth++;
    e += w.f(r.power[t]) * hours; et += w.f(tp[d * L + t]) * hours;
  }
  return "<tr" + (d === state.dev ? " style='font-weight:600'" : "") + "><td>" + escapeHTML(kit.devName(name)) + "</td><td>" +
    (100 * on / L).toFixed(1) + "%</td><td>" + (100 * truth / L).toFixed(1) + "%</td><td>" + fmt(e / 1000, 3) +
    "</td><td>" + fmt(et / 1000, 3) + "</td></tr>";
}
function updateTable() {
  var i = state.sample, L = cur.p.length, table = document.getElementById("gate-table");
  var html = "<thead><tr><th scope=col>device</th><th scope=col>ON (gate)</th><th scope=col>ON (truth)</th><th scope=col>energy kWh</th><th scope=col>truth kWh</th></tr></thead><tbody>";
  var ts = cap.slice(N.target_state, i), tp = cap.slice(N.target_power, i), hours = (extra.resample_s || 60) / 3600;
  devs.forEach(function (name, d) { html += tableRow(name, d, i, L, ts, tp, hours); });
  var caption = (state.threshold === extra.gate_thresholds[state.dev]
    ? "Each device at its own calibrated threshold (" + devs.map(function (n, d) { return extra.gate_thresholds[d]; }).join(", ") + ")"
    : "Every device at threshold " + state.threshold.toFixed(2)) +
    ", same gate mode; energy of the gated power after output FiLM over the " + page().model.window_hours + "-hour window.";
  patchHTML(table, html + "</tbody><caption style='caption-side:bottom;text-align:left;color:var(--muted);font-size:0.78rem'>" +
    caption + "</caption>");
}
function recomputeCurrent() { cur = recompute(cap, devs, state.dev, state.sample, state.threshold, state.mode); }
var laterPlot = null;   // the time view, drawn when on screen (core.onScreen; set in the first start step)
function update() {
  recomputeCurrent();
  laterPlot(buildPlot); drawCurve(); updateReadout(); updateCheck(); updateTable(); if (wi) wi.update();
}
var wi = null;  // the live what-if panel (whatif_gate.js)

/* ---------- controls and set-up ---------- */
function onDevice(v) {   // each device has its own calibrated threshold: follow it unless the reader moved the slider
  var atDefault = state.threshold === extra.gate_thresholds[state.dev];
  state.dev = v;
  if (atDefault) ui.thr.setValue(extra.gate_thresholds[v]); else update();
}
function buildControls() {
  var controlsEl = document.getElementById("nb-controls");
  kit.sampleSelect(controlsEl, extra, function (v) { state.sample = v; update(); });
  kit.deviceSelect(controlsEl, devs, onDevice);
  ui.modeSel = controls.select(controlsEl, "Gate", [{ value: "hard", label: "hard threshold (inference)" },
    { value: "soft", label: "smoothstep (training)" }], "hard", function (v) { state.mode = v; update(); });
  ui.modeSel.id = "ctl-mode";
  ui.thr = kit.range(controlsEl, "ctl-threshold", "Threshold", 0, 1, 0.01, state.threshold,
    function (v) { return v.toFixed(2); }, function (v) { state.threshold = v; update(); });
  var reset = controls.button(controlsEl, "Reset threshold", function () {
    ui.thr.setValue(extra.gate_thresholds[state.dev]);
  });
  reset.id = "ctl-reset";
  kit.saveView(document.getElementById("view-curve"), document.getElementById("gate-curve"), "gate-curves.png");
  kit.saveView(document.getElementById("view-time"), document.getElementById("gate-time"), "gate-power.png");
}
function finish() {
  wi = gateWhatIf({ after: document.getElementById("view-time"), cap: cap, state: state, sampleLabel: function (i) { return kit.sampleLabel(extra, i); } });
  testHook({ whatif: wi, state: state, current: function () { return cur; }, plot: function () { return plot; }, update: update, cap: cap, extra: extra,
             gate: { recompute: recompute, captured: captured, same: same, smooth32: smooth32, film32: film32 } });
  stateInUrl([["sample", "#ctl-sample"], ["device", "#ctl-device"], ["mode", ui.modeSel], ["threshold", ui.thr]]);
  ready();
}

function run(pg) {
  var L0 = kit.load();
  N = pg.data.names; cap = L0.cap; extra = L0.extra; devs = extra.devices;
  state = { sample: 0, dev: 0, mode: "hard", threshold: extra.gate_thresholds[0],
            cursor: Math.floor(cap.record(N.input).shape[2] / 2) };
  aggW = kit.watts(extra, "aggregate");
  buildControls();
  kit.onResize(document.getElementById("gate-time"), function () { if (plot) plot.draw(); if (cur) drawCurve(); });
  inTasks([function () { recomputeCurrent(); laterPlot = onScreen(document.getElementById("gate-time")); }, buildPlot, drawCurve, function () { updateReadout(); updateCheck(); }, updateTable, finish]);
}

registerPage({ slug: "gate", start: run });
