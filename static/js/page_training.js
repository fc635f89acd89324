/* page_training.js: the training log of the checkpoint (blob "train", nilmbuild/site/views/training.py). */
import { decode as unpack } from "@msgpack/msgpack";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { legend } from "./colormaps.js";
import { blob, controls, fmt, inTasks, ready, saveButton, tooltip } from "./core.js";
import { deviceColors } from "./disaggregation_watts.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { landscapeMap } from "./landscape_map.js";

var COMP_COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#882255", "#999999", "#117733", "#000000"];
function pretty(s) { return s.replace(/_/g, " "); }

// The decoded log and what every figure shares (set once by start).
var T, E, devs, ep, plots = {};   // plots: the plot2d charts, by figure (tests read their layout)
function col(f) { return E.map(function (r) { var v = f(r); return v === null || v === undefined ? NaN : v; }); }
function epochAxis() { return { label: "epoch", min: ep[0], max: ep[ep.length - 1] }; }

// ---- 1. loss components per device ----
function lossLanes(showComp) {
  return devs.map(function (d) {
    var series = [];
    T.components.concat(["total"]).forEach(function (c, k) {
      if (showComp !== "all" && showComp !== c) return;
      series.push({ name: c, x: ep, y: col(function (r) { return r.loss.devices[d] ? r.loss.devices[d][c] : null; }), kind: "line",
                    color: c === "total" ? "#000000" : COMP_COLORS[k % COMP_COLORS.length], width: c === "total" ? 2.2 : 1.4 });
    });
    return { title: pretty(d), y: { label: pretty(d), unit: "" }, series: series };
  });
}

function buildLossFigure() {
  var lossCanvas = document.getElementById("loss-plot");
  var lossPlot = plot2d.create(lossCanvas, { title: "loss per component (mean over the epoch)", x: epochAxis(), lanes: lossLanes("all") });
  lossPlot.draw(); plot2d.hover(lossPlot); plots.loss = lossPlot;
  controls.select(document.getElementById("loss-controls"), "Component", ["all"].concat(T.components, ["total"]), "all", function (v) {
    lossPlot.update({ lanes: lossLanes(v) });
  }).id = "loss-component";
  saveButton(document.getElementById("loss-controls"), lossCanvas, "training-loss-components.png", lossPlot.draw);
}

// ---- 2. PCGrad cosine matrix per epoch (rows and columns are devices) ----
function pcMatrix(e) {
  var D = devs.length, m = new Float32Array(D * D).fill(NaN), pairs = (E[e].pcgrad && E[e].pcgrad.mean_cos) || {};
  for (var i = 0; i < D; i++) for (var j = 0; j < D; j++) {
    if (i === j) continue;
    var key = i < j ? devs[i] + "|" + devs[j] : devs[j] + "|" + devs[i];
    if (pairs[key] !== undefined && pairs[key] !== null) m[i * D + j] = pairs[key];
  }
  return m;
}

function buildPcLabels() {
  var D = devs.length, colsEl = document.getElementById("pc-cols"), rowsEl = document.getElementById("pc-rows");
  // minmax(0, 1fr): each label exactly over its matrix column, however long the device name
  colsEl.style.gridTemplateColumns = "repeat(" + D + ", minmax(0, 1fr))"; rowsEl.style.gridTemplateRows = "repeat(" + D + ", 1fr)";
  devs.forEach(function (d) { var a = document.createElement("span"); a.textContent = pretty(d); colsEl.appendChild(a);
    var b = document.createElement("span"); b.textContent = pretty(d); rowsEl.appendChild(b); });
}

function pcEpochText(e) {
  return "epoch " + E[e].epoch + " of " + E.length + " · projections " + E[e].pcgrad.projections + " (" + fmt(E[e].pcgrad.projections_per_step, 4) + " per step)";
}

