/* page_index.js: the Overview's data-flow diagram (Canvas 2D).
 * Nodes/edges come from the "flow" blob (architecture graph + the capture records' shapes, axes, docs);
 * the input sparkline and the per-device output sparklines from the "capture" blob (real forward pass),
 * converted to watts with page().watts (z * a + b).
 * Pulses move along the edges after the first frame (ready()); "Pause flow" stops them and redraws the
 * static diagram; prefers-reduced-motion / nilmbuild.test.noAnimation never start them.
 * Record names come from the view (page().data.names, nilmbuild/site/views/index.py). The page state lives in
 * module variables set once by start(); each build, draw and on function does one job.
 */
import { decode as unpack } from "@msgpack/msgpack";
import { registerPage, testHook } from "./register.js";
import { startDocsBox } from "./docs_box.js";
import { stateInUrl } from "./url_state.js";
import { FONT_FAMILY, animationsOff, blob, context2d, controls, fmt, inTasks, onResize, ready, saveButton, tooltip } from "./core.js";
import { decode } from "./decode.js";
import { deviceColors, phaseColors, watts } from "./disaggregation_watts.js";

var PHASE_LABEL = { input: "input", embedding: "embedding", transformer: "transformer", conditioning: "conditioning (FiLM)", output: "output" };
var TEXT = "#1b1f24", MUTED = "#57606a", FONT = FONT_FAMILY;

function tint(hex, a) { // mix with white
  var n = parseInt(hex.slice(1), 16), r = (n >> 16) & 255, g = (n >> 8) & 255, b = n & 255;
  return "rgb(" + Math.round(255 - (255 - r) * a) + "," + Math.round(255 - (255 - g) * a) + "," + Math.round(255 - (255 - b) * a) + ")";
}
function shapeText(s) { return "(" + s.join(", ") + ")"; }

function bezier(p0, p1, p2, p3, n) {
  var pts = [];
  for (var i = 0; i <= n; i++) {
    var t = i / n, u = 1 - t;
    pts.push([u * u * u * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t * t * t * p3[0],
              u * u * u * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t * t * t * p3[1]]);
  }
  return pts;
}

/* ---- the page's state (one page per document; set by start) ---- */
var PG, N, flow, cap, canvas, wrap, linksEl, pages, ctx, devices, samples, state, L, data, playBtn, controlsEl;
var nodesById = {};

// ---- data for the sparklines (watts) ----
function series(b) {
  var x = cap.get(N.input), C = cap.record(N.input).shape[1];
  var agg = watts.inverse("aggregate", x.subarray(b * C * L, b * C * L + L));
  var pred = devices.map(function (d, i) { return watts.inverse(d, watts.row(cap, N.output, b, i)); });
  var truth = devices.map(function (d, i) { return watts.inverse(d, watts.row(cap, N.target, b, i)); });
  return { agg: agg, pred: pred, truth: truth };
}

