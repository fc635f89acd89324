/* page_why.js: the Why page (nilmbuild/site/views/why.py). The window's aggregate with one attribution strip per
 * device (explain_strip.js, diverging "burd"), a method / device / target selector (whole window, an interval, a
 * step: click or keyboard), the shown explanation's deletion curve, the quality table and attention against
 * attribution at the explained step. Data: blob "why" (why_data.js) and blob "capture" (q, k, lse of the window).
 */
import { setLegends } from "./colormaps.js";
import { blob, controls, fmt, ready, saveButton } from "./core.js";
import { decode } from "./decode.js";
import { CMAP, stripLane } from "./explain_strip.js";
import { drawLanes, pointToLane } from "./playground_plot.js";
import { plot2d } from "./plot2d.js";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { compare, rows as attentionRows } from "./why_attention.js";
import { explain, peaks, readWhy, vmaxOf } from "./why_data.js";
import { attentionTable, qualityTable } from "./why_tables.js";

var P, W, cap, S = { cursor: 0 }, geo = null, plots = {}, attnCache = {}, last = {};
function finite(a) { return a.map(function (v) { return v === null ? NaN : v; }); }   // NaN travels as null
var COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9"];
function $(id) { return document.getElementById(id); }
function pretty(s) { return s.replace(/_/g, " "); }
function startMs() { return Date.parse(P.t0); }

// ---- the explained target the controls ask for: {lo, hi, point, stepS} (hi exclusive, as Python's Interval) ----
function clampStep(v) { return Math.max(0, Math.min(W.L - 1, Math.round(+v) || 0)); }
function targetOf() {
  var kind = $("why-target").value, stepS = P.step_s;
  if (kind === "step") { var i = clampStep($("why-step").value); return { lo: i, hi: i + 1, point: true, stepS: stepS }; }
  if (kind === "interval") {
    var a = clampStep($("why-from").value), b = clampStep($("why-to").value);
    return { lo: Math.min(a, b), hi: Math.max(a, b) + 1, point: false, stepS: stepS };
  }
  return { lo: 0, hi: W.L, point: false, stepS: stepS };
}
function clockAt(step) { return new Date(startMs() + step * P.step_s * 1000).toISOString().slice(11, 16); }
function describe(t) {
  if (t.point) return "power at " + clockAt(t.lo);
  return t.lo === 0 && t.hi === W.L ? "energy over the window" : "energy " + clockAt(t.lo) + "–" + clockAt(t.hi - 1);
}

// ---- the lanes: the aggregate, then one strip per device ----
var exCache = {};
function explained(method, d, t) {   // the explanation of one strip, kept while the pointer only moves the cursor
  var key = [method, d, t.lo, t.hi, t.point].join("|");
  return exCache[key] || (exCache[key] = explain(W, method, d, t));
}
function strips(t) {
  return P.devices.map(function (name, d) {
    var ex = explained(S.method, d, t);
    last[d] = ex;
    return stripLane({ title: pretty(name) + ": " + describe(t) + " by " + S.method, unit: ex.unit + "/step",
                       values: ex.values || null, vmax: ex.values ? vmaxOf(ex.values) : 1, mark: t, message: ex.message,
                       startMs: startMs(), stepS: P.step_s });
  });
}
function drawMain() {
  var t = targetOf(), agg = { title: "aggregate (dashed: the baseline, the window's minimum)", unit: "W", vline: S.cursor,
    series: [{ name: "aggregate", values: W.agg, color: "#222222" }], hlines: [{ y: W.base, color: "#888888" }] };
  geo = drawLanes($("why-lanes"), [agg].concat(strips(t)), W.L, { label: "clock time (UTC)", clock: { start: startMs(), per: P.step_s * 1000 } });
  var ex = last[S.device], unit = ex.unit + " per step of the aggregate";
  setLegends($("why-legend"), ex.values ? [[CMAP, -vmaxOf(ex.values), vmaxOf(ex.values), "attribution of the " + pretty(P.devices[S.device]) +
    "'s " + describe(t) + " by " + S.method + " (" + unit + "): red raises it, blue lowers it; each strip has its own scale", 5]] : []);
  readout();
}
function readout() {
  var ex = last[S.device], i = S.cursor, dev = pretty(P.devices[S.device]);
  var v = ex.values ? fmt(ex.values[i], 3) + " " + ex.unit + "/step" : "not stored";
  $("why-readout").textContent = clockAt(i) + " UTC (step " + i + "): aggregate " + fmt(W.agg[i], 4) + " W; " + dev + " attribution " + v +
    "; the " + dev + "'s " + describe(targetOf()) + " is " + fmt(ex.value, 4) + " " + ex.unit + ".";
}