function buildPcgradFigure() {   // a D x D grid: a 2D canvas (a WebGL context would cost 100-300 ms in software GL)
  var pcCanvas = document.getElementById("pc-canvas"), D = devs.length, pc = { epoch: E.length - 1 };
  buildPcLabels();
  fitCanvas(pcCanvas);
  pc.hm = heatmap2d(pcCanvas, { data: pcMatrix(pc.epoch), rows: D, cols: D, vmin: -1, vmax: 1, cmap: "burd", nanColor: [0.85, 0.85, 0.85, 1] });
  pc.draw = function () { fitCanvas(pcCanvas); pc.hm.draw(); };
  legend(document.getElementById("pc-legend"), "burd", -1, 1, "mean gradient cosine (blue: conflict)", 5);
  var readout = document.getElementById("pc-readout");
  function label(h, r, c, v) {
    var t = "epoch " + E[pc.epoch].epoch + ": " + pretty(devs[r]) + " vs " + pretty(devs[c]) + ": " + (r === c ? "not logged (same device)" : v !== v ? "not logged (PCGrad off in this epoch)" : "cos " + fmt(v, 4) + (v < 0 ? " (conflict)" : ""));
    readout.textContent = t; return t;
  }
  hoverGrid(pcCanvas, [pc.hm], { label: label, ariaLabel: "PCGrad cosine matrix, rows and columns are devices" });
  buildPcControls(pc, pcCanvas);
  if (!E.some(function (r) { return r.pcgrad && r.pcgrad.enabled; }))
    document.getElementById("pc-caption").textContent = "PCGrad was off in this run (plain summed loss): no gradient cosines were logged.";
  pc.draw();
  buildProjectionsPlot();
  return { hm: pc.hm, draw: pc.draw, matrix: pcMatrix };
}

function buildPcControls(pc, pcCanvas) {
  var pcBar = document.getElementById("pc-controls"), epochOut;
  var slider = controls.range(pcBar, "Epoch", 1, E.length, 1, pc.epoch + 1, function (v) {
    pc.epoch = v - 1; pc.hm.update(pcMatrix(pc.epoch)); pc.draw(); epochOut.textContent = pcEpochText(pc.epoch);
  });
  slider.id = "pc-epoch";
  epochOut = document.createElement("output"); epochOut.htmlFor = "pc-epoch"; epochOut.id = "pc-epoch-out"; pcBar.appendChild(epochOut);
  epochOut.textContent = pcEpochText(pc.epoch);
  saveButton(pcBar, pcCanvas, "training-pcgrad-cosines.png", pc.draw);
}

function buildProjectionsPlot() {
  var projPlot = plot2d.create(document.getElementById("proj-plot"), { title: "PCGrad projections per optimizer step", x: epochAxis(), legend: false,
    lanes: [{ y: { label: "projections / step", unit: "", min: 0 }, series: [{ name: "projections per step", x: ep, y: col(function (r) { return r.pcgrad ? r.pcgrad.projections_per_step : null; }), kind: "line", color: "#D55E00", width: 2 }] }] });
  projPlot.draw(); plot2d.hover(projPlot); plots.proj = projPlot;
}

// ---- 3. schedules ----
function buildScheduleFigure() {
  var sc = document.getElementById("sched-plot");
  var peakLr = Math.max.apply(null, E.map(function (r) { return r.lr || 0; }).concat([1e-12]));
  document.getElementById("sched-caption").textContent = "The schedule values at the end of each epoch (warm-up: " + T.warmup_epochs + " epoch" + (T.warmup_epochs === 1 ? "" : "s") +
    "): the anti-collapse weight (1 during warm-up, then decaying to 0.2), the output-statistics alpha (ramping 0 to 1 during warm-up), multi-crop (1 = on, after warm-up) and the learning rate at the epoch's end as a share of its largest logged value (warm-up, then cosine decay).";
  var schedPlot = plot2d.create(sc, { title: "training schedule", x: epochAxis(), lanes: [
    { y: { label: "weight", unit: "", min: 0, max: 1.05 }, series: [
      { name: "anti-collapse weight", x: ep, y: col(function (r) { return r.schedule.anti_collapse; }), kind: "line", color: "#0072B2", width: 2 },
      { name: "output-stats alpha", x: ep, y: col(function (r) { return r.schedule.out_stats_alpha; }), kind: "line", color: "#E69F00", width: 2 },
      { name: "multi-crop on", x: ep, y: col(function (r) { return r.schedule.crops ? 1 : 0; }), kind: "step", color: "#009E73", width: 1.5, dash: [5, 3] },
      { name: "learning rate ÷ its peak", x: ep, y: col(function (r) { return r.lr / peakLr; }), kind: "line", color: "#CC79A7", width: 1.5 },
    ] }] });
  schedPlot.draw(); plot2d.hover(schedPlot); plots.sched = schedPlot;
  saveButton(document.getElementById("sched-controls"), sc, "training-schedule.png", schedPlot.draw);
}

// ---- 4. validation ----
function metricSeries(metric) { // per device: its validation curve and its mean-baseline level (dashed)
  var out = [];
  devs.forEach(function (d, k) {
    var c = deviceColors[k % 5], base = (T.baseline_val[d] || {})[metric];
    out.push({ name: pretty(d), x: ep, y: col(function (r) { return r.val && r.val.devices ? r.val.devices[d][metric] : null; }), kind: "line", color: c, width: 2 });
    if (base !== undefined && base !== null) out.push({ name: pretty(d) + " baseline", x: [ep[0], ep[ep.length - 1]], y: [base, base], kind: "line", color: c, width: 1, dash: [5, 3] });
  });
  return out;
}

