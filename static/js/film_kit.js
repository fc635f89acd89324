/* film_kit.js: small helpers shared by the film, gate and embedding pages.
 * kit.load()                   -> {cap, extra}: the page's capture (decode) and its "extra" msgpack blob
 * kit.sampleSelect(el, extra, onChange)   a labelled <select> of the blob's batch samples (index + window start)
 * kit.select / range / radio   labelled controls with value readouts
 * kit.watts(extra, key)        scaled value -> watts, z * a + b (key: "aggregate" or a device)
 * kit.f16round(x)              round a number to the nearest IEEE binary16 (ties to even), as float32 storage would
 * kit.storage(cap, name)       encoding of the stored record behind `name` (follows alias / select / permute)
 * kit.layered(canvasGL, canvas2D)  composite for "Save PNG": WebGL pixels + 2D labels in one canvas
 * kit.saveView(section, getCanvas, name)  a "Save PNG" button in a view's header
 * kit.clock(extra, i), kit.timeAxis(extra, i, n)  sample i's window in clock time (time_axis.js: windowClock, timeAxis)
 */
import { decode as unpack } from "@msgpack/msgpack";
import { blob, context2d, controls, fmt, font, onResize, saveButton, setText } from "./core.js";
import { decode } from "./decode.js";
import { watts } from "./disaggregation_watts.js";
import { timeAxis, windowClock } from "./time_axis.js";
import { plot2d } from "./plot2d.js";

export const kit = {};
var loaded = null;

kit.load = function () {
  if (!loaded) loaded = { cap: decode(blob("capture")), extra: unpack(blob("extra")) };
  return loaded;
};

kit.sampleLabel = function (extra, i) {
  var t = extra.t0 && extra.t0[i] ? extra.t0[i].replace("T", " ").replace(/:00Z$|Z$/, "") + " UTC" : "";
  return "batch #" + extra.samples[i] + (t ? " · " + t : "");
};

// sample i's window start and step as a clock (UTC), and a plot2d x axis over its n steps in clock time
kit.clock = function (extra, i) { return windowClock(extra.t0[i], extra.resample_s); };
kit.timeAxis = function (extra, i, n) { return timeAxis(extra.t0[i], extra.resample_s, n); };

kit.sampleSelect = function (container, extra, onChange, value) {
  var opts = extra.samples.map(function (s, i) { return { value: String(i), label: kit.sampleLabel(extra, i) }; });
  var s = controls.select(container, "Sample", opts, String(value || 0), function (v) { onChange(Number(v)); });
  s.id = "ctl-sample";
  return s;
};

kit.deviceSelect = function (container, devices, onChange, value, id) {
  var opts = devices.map(function (d, i) { return { value: String(i), label: kit.devName(d) }; });
  var s = controls.select(container, "Device", opts, String(value || 0), function (v) { onChange(Number(v)); });
  s.id = id || "ctl-device";
  return s;
};

kit.devName = function (d) { return String(d).replace(/_/g, " "); };

// A range input with a live <output> showing its value (formatted by fmt).
kit.range = function (container, id, label, min, max, step, value, fmt, onInput) {
  var r = controls.range(container, label, min, max, step, value, function (v) { out.value = fmt(v); onInput(v); });
  r.id = id;
  var out = document.createElement("output");
  out.htmlFor = id; out.id = id + "-value"; out.className = "kit-out"; out.value = fmt(value);
  r.parentElement.appendChild(out);
  r.setValue = function (v) { r.value = v; out.value = fmt(Number(r.value)); onInput(Number(r.value)); };
  return r;
};

// Scaled model units -> watts for "aggregate" or a device: z * a + b with the page's {a, b} (disaggregation_watts.js).
kit.watts = function (extra, key) {
  var ab = watts.of(key);
  return { f: function (z) { return z * ab.a + ab.b; }, unit: "W", desc: watts.describe(key), ab: ab };
};

kit.mapArray = function (a, f) { var o = new Float32Array(a.length); for (var i = 0; i < a.length; i++) o[i] = f(a[i]); return o; };

