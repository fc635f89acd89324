/* page_upstream_gate.js: the Gate page of an upstream model (nilmbuild/site/views/upstream_gate.py).
 * CondiNILM: each device's soft-gate multiplier f + (1 - f) p against the logit, from the stored parameters in
 * page().data.params, and the selected captured window's lanes (data.lanes: titles and units; data.windows: the
 * values, watts for the power lanes). (The original NILMFormer has no gate: page_absent.js.) */
import { registerPage, testHook } from "./register.js";
import { controls, ready } from "./core.js";
import { deviceColors } from "./disaggregation_watts.js";
import { plot2d } from "./plot2d.js";
import { timeAxis } from "./time_axis.js";

var CURVE_LOGITS = 161, CURVE_RANGE = 8;   // the curve's logit axis: -8 .. 8

// p and the multiplier for one device's parameters at logit l (model/upstream/soft_gate.py).
function multiplier(q, l) {
  var z = Math.max(-50, Math.min(50, Math.max(l, q.logit_floor === null ? -Infinity : q.logit_floor) * q.scale + q.bias));
  var p = 1 / (1 + Math.exp(-z));
  return q.floor + (1 - q.floor) * p;
}

function drawCurve(data) {
  var xs = new Float32Array(CURVE_LOGITS);
  for (var i = 0; i < CURVE_LOGITS; i++) xs[i] = -CURVE_RANGE + (2 * CURVE_RANGE * i) / (CURVE_LOGITS - 1);
  var series = data.params.map(function (q, k) {
    return { name: q.device, x: xs, y: xs.map(function (l) { return multiplier(q, l); }), kind: "line", color: deviceColors[k % deviceColors.length] };
  });
  var p = plot2d.create(document.getElementById("ug-curve"), {
    title: "Gate multiplier f + (1 − f) p", x: { label: "gate logit", unit: "logit" },
    lanes: [{ title: "multiplier", y: { label: "multiplier", unit: "×", min: 0, max: 1 }, series: series }] });
  p.draw();
  return p;
}

var DASH = [null, [5, 3]];   // a lane's second series (power after the gate) dashed

function drawLanes(data, w) {
  var win = data.windows[w], lanes = [], c = document.getElementById("ug-lanes");
  data.params.forEach(function (q, k) {
    data.lanes.forEach(function (lane) {
      lanes.push({ title: q.device.replace(/_/g, " ") + ": " + lane.title, y: { label: lane.unit === "W" ? "power" : "p", unit: lane.unit },
                   series: lane.series.map(function (s, j) {
                     return { name: s.name, y: Float32Array.from(win[s.record][k]), kind: "line", dash: DASH[j] || null,
                              color: deviceColors[k % deviceColors.length] };
                   }) });
    });
  });
  c.style.height = (lanes.length * 95 + 70) + "px";
  var p = plot2d.create(c, {
    title: "Window " + data.labels[w], x: timeAxis(data.labels[w], data.step_minutes * 60, win[data.lanes[0].series[0].record][0].length), lanes: lanes });
  p.draw();
  return p;
}

function start(page) {
  var data = page.data, S = { window: 0 };
  S.curve = drawCurve(data);
  S.lanes = drawLanes(data, 0);
  controls.select(document.getElementById("nb-controls"), "Window",
    data.samples.map(function (s, i) { return { value: i, label: "batch sample " + s + " · " + data.labels[i] }; }), 0,
    function (v) { S.window = Number(v); S.lanes = drawLanes(data, S.window); }).id = "ug-window";
  ready();
  return { state: S, multiplier: multiplier };
}

registerPage({ slug: "gate", start: start });
