/* whatif_panel.js: "what would the model answer?" — a small panel that runs the live model (live_model.js) on the
 * page's selected captured window with the page's what-if settings, down to the final per-device watts, and shows
 * them next to the captured ones (issue 11 item 4, docs/live-model.md).
 *
 *   var panel = whatIfPanel({ after: element, cap: capture, settings: function () {
 *       return { sample: i, sampleLabel: "...", whatIf: {...}, label: "...", reference: null | ablation key }; } });
 *   panel.update();   // call whenever the settings change (debounced; runs once the panel is on screen)
 *   panel.settings()  // what the next run would feed the model (the page's settings function; tests read it)
 *
 * page().data.whatif (nilmbuild/site/views/live_parts.py whatif_page): {live: the live model's spec (graph from the shared
 * nilmbuild-model.js), input: the blob of each sample's exact scaled aggregate, starts: each sample's start time,
 * power: the final-power record, ablations: {key: record}, bound: {device: W}, tie}. "Captured" is the capture's
 * model run (record `power`), or the captured ablation run whose switches the settings equal
 * (settings().reference, a key of `ablations`), converted to watts with page().watts. At rest the live watts equal the capture
 * within each device's bound (max(2 W, 1 % of its peak)) except at steps whose live gate probability sits within
 * `tie` of the threshold in use (the hard gate may legitimately flip there). The model loads when the panel first
 * comes into view; in #embed mode the panel is hidden (kit-secondary), so an embed never loads it.
 */
import { blob, element as el, fmt, page } from "./core.js";
import { palette } from "./colormaps.js";
import { escapeHTML } from "./dom_patch.js";
import { createLiveModel, modelInputScaled } from "./live_model.js";
import { plot2d } from "./plot2d.js";
import { timeAxis } from "./time_axis.js";
import { watts } from "./disaggregation_watts.js";

var DEBOUNCE_MS = 150;
var LANE_PX = 78;

function build(after, devices) {
  var sec = el("section", { class: "kit-view kit-secondary whatif", id: "whatif-panel", "aria-labelledby": "whatif-h", "data-state": "idle", "data-runs": "0" });
  var head = el("div", { class: "kit-view-head" });
  head.appendChild(el("h2", { id: "whatif-h" }, "Final watts with these settings: the live model"));
  sec.appendChild(head);
  sec.appendChild(el("p", { class: "kit-text" }, "The whole model re-runs in your browser (onnxruntime-web in a worker, loaded when this " +
    "panel comes into view) on the selected window, with the settings above, down to the per-device watts after the gate " +
    "and the output FiLM. Dashed: the captured run. Left at rest, the two agree within each device's bound."));
  var controls = el("div", { class: "nb-controls", id: "whatif-controls" });
  sec.appendChild(controls);
  var status = el("p", { class: "kit-text", id: "whatif-status", "aria-live": "polite" }, "Waiting to come into view…");
  sec.appendChild(status);
  var table = el("table", { class: "nb-table", id: "whatif-table" });
  sec.appendChild(table);
  var canvas = el("canvas", { class: "nb-canvas", id: "whatif-plot", style: "width:100%;height:" + (LANE_PX * devices.length + 70) + "px" });
  sec.appendChild(canvas);
  after.parentNode.insertBefore(sec, after.nextSibling);
  return { sec: sec, controls: controls, status: status, table: table, canvas: canvas };
}

// Per device: the live watts vs the captured ones (max |diff| outside tie steps, means, within the bound?).
function compare(data, live, captured, gate, thresholds) {
  var W = data.live.window;
  return data.live.devices.map(function (d, i) {
    var a = live[d], b = captured[d], g = gate.subarray(i * W, (i + 1) * W), maxd = 0, ties = 0, sa = 0, sb = 0;
    for (var t = 0; t < W; t++) {
      sa += a[t]; sb += b[t];
      if (Math.abs(g[t] - thresholds[i]) < data.tie) { ties++; continue; }
      maxd = Math.max(maxd, Math.abs(a[t] - b[t]));
    }
    return { device: d, liveMean: sa / W, capturedMean: sb / W, maxDiff: maxd, ties: ties, bound: data.bound[d], within: maxd <= data.bound[d] };
  });
}

function drawTable(table, rows, refLabel) {
  var html = "<thead><tr><th scope=col>device</th><th scope=col>mean W, " + refLabel + "</th><th scope=col>mean W, live</th>" +
    "<th scope=col>max |live − captured| W</th><th scope=col>bound W</th></tr></thead><tbody>";
  rows.forEach(function (r) {
    var dev = escapeHTML(r.device);
    html += "<tr data-device='" + dev + "' data-live-mean='" + r.liveMean + "' data-captured-mean='" + r.capturedMean +
      "' data-max-diff='" + r.maxDiff + "' data-within='" + r.within + "'><td>" + dev.replace(/_/g, " ") + "</td><td class=num>" +
      fmt(r.capturedMean, 4) + "</td><td class=num>" + fmt(r.liveMean, 4) + "</td><td class=num>" + fmt(r.maxDiff, 3) +
      (r.ties ? " <span class=nb-muted>(" + r.ties + " tie step" + (r.ties > 1 ? "s" : "") + " left out)</span>" : "") +
      "</td><td class=num>" + fmt(r.bound, 3) + (r.within ? " ✓" : "") + "</td></tr>";
  });
  table.innerHTML = html + "</tbody>";
}