// ---- layout ----
function edgeCurve(e, boxes, lanes) {   // the bezier an edge follows, in its source phase's colour
  var a = boxes[e.from], b = boxes[e.to], p0, p3, p1, p2;
  var dev = e.device ? devices.indexOf(e.device) : -1;
  if (dev >= 0) {
    var ly = lanes[dev].y + lanes[dev].h / 2;
    p0 = [a.x + a.w, ly]; p3 = [b.x, ly];
  } else if (a.cy - b.cy > 40) { // from below: top -> bottom (FiLM into the encoders / output)
    p0 = [a.cx, a.y]; p3 = [b.cx, b.y + b.h];
    if (e.to === "output") { p0 = [a.x + a.w, a.cy]; p3 = [b.x + b.w * 0.5, b.y + b.h]; }
  } else if (b.cy - a.cy > 40) { // down into the condition branch
    p0 = [a.cx, a.y + a.h]; p3 = [b.x, b.cy];
  } else { p0 = [a.x + a.w, a.cy]; p3 = [b.x, b.cy]; }
  if (e.from === "cond" && e.to === "film_dec") { p0 = [a.cx, a.y + a.h]; p3 = [b.cx, b.y + b.h]; }
  var dx = p3[0] - p0[0], dy = p3[1] - p0[1];
  if (Math.abs(dy) > 40 && dev < 0) { p1 = [p0[0], p0[1] + dy * 0.6]; p2 = [p3[0], p3[1] - dy * 0.6];
    if (b.cy - a.cy > 40) { p1 = [p0[0], p3[1]]; p2 = [p0[0] + dx * 0.3, p3[1]]; }
    if (e.to === "output") { p1 = [p3[0], p0[1]]; p2 = [p3[0], p0[1]]; } }
  else if (e.from === "cond" && e.to === "film_dec") { p1 = [p0[0], p0[1] + 60]; p2 = [p3[0], p3[1] + 60]; }
  else { p1 = [p0[0] + dx * 0.5, p0[1]]; p2 = [p3[0] - dx * 0.5, p3[1]]; }
  return { e: e, pts: bezier(p0, p1, p2, p3, 48), color: phaseColors[nodesById[e.from].phase] };
}
function layout(W, H) {
  var left = 156, right = 190, pad = 10, headsW = 108;
  var headsX = W - pad - right - 26 - headsW;
  var colW = (headsX - 14 - pad - left) / 7;
  var nw = Math.max(70, Math.min(120, colW - 6)), nh = 56;
  var rowY = function (r) { return r < 2 ? 130 : 368; };
  var tallY = 22, tallH = 290;
  var boxes = {};
  flow.nodes.forEach(function (n) {
    var cx, cy = rowY(n.row), w = nw, h = nh;
    if (n.col === 0) { cx = pad + left / 2; w = left - 8; h = 150; }
    else if (n.col === 9) { cx = W - pad - right / 2; w = right - 4; h = tallH; cy = tallY + tallH / 2; }
    else if (n.col === 8) cx = headsX + headsW / 2;
    else cx = pad + left + (n.col - 0.5) * colW;
    if (n.row > 2) w = Math.min(160, colW * 1.5);
    if (n.id === "heads") { h = tallH; cy = tallY + tallH / 2; w = headsW; }
    boxes[n.id] = { x: cx - w / 2, y: cy - h / 2, w: w, h: h, cx: cx, cy: cy };
  });
  var outBox = boxes.output, laneH = (outBox.h - 28) / devices.length;
  var lanes = devices.map(function (d, i) { return { x: outBox.x + 6, y: outBox.y + 24 + i * laneH, w: outBox.w - 12, h: laneH - 8 }; });
  var edges = flow.edges.map(function (e) { return edgeCurve(e, boxes, lanes); });
  return { W: W, H: H, boxes: boxes, lanes: lanes, edges: edges };
}

// ---- drawing ----
function spark(xs, box, lo, hi, color, width, fill) {
  var n = xs.length;
  ctx.beginPath();
  for (var i = 0; i < n; i++) {
    var px = box.x + (i / (n - 1)) * box.w, py = box.y + box.h - ((xs[i] - lo) / (hi - lo || 1)) * box.h;
    if (i === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
  }
  ctx.strokeStyle = color; ctx.lineWidth = width; ctx.stroke();
  if (fill) { ctx.lineTo(box.x + box.w, box.y + box.h); ctx.lineTo(box.x, box.y + box.h); ctx.closePath();
    ctx.globalAlpha = 0.18; ctx.fillStyle = color; ctx.fill(); ctx.globalAlpha = 1; }
}
function maxOf(a) { var m = -Infinity; for (var i = 0; i < a.length; i++) if (a[i] > m) m = a[i]; return m; }
function roundRect(x, y, w, h, r) {
  ctx.beginPath(); ctx.moveTo(x + r, y); ctx.arcTo(x + w, y, x + w, y + h, r); ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r); ctx.arcTo(x, y, x + w, y, r); ctx.closePath();
}

