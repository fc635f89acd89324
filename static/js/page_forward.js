/* page_forward.js: the forward-pass page (spec forward-pass.md 4.2).
 * #fwd-3d: one regl context, an orthographic isometric camera, one block per stage sized by the real
 * record shapes (sqrt scale), front face = the selected sample's values (CPU colour-mapped RGBA8 texture,
 * box-averaged to <= 128 x 128 texels for the thumbnail). #fwd-zoom: a 2D canvas with the exact values of the
 * selected stage (heatmap2d.js: no WebGL context to create).
 * Stage list, record names: page().data.stages;
 * shapes, axes, stats, docs: the blob records (or, for binned stages, the records' metadata in the "binned" blob).
 * The page state lives in module variables set once by start(); each build, draw and on function does one job.
 */
import { decode as unpack } from "@msgpack/msgpack";
import boxFrag from "../glsl/forward_box.frag";
import boxVert from "../glsl/forward_box.vert";
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { colormaps, setLegends } from "./colormaps.js";
import { afterReady, animationsOff, blob, controls, fail, fmt, font, inTasks, newTask, onResize, onScreen, overlay2d, ready, saveButton, setText, tooltip } from "./core.js";
import { decode, decodeF16 } from "./decode.js";
import { createForwardAnim } from "./forward_anim.js";
import { animData } from "./forward_anim_data.js";
import { gl } from "./gl.js";
import { fitCanvas } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
import { stepTicks, stepTime, windowClock } from "./time_axis.js";

var FONT = font(12);
var SMALL = font(11);
var BOLD = font(12, 600);
var CMAP = "burd", MAXTEX = 128;
var YAW = -0.17, PITCH = 0.5, GAP = 0.9, ZGAP = 6.2, LIFT = 0.3;   // camera angles; block gaps; selected block's lift
var TINT = [0.74, 0.78, 0.82];

/* ---------- the page's state (one page per document; set by start) ---------- */
var P, PG, cap, stages, S, urlState = null, anim = null;   // payload data, the whole payload, capture, stages, selection, URL sync, animation
var canvas, overlay, regl, drawBox, lut, texCache = {}, faceK = {}; // the 3D view; faceK: each face's colour scale
var VP = null, VIEW = null, ROT = null;                  // camera: view-projection (GLSL), row-major view, rotation
var zc, zo, zhm = {}, ZB = null;                         // the zoom panel: canvas (2D), overlay, heatmaps, plot box
var stageSel, playBtn;                                   // the controls that code sets


function prod(a) { return a.reduce(function (x, y) { return x * y; }, 1); }

/* ---------- a stage: its records as one (rows x cols) matrix per sample ---------- */
function makeStage(st, cap, binned) {
  var parts = st.records.map(function (name) {
    if (st.binned) {
      var e = binned.summaries[name], rec = e.record, src = e.of ? binned.summaries[e.of] : e;
      return { name: name, rec: rec, binned: true, entry: e, src: src };
    }
    return { name: name, rec: cap.record(name), binned: false };
  });
  var B = parts[0].rec.shape[0];
  function dims(shape) { var s = shape.slice(1); return s.length === 1 ? [1, s[0]] : [prod(s.slice(0, -1)), s[s.length - 1]]; }
  var full = parts.map(function (p) { return dims(p.rec.shape); });
  var shown = parts.map(function (p) {
    if (!p.binned) return dims(p.rec.shape);
    var sh = p.src.shape.slice();
    if (p.entry.of) sh = p.entry.perm.map(function (k) { return p.src.shape[k]; });
    return dims(sh);
  });
  var m = 0;
  parts.forEach(function (p) { m = Math.max(m, Math.abs(p.rec.stats.min), Math.abs(p.rec.stats.max)); });
  var f16cache = {};
  function srcData(p) {            // binned values (B, ...) as Float32Array
    if (!f16cache[p.src.record.name]) f16cache[p.src.record.name] = decodeF16(p.src.data, prod(p.src.shape));
    return f16cache[p.src.record.name];
  }
  return {
    st: st, parts: parts, B: B,
    rowsFull: full.reduce(function (a, d) { return a + d[0]; }, 0), colsFull: full[0][1],
    rows: shown.reduce(function (a, d) { return a + d[0]; }, 0), cols: shown[0][1],
    binned: !!st.binned, range: m || 1,
    // per-part row offsets in the shown matrix
    offsets: shown.reduce(function (acc, d) { acc.push(acc[acc.length - 1] + d[0]); return acc; }, [0]),
    values: function (i) {
      var out = new Float32Array(this.rows * this.cols), o = 0;
      parts.forEach(function (p, k) {
        var n = shown[k][0] * shown[k][1];
        if (!p.binned) out.set(cap.slice(p.name, i), o);
        else {
          var a = srcData(p), per = n, base = i * per;
          if (!p.entry.of) out.set(a.subarray(base, base + per), o);
          else {                    // transposed view of the source's binned (R, C) -> (C, R)
            var R = p.src.shape[1], C = p.src.shape[2];
            for (var r = 0; r < R; r++) for (var c = 0; c < C; c++) out[o + c * R + r] = a[base + r * C + c];
          }
        }
        o += n;
      });
      return out;
    },
  };
}