function drawPlot(ui, data, sample, live, captured, title, refLabel) {
  var W = data.live.window;
  var lanes = data.live.devices.map(function (d, i) {
    return { title: d.replace(/_/g, " "), y: { label: "power", unit: "W", zero: true }, series: [
      { name: refLabel, y: captured[d], kind: "line", color: "#1b1f24", width: 1, dash: [4, 3] },
      { name: "live, these settings", y: live[d], kind: "line", color: palette[i % palette.length], width: 1.5 }] };
  });
  var opts = { title: title, x: timeAxis(data.starts[sample], data.live.stepS, W), lanes: lanes };
  if (!ui.plot) { ui.plot = plot2d.create(ui.canvas, opts); plot2d.hover(ui.plot); } else ui.plot.opts = opts;
  ui.plot.draw();
}

export function whatIfPanel(opts) {
  var data = page().data.whatif, cap = opts.cap, spec = data.live;
  var ui = build(opts.after, spec.devices), live = createLiveModel(spec);
  var S = { visible: false, busy: false, dirty: false, timer: 0, runs: 0, last: null }, X = null;

  function captured(sample, record) {
    var out = {};
    spec.devices.forEach(function (d, i) { out[d] = watts.inverse(d, watts.row(cap, record, sample, i)); });
    return out;
  }

  function input(i) {
    var W = spec.window;
    if (!X) X = new Float32Array(blob(data.input).slice().buffer);
    return modelInputScaled(spec, X.subarray(i * W, (i + 1) * W), data.starts[i]);
  }

  function thresholdsOf(whatIf) {
    return whatIf.thresholds ? Array.from(whatIf.thresholds) : spec.whatIf.thresholds.value;
  }

  function run() {
    if (S.busy) { S.dirty = true; return; }
    var s = opts.settings(), key = JSON.stringify([s.sample, s.whatIf]);
    if (key === S.key) return;                       // nothing the model sees changed (another view's control)
    S.key = key;
    var ref = s.reference ? { record: data.ablations[s.reference], label: "captured ablation" }
      : { record: data.power, label: "captured" };
    S.busy = true; S.dirty = false; ui.sec.dataset.state = "running";
    ui.status.textContent = "Running the model on sample " + s.sampleLabel + " with " + s.label + "…";
    live.run(input(s.sample), 0, ["watts", "gate_prob"], s.whatIf).then(function (res) {
      var w = live.perDevice(res.outputs.watts), c = captured(s.sample, ref.record);
      var rows = compare(data, w, c, res.outputs.gate_prob.data, thresholdsOf(s.whatIf));
      S.runs++; S.last = { settings: s, reference: ref, watts: w, captured: c, rows: rows, ms: res.ms };
      drawTable(ui.table, rows, ref.label);
      drawPlot(ui, data, s.sample, w, c, "Final power per device · " + s.sampleLabel, ref.label);
      var all = rows.every(function (r) { return r.within; });
      ui.status.textContent = "Live run " + S.runs + " (" + res.ms.toFixed(0) + " ms in the worker), " + s.label + ": " +
        (all ? "equal to the " + ref.label + " run within every device's bound." : "the answer moved away from the " + ref.label + " run.");
      ui.sec.dataset.runs = String(S.runs); ui.sec.dataset.state = "done"; ui.sec.dataset.within = String(all);
    }).catch(function (e) {
      S.key = null; ui.sec.dataset.state = "error"; ui.status.textContent = "The live model could not run: " + e.message;
    }).then(function () { S.busy = false; if (S.dirty) run(); });
  }

  function update() {
    if (!S.visible) return;
    clearTimeout(S.timer);
    S.timer = setTimeout(run, DEBOUNCE_MS);
  }

  // Start when the panel is on screen, not before: loading the runtime compiles ~10 MB of WebAssembly on
  // background threads for seconds, which on a 2-core machine halves the frame rate of the view above it.
  var io = new IntersectionObserver(function (entries) {
    if (!entries.some(function (e) { return e.isIntersecting; })) return;
    io.disconnect(); S.visible = true; run();
  });
  io.observe(ui.sec);
  return { update: update, state: S, element: ui.sec, controls: ui.controls, live: live, data: data, settings: opts.settings };
}