function drawEdges(Lo) {
  Lo.edges.forEach(function (ed, k) {
    var hot = state.hover === k;
    ctx.beginPath();
    ed.pts.forEach(function (p, i) { if (i === 0) ctx.moveTo(p[0], p[1]); else ctx.lineTo(p[0], p[1]); });
    ctx.strokeStyle = hot ? TEXT : tint(ed.color, 0.55); ctx.lineWidth = hot ? 3 : 2; ctx.stroke();
    var end = ed.pts[ed.pts.length - 1], prev = ed.pts[ed.pts.length - 3], ang = Math.atan2(end[1] - prev[1], end[0] - prev[0]);
    ctx.beginPath(); ctx.moveTo(end[0], end[1]);
    ctx.lineTo(end[0] - 8 * Math.cos(ang - 0.4), end[1] - 8 * Math.sin(ang - 0.4));
    ctx.lineTo(end[0] - 8 * Math.cos(ang + 0.4), end[1] - 8 * Math.sin(ang + 0.4)); ctx.closePath();
    ctx.fillStyle = hot ? TEXT : tint(ed.color, 0.7); ctx.fill();
  });
}
function drawPulses(Lo) {
  Lo.edges.forEach(function (ed, k) {
    var n = ed.pts.length - 1;
    for (var j = 0; j < 3; j++) {
      var f = (state.t / 2400 + j / 3 + (k % 5) * 0.07) % 1, idx = f * n, i0 = Math.floor(idx), u = idx - i0;
      var a = ed.pts[i0], b = ed.pts[Math.min(n, i0 + 1)];
      ctx.beginPath(); ctx.arc(a[0] + (b[0] - a[0]) * u, a[1] + (b[1] - a[1]) * u, 3.2, 0, 2 * Math.PI);
      ctx.fillStyle = ed.color; ctx.fill();
    }
  });
}
function drawInputNode(b, c) {   // the aggregate sparkline
  ctx.fillText("Aggregate (W)", b.cx, b.y + 12);
  var box = { x: b.x + 8, y: b.y + 26, w: b.w - 16, h: b.h - 52 }, hi = Math.max(1, maxOf(data.agg));
  spark(data.agg, box, 0, hi * 1.05, c, 1.2, true);
  ctx.font = "11px " + FONT; ctx.fillStyle = MUTED; ctx.textAlign = "left";
  ctx.fillText("peak " + Math.round(hi) + " W", b.x + 8, b.y + b.h - 18);
  ctx.fillText(L * PG.model.step_minutes + " min × " + cap.record(N.input).shape[1] + " channels", b.x + 8, b.y + b.h - 6);
}
function drawOutputNode(b, Lo) {   // one lane per device: prediction over ground truth
  ctx.fillText("Per-device power (W)", b.cx, b.y + 12);
  Lo.lanes.forEach(function (ln, i) {
    var hi = Math.max(1, maxOf(data.pred[i]), maxOf(data.truth[i]));
    var plot = { x: ln.x, y: ln.y + 12, w: ln.w, h: ln.h - 12 };   // the traces below the name and peak (never under them)
    ctx.fillStyle = "#fff"; ctx.fillRect(ln.x, ln.y, ln.w, ln.h);
    spark(data.truth[i], plot, 0, hi * 1.05, "#8c959f", 1, false);
    spark(data.pred[i], plot, 0, hi * 1.05, deviceColors[i % 5], 1.3, true);
    ctx.font = "10px " + FONT; ctx.fillStyle = TEXT; ctx.textAlign = "left";
    ctx.fillText(devices[i].replace("_", " "), ln.x + 2, ln.y + 6);
    ctx.textAlign = "right"; ctx.fillStyle = MUTED; ctx.fillText((hi >= 100 ? Math.round(hi) : fmt(hi, 3)) + " W", ln.x + ln.w - 2, ln.y + 6);
  });
}
function drawHeadsNode(n, b, c, Lo) {   // one pill per device head, level with its output lane
  ctx.fillText(n.label, b.cx, b.y + 12);
  ctx.font = "11px " + FONT; ctx.fillStyle = MUTED; ctx.fillText(n.sub, b.cx, b.y + 26);
  Lo.lanes.forEach(function (ln, i) {
    var y = ln.y + ln.h / 2;
    roundRect(b.x + 6, y - 12, b.w - 12, 24, 5); ctx.fillStyle = "#fff"; ctx.fill();
    ctx.strokeStyle = tint(c, 0.6); ctx.lineWidth = 1; ctx.stroke();
    ctx.fillStyle = TEXT; ctx.font = "10px " + FONT; ctx.fillText(devices[i].replace("_", " "), b.cx, y);
  });
}
function drawNode(n, Lo) {
  var b = Lo.boxes[n.id], c = phaseColors[n.phase];
  roundRect(b.x, b.y, b.w, b.h, 8); ctx.fillStyle = tint(c, 0.16); ctx.fill();
  ctx.lineWidth = 2; ctx.strokeStyle = c; ctx.stroke();
  ctx.fillStyle = TEXT; ctx.textAlign = "center"; ctx.font = "600 12px " + FONT;
  if (n.id === "input") drawInputNode(b, c);
  else if (n.id === "output") drawOutputNode(b, Lo);
  else if (n.id === "heads") drawHeadsNode(n, b, c, Lo);
  else {
    ctx.font = "600 11px " + FONT;
    ctx.fillText(n.label, b.cx, b.cy - 13, b.w - 6);   // a name wider than its box is narrowed to fit inside it
    ctx.font = "11px " + FONT; ctx.fillStyle = MUTED; ctx.fillText(n.sub, b.cx, b.cy + 2);
    ctx.fillStyle = TEXT; ctx.font = "10px ui-monospace, Menlo, Consolas, monospace";
    ctx.fillText(shapeText(flow.records[n.record].shape), b.cx, b.cy + 17);
  }
}
function drawCaptions(Lo) {
  ctx.font = "11px " + FONT; ctx.fillStyle = MUTED; ctx.textAlign = "left";
  var enc0 = Lo.boxes.enc0;
  ctx.fillText("× " + PG.model.n_layers + " encoder layers: " + flow.encoder_caption, enc0.x, enc0.y - 14);
  ctx.fillText("window " + samples[state.sample] + (cap.meta.t0 ? " · starts " + String(cap.meta.t0[state.sample]).replace("T", " ") : ""),
               Lo.boxes.input.x, Lo.boxes.input.y - 14);
  ctx.textAlign = "right";
  ctx.fillText("grey: ground truth", Lo.boxes.output.x + Lo.boxes.output.w, Lo.boxes.output.y + Lo.boxes.output.h + 12);
}
function draw() {
  var dpr = window.devicePixelRatio || 1, cw = canvas.clientWidth, ch = canvas.clientHeight;
  if (canvas.width !== Math.round(cw * dpr) || canvas.height !== Math.round(ch * dpr)) {
    canvas.width = Math.round(cw * dpr); canvas.height = Math.round(ch * dpr); state.layout = null;
  }
  // narrow frames (embeds, small screens): lay out at 1150 logical px and scale down
  var S = Math.min(1, cw / 1150, ch / 440), W = cw / S, H = ch / S;
  state.scale = S;
  if (!state.layout) { state.layout = layout(W, H); placeLinks(); }
  var Lo = state.layout;
  ctx.setTransform(dpr * S, 0, 0, dpr * S, 0, 0);
  ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, W, H);
  ctx.font = "600 12px " + FONT; ctx.textBaseline = "middle"; ctx.textAlign = "center";
  drawEdges(Lo);
  if (state.playing) drawPulses(Lo);
  flow.nodes.forEach(function (n) { drawNode(n, Lo); });
  drawCaptions(Lo);
}