/* ---------- 4x4 matrices (column-major for GLSL) ---------- */
function mul(a, b) { // row-major 4x4 a*b
  var o = new Array(16);
  for (var r = 0; r < 4; r++) for (var c = 0; c < 4; c++) {
    var s = 0; for (var k = 0; k < 4; k++) s += a[r * 4 + k] * b[k * 4 + c]; o[r * 4 + c] = s;
  }
  return o;
}
function colMajor(m) { var o = new Float32Array(16); for (var r = 0; r < 4; r++) for (var c = 0; c < 4; c++) o[c * 4 + r] = m[r * 4 + c]; return o; }
function apply(m, p) { return [0, 1, 2, 3].map(function (r) { return m[r * 4] * p[0] + m[r * 4 + 1] * p[1] + m[r * 4 + 2] * p[2] + m[r * 4 + 3]; }); }

/* ---------- the animated forward pass (4.4): its data are the stages' tensors and the "anim" blob ---------- */
function startAnim(pg, sample, onStage) {
  function matrix(name, i) {     // a one-record stage's (rows x cols) values for sample i, as the page shows them
    var s = stages.find(function (x) { return x.parts.length === 1 && x.parts[0].name === name; });
    return { values: s.values(i), rows: s.rows, cols: s.cols, range: s.range, shape: [s.B, s.rowsFull, s.colsFull], binned: s.binned };
  }
  var cv = document.getElementById("fwd-anim");
  fitCanvas(cv);
  return createForwardAnim({
    canvas: cv, overlay: document.getElementById("fwd-anim-overlay"), caption: document.getElementById("fwd-anim-caption"),
    status: document.getElementById("fwd-anim-status"), controls: document.getElementById("fwd-anim-controls"), pg: pg,
    data: animData(pg, cap, unpack(blob("anim")), matrix), sample: sample, clock: sampleClock, onStage: onStage,
  });
}
function onAnimStage(stage) {    // the animation reached a stage: select its block
  var i = stages.findIndex(function (s) { return s.st.stage === stage; });
  if (i >= 0 && i !== S.stage) select(i);
}

/* ---------- geometry: blocks in three rows, an isometric orthographic camera ---------- */
function layoutStages(window) {
  function ext(n) { return 0.3 + 1.5 * Math.sqrt(n / window); }   // block size relative to the window
  var rows = [stages.slice(0, 5), stages.slice(5, 9), stages.slice(9)];
  stages.forEach(function (s, i) { s.row = i < 5 ? 0 : i < 9 ? 1 : 2; });
  stages.forEach(function (s) { s.w = ext(s.colsFull); s.h = ext(s.rowsFull); s.d = 0.12 + 0.02 * s.B; });
  rows.forEach(function (row, ri) {
    var total = row.reduce(function (a, s) { return a + s.w; }, 0) + GAP * (row.length - 1);
    var x = -total / 2 + ri * ZGAP * Math.tan(-YAW);      // undo the yaw's sideways shift of the rows behind
    row.forEach(function (s) { s.origin = [x, 0, ri * ZGAP]; x += s.w + GAP; });
  });
  ROT = mul([1, 0, 0, 0, 0, Math.cos(PITCH), -Math.sin(PITCH), 0, 0, Math.sin(PITCH), Math.cos(PITCH), 0, 0, 0, 0, 1],
            [Math.cos(YAW), 0, Math.sin(YAW), 0, 0, 1, 0, 0, -Math.sin(YAW), 0, Math.cos(YAW), 0, 0, 0, 0, 1]);
}
function corners(s, lift) {
  var o = s.origin, out = [];
  for (var i = 0; i < 8; i++) out.push([o[0] + (i & 1 ? s.w : 0), o[1] + (i & 2 ? s.h : 0) + (lift || 0), o[2] + (i & 4 ? s.d : 0)]);
  return out;
}
function rotatedBounds() {       // the rotated bounding box of every block, lifted or not
  var lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  stages.forEach(function (s) {
    corners(s, LIFT).concat(corners(s, 0)).forEach(function (p) {
      var q = apply(ROT, p); for (var k = 0; k < 3; k++) { lo[k] = Math.min(lo[k], q[k]); hi[k] = Math.max(hi[k], q[k]); }
    });
  });
  return { lo: lo, hi: hi };
}
function camera() {
  var W = canvas.clientWidth, H = canvas.clientHeight, bb = rotatedBounds(), lo = bb.lo, hi = bb.hi;
  var mt = 30, mb = 34, ml = 44, mr = 44;        // pixel margins for labels
  var sx = (W - ml - mr) / (hi[0] - lo[0]), sy = (H - mt - mb) / (hi[1] - lo[1]), sc = Math.min(sx, sy);
  var cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2, oyPix = (mb - mt) / 2;
  var zr = Math.max(Math.abs(lo[2]), Math.abs(hi[2])) + 1;
  var ortho = [2 * sc / W, 0, 0, -cx * 2 * sc / W,
               0, 2 * sc / H, 0, -cy * 2 * sc / H + 2 * oyPix / H,
               0, 0, -1 / zr, 0, 0, 0, 0, 1];
  VIEW = mul(ortho, ROT);
  VP = colMajor(VIEW);
}
function toScreen(p) {
  var q = apply(VIEW, p);
  return [(q[0] + 1) / 2 * canvas.clientWidth, (1 - q[1]) / 2 * canvas.clientHeight];
}
function screenBox(s) {
  var pts = corners(s, s === stages[S.stage] ? LIFT : 0).map(toScreen), x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  pts.forEach(function (p) { x0 = Math.min(x0, p[0]); y0 = Math.min(y0, p[1]); x1 = Math.max(x1, p[0]); y1 = Math.max(y1, p[1]); });
  return { x0: x0, y0: y0, x1: x1, y1: y1 };
}
function pick(px, py) {
  for (var i = stages.length - 1; i >= 0; i--) {      // front row first
    var b = screenBox(stages[i]);
    if (px >= b.x0 && px <= b.x1 && py >= b.y0 && py <= b.y1) return i;
  }
  return -1;
}