// ---- the deletion curve of the shown explanation (stored targets only) ----
function drawDeletion() {
  var ex = last[S.device], k = ex.k, dev = P.devices[S.device], x = W.fractions.map(function (f) { return 100 * f; });
  var show = k >= 0 && P.methods.some(function (m) { return W.curves[m][k]; });
  $("why-del").style.display = show ? "" : "none";
  $("why-del-note").textContent = show ? "" : W.active[S.device] ? "Deletion curves are computed at build time for each device's whole window and its peak step; pick one of those targets (or a preset) to see this one's."
    : "The model does not predict the " + pretty(dev) + " in this window: its output at the input is not above the baseline's, so a curve normalised by their difference would mean nothing.";
  if (!show) return;
  var series = [];
  P.methods.forEach(function (m, i) {
    var c = W.curves[m][k];
    if (c) series.push({ name: m + (m === S.method ? " (shown)" : ""), x: x, y: finite(c.deletion), kind: "line", color: COLORS[i], width: m === S.method ? 2.5 : 1.2, dash: m === S.method ? undefined : [4, 3] });
  });
  if (k < W.D && W.randomCurves[dev]) series.push({ name: "random ranking", x: x, y: finite(W.randomCurves[dev]), kind: "line", color: "#999999", width: 1.2 });
  var o = { title: pretty(dev) + ": " + describe(targetOf()) + ", deletion", x: { label: "steps replaced by the baseline", unit: "%", min: 0, max: 100 },
            lanes: [{ y: { label: "output, normalised", unit: "" }, series: series }] };
  if (!plots.del) { plots.del = plot2d.create($("why-del"), o); plot2d.hover(plots.del); } else plots.del.update(o);
  plots.del.draw();
}

// ---- attention against attribution at a point-level target ----
function statsIndex() { return P.tokens ? P.tokens.stats_index : undefined; }   // an upstream model's stats token
function attention(q) {
  if (attnCache[q]) return attnCache[q];
  var layers = attentionRows(cap, P.names.weights, 0, q, statsIndex());
  if (layers.length && layers[0].mean.length !== W.L) throw new Error("why: attention over " + layers[0].mean.length + " time steps, the attribution over " + W.L);
  return (attnCache[q] = layers);
}
function statsNote(cmp) {   // what the comparison left out: the query's weight on the stats token, per layer
  if (!P.tokens) return "";
  var shares = cmp.map(function (c, l) { return "layer " + l + " " + fmt(100 * c.stats, 3) + " %"; }).join(", ");
  return "The " + P.tokens.stats_label + " is left out of the lines and rank correlations (it has no attribution). This query gave it, " +
    "averaged over the heads: " + shares + " of its attention; the " + W.L + " time-step weights drawn hold the rest.";
}
function scaled(v) { var m = vmaxOf(v); return Float64Array.from(v, function (a) { return Math.abs(a) / m; }); }
function drawAttention() {
  var t = targetOf(), ex = last[S.device], fig = $("why-attn");
  var on = t.point && !!ex.values;
  fig.style.display = on ? "" : "none";
  S.attention = on ? compare(attention(t.lo), ex.values) : null;
  attentionTable($("why-attn-table"), S.attention, P.tokens && P.tokens.stats_label);
  $("why-attn-note").textContent = on ? statsNote(S.attention) : "Choose a step (point level) with an explanation to compare attention with it.";
  if (!on) return;
  var layers = attention(t.lo), series = [{ name: "|attribution|", y: scaled(ex.values), kind: "line", color: "#000000", width: 2 }];
  layers.forEach(function (l, i) { series.push({ name: "layer " + i + " attention", y: scaled(l.mean), kind: "line", color: COLORS[i % COLORS.length], width: 1.2 }); });
  var o = { title: "query " + clockAt(t.lo) + ": attention rows" + (P.tokens ? " over the time steps" : "") + " and |attribution| (" + S.method + ")",
            x: { label: "clock time", unit: "UTC", clock: { start: startMs(), per: P.step_s * 1000 } },
            lanes: [{ y: { label: "share of its largest value", unit: "", min: 0, max: 1 }, series: series }] };
  if (!plots.attn) { plots.attn = plot2d.create(fig, o); plot2d.hover(plots.attn); } else plots.attn.update(o);
  plots.attn.draw();
}