// ---- links over the nodes (real, focusable) ----
function placeLinks() {
  linksEl.innerHTML = "";
  flow.nodes.forEach(function (n) {
    var S = state.scale || 1, b0 = state.layout.boxes[n.id], rec = flow.records[n.record], has = pages.indexOf(n.page) >= 0;
    var b = { x: b0.x * S, y: b0.y * S, w: b0.w * S, h: b0.h * S };
    var a = document.createElement("a");
    a.className = "nb-flow-link"; a.dataset.node = n.id;
    a.style.left = b.x + "px"; a.style.top = b.y + "px"; a.style.width = b.w + "px"; a.style.height = b.h + "px";
    var text = n.label + " → " + rec.name + " " + shapeText(rec.shape) + (has ? "" : " (page not built)");
    a.textContent = text; a.setAttribute("aria-label", text + (has ? ", open the " + n.page + " page" : ""));
    if (has) a.href = n.page + ".html"; else { a.setAttribute("aria-disabled", "true"); a.tabIndex = 0; }
    function show() {
      var r = a.getBoundingClientRect();
      tooltip.show(n.label + (has ? "  (click: " + n.page + " page)" : "") + "\n" + rec.name + "  " + shapeText(rec.shape) +
        "\naxes: " + rec.axes.join(" × ") + "\n" + rec.section + " · stage " + rec.stage, r.right, r.top);
    }
    a.addEventListener("mouseenter", show); a.addEventListener("focus", show);
    a.addEventListener("mouseleave", function () { tooltip.hide(); });
    a.addEventListener("blur", function () { tooltip.hide(); });
    linksEl.appendChild(a);
  });
}