/* ---------- regl (3D): one box command, a colour-mapped face texture per stage and sample ---------- */
function buildBoxCommand() {
  var pos = [], face = [];
  function quad(a, b, c, d, f) { [a, b, c, a, c, d].forEach(function (p) { pos.push(p); face.push(f); }); }
  quad([0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1], 0);   // front (z = 1): the heatmap
  quad([0, 1, 0], [0, 1, 1], [1, 1, 1], [1, 1, 0], 1);   // top
  quad([1, 0, 0], [1, 1, 0], [1, 1, 1], [1, 0, 1], 2);   // right
  return regl({
    vert: boxVert, frag: boxFrag,
    attributes: { position: pos, face: face }, count: pos.length,
    uniforms: { viewProj: function () { return VP; }, origin: regl.prop("origin"), size: regl.prop("size"),
                faceTex: regl.prop("tex"), tint: regl.prop("tint"), selected: regl.prop("selected") },
    depth: { enable: true },
  });
}
function faceMeans(s, v, tr, tc) {   // (rows x cols) values box-averaged to (tr x tc)
  var R = s.rows, C = s.cols, out = new Float32Array(tr * tc);
  for (var r = 0; r < tr; r++) {
    var r0 = Math.floor(r * R / tr), r1 = Math.max(r0 + 1, Math.floor((r + 1) * R / tr));
    for (var c = 0; c < tc; c++) {
      var c0 = Math.floor(c * C / tc), c1 = Math.max(c0 + 1, Math.floor((c + 1) * C / tc)), acc = 0, n = 0;
      for (var rr = r0; rr < r1; rr++) for (var cc = c0; cc < c1; cc++) { acc += v[rr * C + cc]; n++; }
      out[r * tc + c] = acc / n;
    }
  }
  return out;
}
// A block face's colour scale: the 98th percentile of its averaged |values| (FACE_PCT), not the stage's largest
// |value|, against which averaged faces were nearly white; the zoom view below keeps the stage's exact scale.
var FACE_PCT = 0.98;
function faceScale(m) {   // on an even sample of at most 4096 texels: a sort that stays well under a millisecond
  var step = Math.max(1, Math.floor(m.length / 4096)), a = new Float32Array(Math.ceil(m.length / step));
  for (var i = 0, j = 0; i < m.length; i += step) a[j++] = Math.abs(m[i]);
  a.sort();
  var q = a[Math.min(a.length - 1, Math.floor(FACE_PCT * a.length))];
  return q > 0 ? q : a[a.length - 1] || 1;
}
function faceImage(s, v, tr, tc) {   // the averaged face as RGBA8 texels, diverging colours on +-faceScale -> {img, k}
  var m = faceMeans(s, v, tr, tc), k = faceScale(m), img = new Uint8Array(tr * tc * 4);
  for (var i = 0; i < m.length; i++) {
    var t = 0.5 + 0.5 * m[i] / k, idx = Math.round(Math.max(0, Math.min(1, t)) * 255) * 4, o = i * 4;
    img[o] = lut[idx]; img[o + 1] = lut[idx + 1]; img[o + 2] = lut[idx + 2]; img[o + 3] = 255;
  }
  return { img: img, k: k };
}
// Stage si's face for the selected sample: its texels and scale k computed on the CPU (facePixels, kept until
// uploaded; k in faceK), then its texture (cached), so a page's start can do the CPU part before its WebGL context.
var facePix = {};
function faceKey(si) { return si + "#" + S.sample; }
function facePixels(si) {
  var key = faceKey(si);
  if (!facePix[key]) {
    var s = stages[si], tr = Math.min(s.rows, MAXTEX), tc = Math.min(s.cols, MAXTEX), f = faceImage(s, s.values(S.sample), tr, tc);
    facePix[key] = { img: f.img, tr: tr, tc: tc };
    faceK[key] = f.k;
  }
  return facePix[key];
}
function faceTexture(si) {
  var key = faceKey(si);
  if (texCache[key]) return texCache[key];
  var f = facePixels(si);
  delete facePix[key];
  return (texCache[key] = regl.texture({ width: f.tc, height: f.tr, data: f.img, min: "linear", mag: f.tc < 40 || f.tr < 40 ? "nearest" : "linear",
                                          wrapS: "clamp", wrapT: "clamp" }));
}
function faceScaleOf(si) { if (faceK[faceKey(si)] === undefined) facePixels(si); return faceK[faceKey(si)]; }
// What the faces' colours mean: one scale per face, said in place with each face's range (its k) for this sample.
function drawFaceLegend() {
  var parts = stages.map(function (s, i) { return s.st.stage + " " + (s.st.short || s.st.title) + " ±" + fmt(faceScaleOf(i), 3); });
  setText(document.getElementById("fwd-face-text"), "Block faces: each on its own colour scale, blue −k, white 0, red +k, with k the 98th " +
    "percentile of that face's |averaged values|, so every face's pattern shows but colours do not compare across blocks " +
    "(the large view below has one scale per stage). k for sample " + P.samples[S.sample] + ": " + parts.join(" · ") + ".");
  setLegends(document.getElementById("fwd-face-legend"), [[CMAP, -1, 1, "block face colour: value ÷ its face's k", 3]]);
}
function frame3d() {
  fitCanvas(canvas);
  camera();
  regl.poll();
  regl.clear({ color: [1, 1, 1, 1], depth: 1 });
  stages.forEach(function (s, i) {
    var sel = i === S.stage, o = s.origin;
    drawBox({ origin: [o[0], o[1] + (sel ? LIFT : 0), o[2]], size: [s.w, s.h, s.d], tex: faceTexture(i), tint: TINT, selected: sel ? 1 : 0 });
  });
  drawLabels();
}