function draw() {
  drawMain();
  drawDeletion();
  drawAttention();
  qualityTable($("why-quality-table"), W.quality, { device: P.devices[S.device], method: S.method }, P.mass, P.gap_columns);
}

// ---- controls, pointer and keyboard ----
function named(el, id) { el.previousSibling.htmlFor = id; el.id = id; }   // the control and its <label for>
function buildControls() {
  var bar = $("why-bar");
  named(controls.select(bar, "Method", P.methods, "occlusion", function (v) { S.method = v; draw(); }), "why-method");
  named(controls.select(bar, "Device", P.devices.map(function (d) { return { value: d, label: pretty(d) }; }), P.default_device, function (v) {
    S.device = P.devices.indexOf(v); draw();
  }), "why-device");
  named(controls.select(bar, "Explain", [{ value: "window", label: "energy, whole window" }, { value: "interval", label: "energy, an interval" },
    { value: "step", label: "power at a step" }], "window", function () { enable(); draw(); }), "why-target");
  ["why-from", "why-to", "why-step"].forEach(function (id) {
    $(id).max = String(W.L - 1);
    $(id).addEventListener("change", function () {
      if (id === "why-step") S.cursor = clampStep($(id).value);   // the readout follows the explained step
      draw();
    });
  });
  $("why-to").value = String(W.L - 1);
  S.method = "occlusion"; S.device = P.devices.indexOf(P.default_device);
  $("why-step").value = String(peaks(W)[S.device]);
  saveButton($("why-save"), $("why-lanes"), "why.png", drawMain);
  enable();
}
function enable() {
  var kind = $("why-target").value;
  $("why-from").disabled = $("why-to").disabled = kind !== "interval";
  $("why-step").disabled = kind !== "step";
}
function pickStep(step) {
  $("why-target").value = "step"; $("why-step").value = String(step); S.cursor = step;
  enable(); draw();
}
function buildPointer() {
  var c = $("why-lanes");
  c.addEventListener("pointerdown", function (e) {
    var p = geo && pointToLane(c, geo, 0, e.clientX, e.clientY);
    if (p) pickStep(p.step);
  });
  c.addEventListener("pointermove", function (e) {
    var p = geo && pointToLane(c, geo, 0, e.clientX, e.clientY);
    if (p && p.step !== S.cursor) { S.cursor = p.step; drawMain(); }
  });
  c.addEventListener("keydown", onKey);
}
function onKey(e) {
  var by = e.shiftKey ? 10 : 1, moves = { ArrowLeft: -by, ArrowRight: by, Home: -W.L, End: W.L };
  if (e.key in moves) { S.cursor = clampStep(S.cursor + moves[e.key]); drawMain(); e.preventDefault(); }
  else if (e.key === "Enter" || e.key === " ") { pickStep(S.cursor); e.preventDefault(); }
}

function start(p) {
  P = p.data;
  W = readWhy(blob("why"));
  cap = decode(blob("capture"));
  buildControls();
  buildPointer();
  stateInUrl([["method", "#why-method"], ["device", "#why-device"], ["target", "#why-target"], ["from", "#why-from"], ["to", "#why-to"], ["step", "#why-step"]]);
  S.method = $("why-method").value; S.device = P.devices.indexOf($("why-device").value);
  if ($("why-target").value === "step") S.cursor = clampStep($("why-step").value);
  enable();
  draw();
  testHook({ why: { W: W, S: S, targetOf: targetOf, explanation: function (d) { return last[d]; }, geo: function () { return geo; }, draw: draw } });
  ready();
}

registerPage({ slug: "why", start: start });
