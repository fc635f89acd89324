/* whatif_upstream.js: an upstream model's live what-if (nilmbuild/model/upstream/whatif.py) on its Attention or FiLM
 * page: one switch of the live graph (the diagonal mask off, FiLM off), run in the page (live_model.js) on the selected
 * window's exact input, down to the per-device watts, beside the same graph at its defaults (the checkpoint as it is).
 *
 *   var w = upstreamWhatIf({ box: element, data: page().data.whatif, key: "maskDiagonal", label: "diagonal mask off",
 *                            sample: function () { return i; } });
 *   w.run() -> Promise<{x, base: {device: watts}, alt: {device: watts}}>   (tests read it)
 *   w.update()   runs again if the switch is ticked (the page's window changed)
 *   w.plot()     the last drawn chart (x in clock time from the window's start), or undefined before a run
 *
 * data (views/live_parts.py whatif_page): {live: the graph's spec, input: the blob of each sample's exact scaled
 * aggregate, starts: each sample's start time}. The switch's value is 0 (off); every other input keeps its default.
 */
import { blob, element as el, fmt } from "./core.js";
import { palette } from "./colormaps.js";
import { createLiveModel, modelInputScaled } from "./live_model.js";
import { plot2d } from "./plot2d.js";
import { timeAxis } from "./time_axis.js";

function build(box, label) {
  var controls = el("div", { class: "nb-controls" });
  var input = el("input", { type: "checkbox", id: "uwi-switch" });
  var lab = el("label", { for: "uwi-switch" }, " Run the live model with the " + label);
  controls.appendChild(input); controls.appendChild(lab);
  box.appendChild(controls);
  var status = el("p", { class: "uat-readout", id: "uwi-status", "aria-live": "polite" }, "Tick the box to run the model in this page.");
  box.appendChild(status);
  var canvas = el("canvas", { class: "nb-canvas", id: "uwi-plot", style: "width:100%;height:0px" });
  box.appendChild(canvas);
  return { input: input, status: status, canvas: canvas };
}

function byDevice(spec, out) {   // the graph's watts (D, W) -> {device: Float32Array}
  var W = spec.window, o = {};
  spec.devices.forEach(function (d, i) { o[d] = out.data.subarray(i * W, (i + 1) * W); });
  return o;
}

function draw(ui, spec, res, label, start) {   // start: the window's first step (ISO, UTC): the x axis in clock time
  var xs = Float32Array.from({ length: spec.window }, function (_, t) { return t; });
  var lanes = spec.devices.map(function (d) {
    return { title: d.replace(/_/g, " "), y: { label: "power", unit: "W", zero: true }, series: [
      { name: "as trained", x: xs, y: res.base[d], kind: "line", color: palette[0] },
      { name: label, x: xs, y: res.alt[d], kind: "line", dash: [5, 3], color: palette[3] }] };
  });
  ui.canvas.style.height = (spec.devices.length * 90 + 70) + "px";
  ui.plot = plot2d.create(ui.canvas, { title: "Live model: per-device watts", x: timeAxis(start, spec.stepS, spec.window), lanes: lanes });
  ui.plot.draw();
}

function largest(spec, res) {
  var best = { d: spec.devices[0], v: 0 };
  spec.devices.forEach(function (d) {
    for (var t = 0; t < spec.window; t++) { var v = Math.abs(res.alt[d][t] - res.base[d][t]); if (v > best.v) best = { d: d, v: v }; }
  });
  return best;
}

export function upstreamWhatIf(opts) {
  var data = opts.data, spec = data.live, live = createLiveModel(spec), ui = build(opts.box, opts.label);
  var inputs = new Float32Array(blob(data.input).slice().buffer), W = spec.window;
  function run() {
    var i = opts.sample(), x = modelInputScaled(spec, inputs.subarray(i * W, (i + 1) * W), data.starts[i]);
    var alt = {}; alt[opts.key] = false;
    ui.status.textContent = "Running the model in this page…";
    ui.status.dataset.done = "false";   // a finished earlier run must not stand for this one
    return Promise.all([live.run(x, 0, ["watts"]), live.run(x, 0, ["watts"], alt)]).then(function (r) {
      var res = { x: Array.from(x), base: byDevice(spec, r[0].outputs.watts), alt: byDevice(spec, r[1].outputs.watts) };
      var b = largest(spec, res);
      draw(ui, spec, res, opts.label, data.starts[i]);
      ui.status.textContent = "With the " + opts.label + ", the largest change is " + fmt(b.v, 4) + " W (" + b.d.replace(/_/g, " ") + ").";
      ui.status.dataset.done = "true";
      return res;
    }, function (e) { ui.status.textContent = "The live model could not run: " + e.message; throw e; });
  }
  function update() { if (ui.input.checked) run().catch(function () {}); }   // a failure is in the status line
  ui.input.addEventListener("change", update);
  return { run: run, update: update, plot: function () { return ui.plot; } };
}