/* ---------- the 3D view's 2D overlay: flow arrows, stage names, shapes ---------- */
function shapeText(s) {
  if (s.parts.length === 1) return s.parts[0].rec.shape.join("×");
  return s.parts.length + " × (" + s.parts[0].rec.shape.join("×") + ")";
}
function drawArrow(g, from, to) {
  g.strokeStyle = "#8c959f"; g.fillStyle = "#8c959f"; g.lineWidth = 1.2;
  g.beginPath(); g.moveTo(from[0] + 2, from[1]); g.lineTo(to[0] - 5, to[1]); g.stroke();
  g.beginPath(); g.moveTo(to[0] - 2, to[1]); g.lineTo(to[0] - 8, to[1] - 3.5); g.lineTo(to[0] - 8, to[1] + 3.5); g.fill();
}
// Labels never pile up, on any screen: each is measured and kept only where its box overlaps no label kept before
// it, no other block and no canvas edge, most important first: the selected stage's name and shape; every other
// stage's number (above its block, else beside it); each of their full names in place of the number where it fits (above the block, a line higher,
// or starting over the block's middle); then the other shapes where room is left (on a phone most of them are thinned out). Every kept box is
// recorded (plot2d.chartOf(overlay).labels) for the browser tests' overlap check (tests/browser/test_labels.py).
var LABEL_H = 13, BLOCK_INSET = 4;
function blockArea(s) {   // a block's screen box less the empty corners an isometric box leaves in it
  var b = screenBox(s), k = BLOCK_INSET;
  return { x0: b.x0 + k, y0: b.y0 + k, x1: b.x1 - k, y1: b.y1 - k };
}
function hits(r, t) { return r.x0 < t.x1 && t.x0 < r.x1 && r.y0 < t.y1 && t.y0 < r.y1; }
// The first free spot ([align, x, y]) for the text of block `own` in the current font: its box, else null.
// `mine`: a kept box the text would replace (the stage's number), not in its way.
function spotFor(g, room, text, spots, baseline, own, mine) {
  var w = g.measureText(text).width;
  for (var k = 0; k < spots.length; k++) {
    var a = spots[k][0], x = spots[k][1], y = spots[k][2], left = a === "left" ? x : a === "right" ? x - w : x - w / 2;
    var y0 = baseline === "bottom" ? y - LABEL_H : baseline === "middle" ? y - LABEL_H / 2 : y;
    var r = { text: text, x0: left - 1, x1: left + w + 1, y0: y0, y1: y0 + LABEL_H, at: [a, x, y, baseline, g.font, g.fillStyle] };
    if (r.x0 < 0 || r.y0 < 0 || r.x1 > room.W || r.y1 > room.H) continue;
    if (room.labels.some(function (t) { return t !== mine && hits(r, t); })) continue;
    if (!room.blocks.some(function (b, i) { return i !== own && hits(r, b); })) return r;
  }
  return null;
}
function keep(room, r, mine) {   // r in the place of `mine` (or added); -> r
  var k = room.labels.indexOf(mine);
  if (r) { if (k >= 0) room.labels[k] = r; else room.labels.push(r); }
  return r;
}
function stagePoints(s, sel) {
  var o = s.origin, lift = sel ? LIFT : 0;
  return { top: toScreen([o[0] + s.w / 2, o[1] + s.h + lift, o[2]]), bot: toScreen([o[0] + s.w / 2, o[1] + lift, o[2] + s.d]),
           mid: toScreen([o[0] + s.w, o[1] + s.h / 2 + lift, o[2] + s.d / 2]), left: toScreen([o[0], o[1] + s.h / 2 + lift, o[2] + s.d / 2]) };
}
function nameSpot(g, room, i, text, mine) {   // stage i's name above its block, a line higher, or from its middle on
  var p = stagePoints(stages[i], i === S.stage).top;
  g.font = BOLD; g.fillStyle = i === S.stage ? "#b34700" : "#1b1f24";
  var spots = [["center", p[0], p[1] - 6], ["center", p[0], p[1] - 20], ["left", p[0] - 8, p[1] - 6]];
  return keep(room, spotFor(g, room, text, spots, "bottom", i, mine), mine);
}
function numberSpot(g, room, i) {   // stage i's number above its block, else beside it (right, then left)
  var b = screenBox(stages[i]), y = (b.y0 + b.y1) / 2;
  return nameSpot(g, room, i, String(stages[i].st.stage), null) ||
         keep(room, spotFor(g, room, String(stages[i].st.stage), [["left", b.x1 + 3, y], ["right", b.x0 - 3, y]], "middle", i, null), null);
}
function shapeSpot(g, room, i) {
  var s = stages[i], p = stagePoints(s, i === S.stage).bot;
  g.font = SMALL; g.fillStyle = "#57606a";
  keep(room, spotFor(g, room, shapeText(s) + (s.binned ? " ⋯" : ""), [["center", p[0], p[1] + 6]], "top", i, null), null);
}
function stageName(s) { return s.st.stage + " · " + (s.st.short || s.st.title); }
function placeLabels(g, room) {   // the labels' boxes, most important first (see above)
  var sel = S.stage, others = stages.map(function (s, i) { return i; }).filter(function (i) { return i !== sel; });
  if (!nameSpot(g, room, sel, stageName(stages[sel]), null)) nameSpot(g, room, sel, String(stages[sel].st.stage), null);
  shapeSpot(g, room, sel);
  var nums = others.map(function (i) { return numberSpot(g, room, i); });
  others.forEach(function (i, k) { nameSpot(g, room, i, stageName(stages[i]), nums[k] || undefined); });
  others.forEach(function (i) { shapeSpot(g, room, i); });
  g.font = SMALL; g.fillStyle = "#57606a";
  keep(room, spotFor(g, room, "sample " + P.samples[S.sample] + " · ⋯ = shown as " + P.bin + "-minute means", [["left", 6, room.H - 4]], "bottom", -1, null), null);
}
function drawLabels() {
  var W = canvas.clientWidth, H = canvas.clientHeight, g = overlay2d(overlay, W, H), prev = null;
  stages.forEach(function (s, i) {   // flow arrows first, under the labels
    var p = stagePoints(s, i === S.stage);
    if (prev && prev.row === s.row) drawArrow(g, prev.p, p.left);
    prev = { p: p.mid, row: s.row };
  });
  var room = { W: W, H: H, labels: (plot2d.chartOf(overlay).labels = []), blocks: stages.map(blockArea) };
  placeLabels(g, room);
  room.labels.forEach(function (r) {
    var a = r.at;
    g.textAlign = a[0]; g.textBaseline = a[3]; g.font = a[4]; g.fillStyle = a[5]; g.fillText(r.text, a[1], a[2]);
  });
}

