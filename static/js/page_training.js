/* page_training.js: the training log of the checkpoint (blob "train", nilmbuild/site/views/training.py). */
import { decode as unpack } from "@msgpack/msgpack";
import { registerPage, testHook } from "./register.js";
import { legend } from "./colormaps.js";
import { blob, controls, fail, fmt, ready, saveButton } from "./core.js";
import { deviceColors } from "./disaggregation_watts.js";
import { gl } from "./gl.js";
import { plot2d } from "./plot2d.js";

var COMP_COLORS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#882255", "#999999", "#117733", "#000000"];
function pretty(s) { return s.replace(/_/g, " "); }

function start(pg) {
  var hasLog = pg.data.has_log;
  if (!hasLog) { ready(); return; }
  var T = unpack(blob("train"));
  var E = T.epochs, devs = T.devices, comps = T.components, ep = E.map(function (r) { return r.epoch; });
  function col(f) { return E.map(function (r) { var v = f(r); return v === null || v === undefined ? NaN : v; }); }

  // ---- 1. loss components per device ----
  var lossCanvas = document.getElementById("loss-plot"), showComp = "all";
  function lossLanes() {
    return devs.map(function (d) {
      var series = [];
      comps.concat(["total"]).forEach(function (c, k) {
        if (showComp !== "all" && showComp !== c) return;
        series.push({ name: c, x: ep, y: col(function (r) { return r.loss.devices[d] ? r.loss.devices[d][c] : null; }), kind: "line",
                      color: c === "total" ? "#000000" : COMP_COLORS[k % COMP_COLORS.length], width: c === "total" ? 2.2 : 1.4 });
      });
      return { title: pretty(d), y: { label: pretty(d), unit: "" }, series: series };
    });
  }
  var lossPlot = plot2d.create(lossCanvas, { title: "loss per component (mean over the epoch)", x: { label: "epoch", min: ep[0], max: ep[ep.length - 1] }, lanes: lossLanes() });
  lossPlot.draw(); plot2d.hover(lossPlot);
  controls.select(document.getElementById("loss-controls"), "Component", ["all"].concat(comps, ["total"]), "all", function (v) {
    showComp = v; lossPlot.update({ lanes: lossLanes() });
  }).id = "loss-component";
  saveButton(document.getElementById("loss-controls"), lossCanvas, "training-loss-components.png", lossPlot.draw);

  // ---- 2. PCGrad cosine matrix per epoch ----
  var pcCanvas = document.getElementById("pc-canvas"), D = devs.length, epoch = E.length - 1;
  var colsEl = document.getElementById("pc-cols"), rowsEl = document.getElementById("pc-rows");
  colsEl.style.gridTemplateColumns = "repeat(" + D + ", 1fr)"; rowsEl.style.gridTemplateRows = "repeat(" + D + ", 1fr)";
  devs.forEach(function (d) { var a = document.createElement("span"); a.textContent = pretty(d); colsEl.appendChild(a);
    var b = document.createElement("span"); b.textContent = pretty(d); rowsEl.appendChild(b); });
  function matrix(e) {
    var m = new Float32Array(D * D).fill(NaN), pairs = (E[e].pcgrad && E[e].pcgrad.mean_cos) || {};
    for (var i = 0; i < D; i++) for (var j = 0; j < D; j++) {
      if (i === j) continue;
      var key = i < j ? devs[i] + "|" + devs[j] : devs[j] + "|" + devs[i];
      if (pairs[key] !== undefined && pairs[key] !== null) m[i * D + j] = pairs[key];
    }
    return m;
  }
  var pcEnabled = E.some(function (r) { return r.pcgrad && r.pcgrad.enabled; });
  var regl = gl.create(pcCanvas);
  if (!regl) return;
  gl.fitCanvas(pcCanvas);
  var hm = gl.heatmap(regl, { data: matrix(epoch), rows: D, cols: D, vmin: -1, vmax: 1, cmap: "burd", nanColor: [0.85, 0.85, 0.85, 1] });
  function drawPc() { gl.fitCanvas(pcCanvas); regl.poll(); regl.clear({ color: [1, 1, 1, 1] }); hm.draw(); }
  legend(document.getElementById("pc-legend"), "burd", -1, 1, "mean gradient cosine (blue: conflict)", 5);
  var readout = document.getElementById("pc-readout");
  function label(h, r, c, v) {
    var t = "epoch " + E[epoch].epoch + ": " + pretty(devs[r]) + " vs " + pretty(devs[c]) + ": " + (r === c ? "not logged (same device)" : v !== v ? "not logged (PCGrad off in this epoch)" : "cos " + fmt(v, 4) + (v < 0 ? " (conflict)" : ""));
    readout.textContent = t; return t;
  }
  gl.hover(pcCanvas, [hm], { label: label, ariaLabel: "PCGrad cosine matrix, rows and columns are devices" });
  var pcBar = document.getElementById("pc-controls");
  var slider = controls.range(pcBar, "Epoch", 1, E.length, 1, epoch + 1, function (v) {
    epoch = v - 1; hm.update(matrix(epoch)); drawPc(); epochOut.textContent = "epoch " + E[epoch].epoch + " of " + E.length +
      " · projections " + E[epoch].pcgrad.projections + " (" + fmt(E[epoch].pcgrad.projections_per_step, 4) + " per step)";
  });
  slider.id = "pc-epoch";
  var epochOut = document.createElement("output"); epochOut.htmlFor = "pc-epoch"; epochOut.id = "pc-epoch-out"; pcBar.appendChild(epochOut);
  epochOut.textContent = "epoch " + E[epoch].epoch + " of " + E.length + " · projections " + E[epoch].pcgrad.projections + " (" + fmt(E[epoch].pcgrad.projections_per_step, 4) + " per step)";
  saveButton(pcBar, pcCanvas, "training-pcgrad-cosines.png", drawPc);
  if (!pcEnabled) document.getElementById("pc-caption").textContent = "PCGrad was off in this run (plain summed loss): no gradient cosines were logged.";
  drawPc();
  var projPlot = plot2d.create(document.getElementById("proj-plot"), { title: "PCGrad projections per optimizer step",
    x: { label: "epoch", min: ep[0], max: ep[ep.length - 1] }, legend: false,
    lanes: [{ y: { label: "projections / step", unit: "", min: 0 }, series: [{ name: "projections per step", x: ep, y: col(function (r) { return r.pcgrad ? r.pcgrad.projections_per_step : null; }), kind: "line", color: "#D55E00", width: 2 }] }] });
  projPlot.draw(); plot2d.hover(projPlot);

  // ---- 3. schedules ----
  var sc = document.getElementById("sched-plot");
  var peakLr = Math.max.apply(null, T.epochs.map(function (r) { return r.lr || 0; }).concat([1e-12]));
  document.getElementById("sched-caption").textContent = "The schedule values at the end of each epoch (warm-up: " + T.warmup_epochs + " epoch" + (T.warmup_epochs === 1 ? "" : "s") +
    "): the anti-collapse weight (1 during warm-up, then decaying to 0.2), the output-statistics alpha (ramping 0 to 1 during warm-up), multi-crop (1 = on, after warm-up) and the learning rate at the epoch's end as a share of its largest logged value (warm-up, then cosine decay).";
  var schedPlot = plot2d.create(sc, { title: "training schedule", x: { label: "epoch", min: ep[0], max: ep[ep.length - 1] }, lanes: [
    { y: { label: "weight", unit: "", min: 0, max: 1.05 }, series: [
      { name: "anti-collapse weight", x: ep, y: col(function (r) { return r.schedule.anti_collapse; }), kind: "line", color: "#0072B2", width: 2 },
      { name: "output-stats alpha", x: ep, y: col(function (r) { return r.schedule.out_stats_alpha; }), kind: "line", color: "#E69F00", width: 2 },
      { name: "multi-crop on", x: ep, y: col(function (r) { return r.schedule.crops ? 1 : 0; }), kind: "step", color: "#009E73", width: 1.5, dash: [5, 3] },
      { name: "learning rate ÷ its peak", x: ep, y: col(function (r) { return r.lr / peakLr; }), kind: "line", color: "#CC79A7", width: 1.5 },
    ] }] });
  schedPlot.draw(); plot2d.hover(schedPlot);
  saveButton(document.getElementById("sched-controls"), sc, "training-schedule.png", schedPlot.draw);

  // ---- 4. validation ----
  var vc = document.getElementById("val-plot");
  var maeSeries = [], f1Series = [];
  devs.forEach(function (d, k) {
    var c = deviceColors[k % 5], base = T.baseline_val[d] || {};
    maeSeries.push({ name: pretty(d), x: ep, y: col(function (r) { return r.val && r.val.devices ? r.val.devices[d].mae : null; }), kind: "line", color: c, width: 2 });
    if (base.mae !== undefined && base.mae !== null) maeSeries.push({ name: pretty(d) + " baseline", x: [ep[0], ep[ep.length - 1]], y: [base.mae, base.mae], kind: "line", color: c, width: 1, dash: [5, 3] });
    f1Series.push({ name: pretty(d), x: ep, y: col(function (r) { return r.val && r.val.devices ? r.val.devices[d].f1 : null; }), kind: "line", color: c, width: 2 });
    if (base.f1 !== undefined && base.f1 !== null) f1Series.push({ name: pretty(d) + " baseline", x: [ep[0], ep[ep.length - 1]], y: [base.f1, base.f1], kind: "line", color: c, width: 1, dash: [5, 3] });
  });
  var valPlot = plot2d.create(vc, { title: "validation", x: { label: "epoch", min: ep[0], max: ep[ep.length - 1] }, legend: false, lanes: [
    { title: "loss (black: validation, grey: training)", y: { label: "loss", unit: "" }, series: [
      { name: "validation loss", x: ep, y: col(function (r) { return r.val ? r.val.loss : null; }), kind: "line", color: "#000000", width: 2 },
      { name: "training loss", x: ep, y: col(function (r) { return r.loss.total; }), kind: "line", color: "#8c959f", width: 2 }] },
    { title: "MAE per device (dashed: mean baseline)", y: { label: "MAE", unit: "W", min: 0 }, series: maeSeries },
    { title: "F1 per device (dashed: mean baseline)", y: { label: "F1", unit: "", min: 0, max: 1 }, series: f1Series },
  ] });
  valPlot.draw(); plot2d.hover(valPlot);
  var leg = document.getElementById("val-controls");
  devs.forEach(function (d, k) { var s = document.createElement("span"); s.className = "nb-field"; s.innerHTML = "<i style='display:inline-block;width:14px;height:3px;background:" + deviceColors[k % 5] + "'></i>"; s.appendChild(document.createTextNode(pretty(d))); leg.appendChild(s); });
  saveButton(leg, vc, "training-validation.png", valPlot.draw);

  testHook({ pc: { hm: hm, draw: drawPc, matrix: matrix } });
  ready();
}

registerPage({ slug: "training", start: start });