// ---- edge hover ----
function edgeAt(px, py) {
  var best = -1, bd = 8;
  state.layout.edges.forEach(function (ed, k) {
    ed.pts.forEach(function (p) { var d = Math.hypot(p[0] - px, p[1] - py); if (d < bd) { bd = d; best = k; } });
  });
  return best;
}
function edgeText(k) {
  var e = state.layout.edges[k].e, rec = flow.records[e.record];
  return nodesById[e.from].label + " → " + nodesById[e.to].label + "\n" + rec.name + "  " + shapeText(rec.shape) +
    "\naxes: " + rec.axes.join(" × ") + "\n" + rec.doc + "\n" + rec.section + " · stage " + rec.stage;
}
function onMove(ev) {
  var r = canvas.getBoundingClientRect(), S = state.scale || 1, k = edgeAt((ev.clientX - r.left) / S, (ev.clientY - r.top) / S);
  if (k !== state.hover) { state.hover = k < 0 ? null : k; if (!state.playing) draw(); }
  if (k >= 0) tooltip.show(edgeText(k), ev.clientX, ev.clientY, function () { onMove(ev); }); else tooltip.hide();
}
function buildPointer() {
  canvas.addEventListener("mousemove", onMove);
  canvas.addEventListener("mouseleave", function () { state.hover = null; tooltip.hide(); if (!state.playing) draw(); });
}

// ---- controls, legend, shapes table ----
function buildControls() {
  controlsEl = document.getElementById("nb-controls");
  playBtn = controls.button(controlsEl, "Pause flow", function () { setPlaying(!state.playing); });
  playBtn.id = "flow-play";
  controls.select(controlsEl, "Example window", samples.map(function (s, i) { return { value: i, label: "#" + s }; }), 0, function (v) {
    state.sample = Number(v); data = series(state.sample); draw();
  }).id = "flow-sample";
  saveButton(controlsEl, canvas, "nilmformer-overview.png", draw);
}
function buildLegend() {
  var legendEl = document.getElementById("phase-legend");
  Object.keys(PHASE_LABEL).forEach(function (p) {
    var li = document.createElement("li"), sw = document.createElement("i");
    sw.style.background = tint(phaseColors[p], 0.16); sw.style.border = "2px solid " + phaseColors[p];
    li.appendChild(sw); li.appendChild(document.createTextNode(PHASE_LABEL[p])); legendEl.appendChild(li);
  });
}
function buildShapesTable() {
  var tbody = document.querySelector("#shapes-table tbody");
  flow.edges.forEach(function (e) {
    var rec = flow.records[e.record], tr = document.createElement("tr");
    [nodesById[e.from].label, nodesById[e.to].label, rec.name, shapeText(rec.shape), rec.axes.join(" × "), rec.section].forEach(function (t, i) {
      var td = document.createElement("td"); if (i === 2 || i === 3) { var c = document.createElement("code"); c.textContent = t; td.appendChild(c); } else td.textContent = t;
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
}

// ---- the pulse animation ----
function frame(now) {
  state.t = now;
  draw();
  if (state.playing) state.raf = requestAnimationFrame(frame);
}
function setPlaying(on) {
  on = on && !animationsOff();
  state.playing = on;
  playBtn.textContent = on ? "Pause flow" : "Play flow";
  playBtn.setAttribute("aria-pressed", on ? "true" : "false");
  cancelAnimationFrame(state.raf);
  if (on) state.raf = requestAnimationFrame(frame); else draw();
}

function load(pg) {   // the blobs, the sizes and the first state
  PG = pg; N = pg.data.names;
  flow = unpack(blob("flow"));
  cap = decode(blob("capture"));
  canvas = document.getElementById("flow"); wrap = document.getElementById("flow-wrap");
  linksEl = document.getElementById("flow-links");
  pages = (linksEl.dataset.pages || "").split(",").filter(Boolean);
  ctx = context2d(canvas);
  devices = cap.meta.devices; samples = cap.meta.samples;
  state = { sample: 0, hover: null, playing: false, t: 0, raf: 0, layout: null };
  flow.nodes.forEach(function (n) { nodesById[n.id] = n; });
  L = cap.record(N.input).shape[2];
  data = series(0);
}
function finish() {
  onResize(wrap, function () { state.layout = null; if (!state.playing) draw(); });
  var urlState = stateInUrl([["sample", "#flow-sample"]]);
  var box = document.getElementById("docs-box");
  if (box) startDocsBox(box, { ownHref: "index.html", ownState: urlState.values, watch: controlsEl });
  ready();
  if (!animationsOff()) setPlaying(true);
  testHook({ state: state, series: function () { return data; } });
}
function start(pg) {
  // a few tasks instead of one long one while loading (core.inTasks); the diagram is drawn (setPlaying(false)) before ready
  inTasks([function () { load(pg); }, function () { buildPointer(); buildControls(); buildLegend(); buildShapesTable(); },
           function () { setPlaying(false); }, finish]);
}

registerPage({ slug: "index", start: start });