/* ---------- zoom panel (exact values of the selected stage) ---------- */
function zoomHeatmap() {
  var s = stages[S.stage], key = S.stage, v = s.values(S.sample);
  if (!zhm[key]) zhm[key] = heatmap2d(zc, { data: v, rows: s.rows, cols: s.cols, vmin: -s.range, vmax: s.range, cmap: CMAP });
  else zhm[key].update(v, -s.range, s.range);
  return zhm[key];
}
function shownAxes(p) {          // a part's axes as shown (a binned transposed view takes its source's, permuted)
  if (p.binned && p.entry.of) return p.entry.perm.map(function (j) { return p.src.record.axes[j]; });
  return p.rec.axes;
}
function rowLabel(s, r, long) {   // which record / index a shown row is (long: the readout's wording of a binned time row)
  for (var k = 0; k < s.parts.length; k++) if (r < s.offsets[k + 1]) {
    var p = s.parts[k], rr = r - s.offsets[k], ax = shownAxes(p), sh = p.rec.shape;
    var lead = ax.slice(1, -1), txt;
    if (lead.length === 0) txt = "";
    else if (lead.length === 1) txt = lead[0] === "time" && s.binned ? binText(p, rr, long) : lead[0] + " " + rr;
    else { var inner = sh[2]; txt = lead[0] + " " + Math.floor(rr / inner) + ", " + lead[1] + " " + (rr % inner); }
    return (s.parts.length > 1 ? p.name + (txt ? ", " : "") : "") + txt;
  }
  return "";
}
function colLabel(s, c) {
  var p = s.parts[0], ax = shownAxes(p), name = ax[ax.length - 1];
  if (s.binned && name === "time") return binText(p, c, true);
  return name === "time" ? "time " + stepTime(sampleClock(), c) : name + " " + c;
}
// the selected sample's window in clock time (UTC): its start from the capture (meta.t0), one step per model step
function sampleClock() { return windowClock(cap.meta.t0[S.sample], PG.model.step_minutes * 60); }
function binText(p, k, long) {   // shown time index k of a binned stage: the clock minutes its mean covers
  var b = P.bin, Lt = p.rec.shape[p.rec.axes.indexOf("time")], clock = sampleClock();
  var span = "time " + plot2d.clockText(clock, k * b) + "–" + plot2d.clockText(clock, Math.min(k * b + b - 1, Lt - 1));
  return long ? span + " UTC (" + b + "-minute mean)" : span;
}
function frameZoom() {
  var s = stages[S.stage], top = 8, bottom = 40, left = 150, right = 12;
  var h = Math.max(160, Math.min(s.rows * 6, 420));
  zc.style.height = h + top + bottom + "px";
  fitCanvas(zc);
  var hm = zoomHeatmap(), W = zc.clientWidth, H = zc.clientHeight;
  ZB = { x: left, y: top, width: W - left - right, height: h };
  clear2d(zc);
  hm.draw(ZB);
  drawZoomAxes(overlay2d(zo, W, H), s);
}
function colTicks(s, cname) {   // [{x: column in full steps, label}]: clock time on a time axis, else round indices
  var full = s.colsFull;
  if (cname === "time") return stepTicks(sampleClock(), 0, full - 1, Math.floor(ZB.width / 70)).map(function (t) { return { x: t.step, label: t.label }; });
  var step = Math.max(1, Math.round(full / 8 / 10) * 10 || 1), out = [];
  for (var c = 0; c <= full - 1; c += step) out.push({ x: c, label: String(c) });
  return out;
}
// Row labels left of the heatmap, column ticks and the axis name below it; every text's box is recorded (plot2d.put)
// in the zoom chart's labels, which the browser tests check for overlaps (tests/browser/test_labels.py).
function drawZoomAxes(g, s) {
  var left = ZB.x, top = ZB.y, h = ZB.height, labels = (plot2d.chartOf(zo).labels = []);
  g.font = SMALL; g.fillStyle = "#1b1f24"; g.textAlign = "right"; g.textBaseline = "middle";
  var every = Math.max(1, Math.ceil(s.rows / Math.max(1, h / 14)));
  for (var r = 0; r < s.rows; r += every) plot2d.put(g, labels, rowLabel(s, r), left - 6, top + (r + 0.5) * h / s.rows);
  var ax = shownAxes(s.parts[0]), cname = ax[ax.length - 1], full = s.colsFull;
  g.textAlign = "center";
  colTicks(s, cname).forEach(function (t) { plot2d.put(g, labels, t.label, left + ((t.x + 0.5) / full) * ZB.width, top + h + 9); });
  plot2d.put(g, labels, cname + (cname === "time" ? " (UTC" + (s.binned ? "; " + P.bin + "-minute means" : "") + ")" : " index"),
             left + ZB.width / 2, top + h + 24);
}
function onZoomMove(e) {
  if (!ZB) return;
  var rc = zc.getBoundingClientRect(), px = e.clientX - rc.left, py = e.clientY - rc.top, s = stages[S.stage];
  var hm = zhm[S.stage], cell = hm && hm.cellAt(px, py);
  if (!cell) { tooltip.hide(); return; }
  var rl = rowLabel(s, cell.row, true);
  tooltip.show("stage " + s.st.stage + ": " + (rl ? rl + ", " : "") + colLabel(s, cell.col) + "\nvalue = " + fmt(cell.value, 4), e.clientX, e.clientY, function () { onZoomMove(e); });
}