function buildValidationFigure() {
  var vc = document.getElementById("val-plot");
  var valPlot = plot2d.create(vc, { title: "validation", x: epochAxis(), legend: false, lanes: [
    { title: "loss (black: validation, grey: training)", y: { label: "loss", unit: "" }, series: [
      { name: "validation loss", x: ep, y: col(function (r) { return r.val ? r.val.loss : null; }), kind: "line", color: "#000000", width: 2 },
      { name: "training loss", x: ep, y: col(function (r) { return r.loss.total; }), kind: "line", color: "#8c959f", width: 2 }] },
    { title: "MAE per device (dashed: mean baseline)", y: { label: "MAE", unit: "W", min: 0 }, series: metricSeries("mae") },
    { title: "F1 per device (dashed: mean baseline)", y: { label: "F1", unit: "", min: 0, max: 1 }, series: metricSeries("f1") },
  ] });
  valPlot.draw(); plot2d.hover(valPlot); plots.val = valPlot;
  var leg = document.getElementById("val-controls");
  devs.forEach(function (d, k) { var s = document.createElement("span"); s.className = "nb-field"; s.innerHTML = "<i style='display:inline-block;width:14px;height:3px;background:" + deviceColors[k % 5] + "'></i>"; s.appendChild(document.createTextNode(pretty(d))); leg.appendChild(s); });
  saveButton(leg, vc, "training-validation.png", valPlot.draw);
}

function start(pg) {
  if (!pg.data.has_log) { ready(); return; }
  T = unpack(blob("train"));
  E = T.epochs; devs = T.devices; ep = E.map(function (r) { return r.epoch; });
  var pc = null, land = null;
  // a few tasks instead of one long one while loading (core.inTasks)
  inTasks([
    buildLossFigure,
    function () { pc = buildPcgradFigure(); },
    function () { buildScheduleFigure(); buildValidationFigure(); },
    // ---- 5. loss landscape (stored by `nilmbuild landscape`; absent: the template says how to compute it) ----
    function () { land = T.landscape ? landscape(T.landscape) : null; },
    function () {
      testHook({ pc: pc, landscape: land, plots: plots });
      stateInUrl([["component", "#loss-component"], ["epoch", "#pc-epoch"]]);
      ready();
    },
  ]);
}

function landscape(L) {
  var canvas = document.getElementById("landscape"), map = landscapeMap.create(canvas, document.getElementById("landscape-axes"), L);
  legend(document.getElementById("landscape-legend"), "viridis", map.range.lo, map.range.hi, "log₁₀ validation loss", 5);
  var out = document.getElementById("landscape-readout"), pts = L.trajectory || [];
  function near(px, py) {
    for (var k = 0; k < pts.length; k++) {
      var q = map.toPixel(pts[k].alpha, pts[k].beta);
      if (Math.abs(q.x - px) < 6 && Math.abs(q.y - py) < 6) return pts[k];
    }
    return null;
  }
  canvas.addEventListener("mousemove", function (e) {
    var r = canvas.getBoundingClientRect(), px = e.clientX - r.left, py = e.clientY - r.top, p = near(px, py), v;
    var t = p ? "epoch " + p.epoch + ": projected at α = " + fmt(p.alpha, 4) + ", β = " + fmt(p.beta, 4) + "; " +
                fmt(100 * p.in_plane, 3) + "% of its squared distance to the checkpoint lies in the plane; true loss " + fmt(p.loss, 5)
          : (v = map.valueAt(px, py)) ? "α = " + fmt(v.alpha, 4) + ", β = " + fmt(v.beta, 4) + ": loss " + fmt(v.loss, 5) : "";
    out.textContent = t;
    if (t) tooltip.show(t, e.clientX, e.clientY); else tooltip.hide();
  });
  canvas.addEventListener("mouseleave", function () { tooltip.hide(); });
  out.textContent = "checkpoint loss " + fmt(L.centre_loss, 5) + "; lowest grid point " + fmt(L.min.loss, 5) + " at α = " +
    fmt(L.min.alpha, 4) + ", β = " + fmt(L.min.beta, 4) + (map.outside ? "; " + map.outside + " epoch point(s) lie outside the plotted span" : "");
  saveButton(document.getElementById("landscape-controls"), canvas, "training-loss-landscape.png", map.draw);
  return map;
}

registerPage({ slug: "training", start: start });