// Nearest binary16 value of x (round half to even), returned as a JS number (exact in float32).
kit.f16round = function (x) {
  if (x !== x || x === 0 || !isFinite(x)) return x;
  var s = x < 0 ? -1 : 1, a = Math.abs(x);
  if (a >= 65520) return s * Infinity;
  var e = Math.floor(Math.log2(a));
  if (Math.pow(2, e) > a) e--; else if (Math.pow(2, e + 1) <= a) e++;
  if (e < -14) e = -14;                                   // subnormals share the smallest exponent
  var q = Math.pow(2, e - 10), r = a / q, n = Math.floor(r), frac = r - n;
  if (frac > 0.5 || (frac === 0.5 && n % 2 === 1)) n += 1;
  return s * n * q;
};

// The stored encoding behind a record (derived alias/select/permute records point at one source).
kit.storage = function (cap, name) {
  for (var k = 0; k < 8; k++) {
    var r = cap.record(name);
    if (r.encoding !== "derived") return r.encoding;
    if (["alias", "select", "permute"].indexOf(r.op) < 0) return "derived:" + r.op;
    name = r.src;
  }
  return "unknown";
};

// Draw the WebGL canvas and the 2D overlay on top of each other into a fresh canvas (for Save PNG).
kit.layered = function (glCanvas, overlay) {
  var c = document.createElement("canvas");
  c.width = overlay.width; c.height = overlay.height;
  var g = context2d(c);
  g.fillStyle = "#fff"; g.fillRect(0, 0, c.width, c.height);
  var r1 = glCanvas.getBoundingClientRect(), r2 = overlay.getBoundingClientRect(), k = overlay.width / (r2.width || 1);
  g.drawImage(glCanvas, (r1.left - r2.left) * k, (r1.top - r2.top) * k, r1.width * k, r1.height * k);
  g.drawImage(overlay, 0, 0);
  return c;
};

kit.saveView = function (section, getCanvas, filename) {
  var bar = section.querySelector(".kit-view-tools") || section;
  var b = saveButton(bar, getCanvas, filename);
  b.setAttribute("aria-label", "Save PNG: " + (section.querySelector("h2") || {}).textContent);
  return b;
};

// 2D canvas sized to its CSS box at devicePixelRatio; returns the context with CSS-pixel transform.
kit.ctx2d = function (canvas) {
  var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth, H = canvas.clientHeight;
  if (canvas.width !== Math.round(W * dpr) || canvas.height !== Math.round(H * dpr)) {
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
  }
  var g = context2d(canvas);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  plot2d.recordText(g, canvas);   // every label's box, for the overlap tests
  g.font = font(12);
  g.textBaseline = "middle";
  return { g: g, W: W, H: H };
};

// Like onResize, but only when the element's width really changed (no redraw on the observer's first call).
kit.onResize = function (el, fn) {
  var w = el.clientWidth;
  onResize(el, function () { if (el.clientWidth !== w) { w = el.clientWidth; fn(); } });
};

kit.FONT = font(12);
kit.BOLD = font(12, 600);
kit.SMALL = font(11);

kit.absmax = function (a) { var m = 0; for (var i = 0; i < a.length; i++) { var v = Math.abs(a[i]); if (v > m) m = v; } return m || 1; };
kit.extent = function (a) { var lo = Infinity, hi = -Infinity; for (var i = 0; i < a.length; i++) { if (a[i] < lo) lo = a[i]; if (a[i] > hi) hi = a[i]; } return [lo, hi]; };

// readout: a <dl> whose <dd data-key> elements carry data-value (full precision) and formatted text
kit.setReadout = function (el, rows) {   // the <dt>/<dd> pairs are reused: a control change rewrites only their text
  while (el.children.length > 2 * rows.length) el.removeChild(el.lastChild);
  rows.forEach(function (r, i) {
    var dt = el.children[2 * i] || el.appendChild(document.createElement("dt"));
    var dd = el.children[2 * i + 1] || el.appendChild(document.createElement("dd"));
    setText(dt, r[0]);
    setText(dd, r[2] !== undefined ? r[2] : fmt(r[1], 6));
    setData(dd, "key", r[3] || null);
    setData(dd, "value", typeof r[1] === "number" ? String(r[1]) : null);
  });
};
function setData(el, k, v) { if (v === null) delete el.dataset[k]; else if (el.dataset[k] !== v) el.dataset[k] = v; }