/* ---------- the stage's records, stats and docs; its legend ---------- */
function drawInfo() {
  var s = stages[S.stage], dl = document.getElementById("fwd-info");
  document.getElementById("fwd-zoom-title").textContent = "Stage " + s.st.stage + ": " + s.st.title + " — sample " + P.samples[S.sample];
  dl.textContent = "";
  function row(k, v) { var dt = document.createElement("dt"), dd = document.createElement("dd"); dt.textContent = k; dd.textContent = v; dl.appendChild(dt); dl.appendChild(dd); }
  s.parts.forEach(function (p) {
    var r = p.rec;
    row("record", r.name + "  (" + r.shape.join(" × ") + ")");
    row("axes", "(" + r.axes.join(", ") + ")");
    row("stats (batch)", "min " + fmt(r.stats.min, 4) + " · max " + fmt(r.stats.max, 4) + " · mean " + fmt(r.stats.mean, 4) + " · std " + fmt(r.stats.std, 4));
    row("spec", "stage " + r.stage + " · " + r.section);
    row("doc", r.doc);
  });
  row("shown", s.binned ? "mean over " + P.bin + "-minute bins of the exact tensor: " + s.rows + " × " + s.cols + " of " + s.rowsFull + " × " + s.colsFull
                        : "exact values, " + s.rows + " × " + s.cols + (s.parts.length > 1 ? " (records stacked as rows)" : ""));
  setLegends(document.getElementById("nb-legend"), [[CMAP, -s.range, s.range, "value, stage " + s.st.stage + " (±largest |value| over the batch)"]]);
}

/* ---------- selection, play, controls and pointer / keyboard ---------- */
function select(i) {
  S.stage = Math.max(0, Math.min(stages.length - 1, i));
  stageSel.value = S.stage;
  frame3d(); frameZoom(); drawInfo();
  if (urlState) urlState.later();   // Play moves the stage without an input event
}
function play() {
  if (animationsOff()) { select(stages.length - 1); return; }
  playBtn.textContent = "Stop"; playBtn.setAttribute("aria-pressed", "true");
  if (S.stage >= stages.length - 1) select(0);
  S.playing = setInterval(function () {
    if (S.stage >= stages.length - 1) { stop(); return; }
    select(S.stage + 1);
  }, 900);
}
function stop() {
  if (S.playing) clearInterval(S.playing);
  S.playing = null; playBtn.textContent = "Play"; playBtn.setAttribute("aria-pressed", "false");
}
function onSample(v) { S.sample = Number(v); frame3d(); frameZoom(); drawInfo(); drawFaceLegend(); }
function buildControls() {
  var ctl = document.getElementById("nb-controls");
  controls.select(ctl, "Sample", P.samples.map(function (s, i) { return { value: i, label: "batch sample " + s + " · " + P.sample_labels[i] }; }),
    0, onSample).id = "fwd-sample";
  stageSel = controls.select(ctl, "Stage", stages.map(function (s, i) { return { value: i, label: s.st.stage + " · " + s.st.title }; }),
    0, function (v) { stop(); select(Number(v)); });
  stageSel.id = "fwd-stage";
  playBtn = controls.button(ctl, "Play", function () { if (S.playing) stop(); else play(); });
  playBtn.id = "fwd-play";
  saveButton(ctl, canvas, "forward-pass-3d.png", function () { frame3d(); });
  saveButton(document.getElementById("fwd-zoom-controls"), zc, "forward-pass-stage.png", function () { frameZoom(); });
}
function onKey(e) {
  var d = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
  if (d) { e.preventDefault(); stop(); select(S.stage + d); }
  else if (e.key === "Home") { e.preventDefault(); stop(); select(0); }
  else if (e.key === "End") { e.preventDefault(); stop(); select(stages.length - 1); }
}
function onClick(e) {
  var rc = canvas.getBoundingClientRect(), i = pick(e.clientX - rc.left, e.clientY - rc.top);
  if (i >= 0) { stop(); select(i); }
}
function onHover(e) {
  var rc = canvas.getBoundingClientRect(), i = pick(e.clientX - rc.left, e.clientY - rc.top);
  canvas.style.cursor = i >= 0 ? "pointer" : "default";
  if (i < 0) { tooltip.hide(); return; }
  var s = stages[i];
  tooltip.show("stage " + s.st.stage + ": " + s.st.title + "\n" + s.parts.map(function (p) { return p.name + " (" + p.rec.shape.join("×") + ")"; }).join("\n") +
    "\nface colours: ±" + fmt(faceScaleOf(i), 4) + " (this face's own scale)", e.clientX, e.clientY, function () { onHover(e); });
}
function listen() {
  canvas.tabIndex = 0;
  canvas.addEventListener("keydown", onKey);
  canvas.addEventListener("click", onClick);
  canvas.addEventListener("mousemove", onHover);
  canvas.addEventListener("mouseleave", function () { tooltip.hide(); });
  zc.addEventListener("mousemove", onZoomMove);
  zc.addEventListener("mouseleave", function () { tooltip.hide(); });
}

/* ---------- start: data, the 2D views and the faces, then the blocks' regl context (the animation's: when in view) ---------- */
// One WebGL context per task (see core.inTasks), alone (gl.open), once a worker has paid software GL's start-up (gl.warm: started
// in the page's <head>, awaited once the data, the 2D views and the block faces are made): the context then takes ~10-30 ms
// instead of 0.05-0.5 s; regl's synchronous probes come a task later. A step that cannot go on throws: fail() already shows
// the first (root-cause) message, and inTasks stops there.
var warm = gl.warm();
function load() {   // the capture, the binned blocks and the first selection
  cap = decode(blob("capture"));
  var binned = unpack(blob("binned"));
  stages = P.stages.map(function (st) { return makeStage(st, cap, binned); });
  S = { sample: 0, stage: 0, playing: null };
  layoutStages(PG.model.window);
}
function findViews() {   // the 3D view's canvases, laid out
  canvas = document.getElementById("fwd-3d"); overlay = document.getElementById("fwd-3d-overlay");
  fitCanvas(canvas);
}
function buildZoomView() {   // a 2D canvas (heatmap2d.js): one WebGL context less to create
  zc = document.getElementById("fwd-zoom"); zo = document.getElementById("fwd-zoom-overlay");
  fitCanvas(zc);
  listen();
  buildControls();
}
function faceSteps(from, to) {   // -> a step: the first frame's block faces from..to-1, box-averaged on the CPU
  return function () { lut = lut || colormaps.lut(CMAP); for (var i = from; i < Math.min(to, stages.length); i++) facePixels(i); };
}
function openMainView() { gl.open(canvas); }
function createMainView() {
  regl = gl.create(canvas);
  if (!regl) throw new Error("no WebGL context for the 3D view");
}
function buildMainView() { drawBox = buildBoxCommand(); }   // the box command (shaders compiled here)
function firstFrame() {   // the 3D view's first frame (its canvas' first layout and draw), a task before the rest
  S.stage = 0; stageSel.value = 0;
  frame3d();
}
// The animation sits below the first screen: its WebGL context (50-200 ms in software GL) and first frame are made
// when it comes into view (core.onScreen; flushDeferred for tests and Save PNG), a task each (core.afterReady); until
// then a sample change only updates what it will show.
var animLater = null, animBuilt = false;
function buildAnimation() {
  anim = startAnim(PG, function () { return S.sample; }, onAnimStage);
  animLater = onScreen(document.getElementById("fwd-anim"));
  document.getElementById("fwd-sample").addEventListener("change", function () { animLater(showAnim); });
}
function showAnim() {
  if (animBuilt) { anim.draw(); return; }
  animBuilt = true;
  afterReady([function () { anim.open(); }, function () { anim.prepare(); }, function () { anim.draw(); }]);
}
function finish() {
  frameZoom(); drawInfo();   // select(0) less the 3D frame firstFrame drew
  drawFaceLegend();
  urlState = stateInUrl([["sample", "#fwd-sample"], ["stage", stageSel], ["alayer", "#fwd-anim-layer"], ["ahead", "#fwd-anim-head"]]);
  onResize(canvas, function () { frame3d(); frameZoom(); });
  testHook({ state: S, stages: stages, capture: cap, select: select, screenBox: screenBox, anim: anim, faceScale: faceScaleOf,
             zoomBox: function () { return ZB; }, zoomHeatmap: function () { return zhm[S.stage]; } });
  ready();
  // the animation's controls exist before ready (the URL may set them); its context and first frame come when it is
  // in view, asked two frames after ready (afterReady), once the visibility observer has reported
  afterReady([function () { animLater(showAnim); }]);
}
function start(pg) {
  P = pg.data; PG = pg;
  inTasks([newTask, load, findViews, buildZoomView, buildAnimation, faceSteps(0, 5), faceSteps(5, 9), faceSteps(9, Infinity),
           function () { return warm; }, openMainView, createMainView, buildMainView, firstFrame, finish]);
}

registerPage({ slug: "forward", start: start });
