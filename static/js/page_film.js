/* page_film.js: the FiLM page (architecture.md 8, encoder-film.md 6.6).
 * Views: condition features + spectrum with band edges (Canvas2D); the two FiLM MLPs with their captured
 * activations (Canvas2D cells); gamma/beta per device/layer + device mean + device embeddings (regl heatmaps,
 * one context, viewports); live FiLM of encoder.L.ffn.out with sliders (regl + plot2d), checked against the
 * captured encoder.L.film; FiLM on/off ablation (plot2d).
 */
import { registerPage, testHook } from "./register.js";
import { stateInUrl } from "./url_state.js";
import { colormaps, legend, palette } from "./colormaps.js";
import { controls, fail, fmt, ready, tooltip } from "./core.js";
import { kit } from "./film_kit.js";
import { gl } from "./gl.js";
import { plot2d } from "./plot2d.js";
import { filmWhatIf } from "./whatif_film.js";

var fr = Math.fround;

var LIVE_PX = 240;   // height of each live-FiLM heatmap, CSS px

var ELEC_MEANING = {
  mean: "average level", std: "variability", rms: "effective level", peak: "largest |value|", crest: "peak / rms (peakiness)",
};

// live FiLM: (1 + g') x + b' in float64, rounded once to float32 (as the capture's film op)
function filmValue(x, g, b, p) {
  var gg = g * p.gs + p.go, bb = b * p.bs + p.bo, y = (1 + gg) * x + bb;
  if (y !== y) y = 0; else if (y === Infinity) y = 1e4; else if (y === -Infinity) y = -1e4;
  return fr(y);
}

function run() {
  var L0 = kit.load(), cap = L0.cap, extra = L0.extra, devs = extra.devices, D = devs.length;
  var gRec = cap.record("film_enc.gamma"), NL = gRec.shape[2], F = gRec.shape[3];
  var ffnRec = cap.record("encoder.0.ffn.out"), L = ffnRec.shape[1];
  var state = { sample: 0, dev: 0, layer: 0, feature: 0, t: Math.floor(L / 2), p: { gs: 1, go: 0, bs: 1, bo: 0 } };
  var controlsEl = document.getElementById("nb-controls");
  kit.sampleSelect(controlsEl, extra, function (v) { state.sample = v; all(); });
  kit.deviceSelect(controlsEl, devs, function (v) { state.dev = v; drawMLP(); });
  var layerOpts = []; for (var l = 0; l < NL; l++) layerOpts.push({ value: String(l), label: "layer " + l });
  var layerSel = controls.select(controlsEl, "Layer", layerOpts, "0", function (v) { state.layer = Number(v); liveData(); live(); });
  layerSel.id = "ctl-layer";

  /* ---------------- 1: condition features ---------------- */
  var specCanvas = document.getElementById("film-spectrum");
  kit.saveView(document.getElementById("view-cond"), specCanvas, "film-spectrum.png");
  var aggW = kit.watts(extra, "aggregate");
  function drawCond() {
    var i = state.sample, elec = cap.slice("cond.elec", i), bands = cap.slice("cond.bands", i), spec = cap.slice("cond.spectrum", i);
    var names = extra.elec_features, edges = extra.band_edges, html = "<thead><tr><th scope=col>feature</th><th scope=col>meaning</th><th scope=col>value</th></tr></thead><tbody>";
    names.forEach(function (n, k) {
      // in watts only where the conversion has no offset (then std and peak scale like the signal)
      var w = n === "crest" || aggW.ab.b !== 0 ? "" : " <span class=nb-muted>(" + fmt(aggW.f(elec[k]), 4) + " W)</span>";
      html += "<tr><td>" + n + "</td><td>" + (ELEC_MEANING[n] || "") + "</td><td class=num data-key='elec-" + n + "' data-value='" + elec[k] + "'>" + fmt(elec[k], 5) + w + "</td></tr>";
    });
    for (var b = 0; b < bands.length; b++) {
      html += "<tr><td>band " + b + "</td><td>bins " + edges[b] + "–" + (edges[b + 1] - 1) + "</td><td class=num data-key='band-" + b + "' data-value='" + bands[b] + "'>" + fmt(bands[b], 5) + "</td></tr>";
    }
    document.getElementById("film-cond-table").innerHTML = html + "</tbody>";
    var c = kit.ctx2d(specCanvas), g = c.g, W = c.W, H = c.H, m = { l: 56, r: 12, t: 38, b: 38 }, pw = W - m.l - m.r, ph = H - m.t - m.b;
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
    var n = spec.length, ymax = 0; for (var k = 1; k < n; k++) ymax = Math.max(ymax, spec[k]); ymax = ymax || 1;
    // log y: magnitudes span decades
    var lo = Math.max(ymax * 1e-4, 1e-9), ly = function (v) { return Math.log10(Math.max(v, lo)); };
    var X = function (kk) { return m.l + (kk / (n - 1)) * pw; }, Y = function (v) { return m.t + (1 - (ly(v) - ly(lo)) / (ly(ymax) - ly(lo))) * ph; };
    for (b = 0; b < edges.length - 1; b++) {
      if (b % 2 === 0) { g.fillStyle = "#f6f8fa"; g.fillRect(X(edges[b]), m.t, X(edges[b + 1] - 1) - X(edges[b]), ph); }
    }
    g.strokeStyle = "#57606a"; g.strokeRect(m.l + 0.5, m.t + 0.5, pw, ph);
    g.strokeStyle = palette[0]; g.lineWidth = 1.25; g.beginPath();
    for (k = 0; k < n; k++) { if (k) g.lineTo(X(k), Y(spec[k])); else g.moveTo(X(k), Y(spec[k])); }
    g.stroke();
    g.setLineDash([4, 3]); g.strokeStyle = "#1b1f24"; g.lineWidth = 1;
    edges.forEach(function (e) { var x = X(Math.min(e, n - 1)); g.beginPath(); g.moveTo(x, m.t); g.lineTo(x, m.t + ph); g.stroke(); });
    g.setLineDash([]); g.strokeStyle = palette[3]; g.lineWidth = 3;
    for (b = 0; b < bands.length; b++) { g.beginPath(); g.moveTo(X(edges[b]), Y(bands[b])); g.lineTo(X(edges[b + 1] - 1), Y(bands[b])); g.stroke(); }
    g.fillStyle = "#57606a"; g.font = kit.FONT; g.textAlign = "center";
    edges.forEach(function (e) { g.fillText(String(e), X(Math.min(e, n - 1)), m.t + ph + 12); });
    g.textAlign = "right";
    for (var dec = Math.ceil(ly(lo)); dec <= Math.floor(ly(ymax)); dec++) g.fillText("1e" + dec, m.l - 5, Y(Math.pow(10, dec)));
    g.fillStyle = "#1b1f24"; g.textAlign = "center";
    g.fillText("frequency bin k (k cycles per " + L + "-min window); dashed: band edges", m.l + pw / 2, H - 10);
    g.save(); g.translate(13, m.t + ph / 2); g.rotate(-Math.PI / 2); g.fillText("|rFFT| (log)", 0, 0); g.restore();
    g.textAlign = "left"; g.font = kit.BOLD; g.fillText("cond.spectrum · " + kit.sampleLabel(extra, i), m.l, 10);
    g.font = kit.FONT; g.textAlign = "left";
    g.fillStyle = palette[0]; g.fillRect(m.l, 24, 14, 3); g.fillStyle = "#1b1f24"; g.fillText("|rFFT| of the centred aggregate", m.l + 18, 26);
    var lx = m.l + 36 + g.measureText("|rFFT| of the centred aggregate").width;
    g.fillStyle = palette[3]; g.fillRect(lx, 24, 14, 3); g.fillStyle = "#1b1f24"; g.fillText("band mean (cond.bands)", lx + 18, 26);
  }

  /* ---------------- 2: MLP diagram ---------------- */
  var mlpCanvas = document.getElementById("film-mlp"), mlpCells = [];
  kit.saveView(document.getElementById("view-mlp"), mlpCanvas, "film-mlp.png");
  function cellRow(g, x, y, w, h, vals, label, key, maxAbs) {
    var n = vals.length, cw = w / n, m = maxAbs || kit.absmax(vals);
    for (var k = 0; k < n; k++) {
      g.fillStyle = colormaps.css("burd", 0.5 + 0.5 * vals[k] / m);
      g.fillRect(x + k * cw, y, Math.max(1, cw - (cw > 4 ? 1 : 0)), h);
      mlpCells.push({ x: x + k * cw, y: y, w: cw, h: h, v: vals[k], label: label + "[" + k + "]" });
    }
    g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(x - 0.5, y - 0.5, w + 1, h + 1);
    if (!key) return;
    g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "left";
    g.fillText(key + "  (max |v| " + fmt(m, 3) + ")", x, y + h + 9);
  }
  function arrow(g, x0, y0, x1, y1, text) {
    g.strokeStyle = "#57606a"; g.fillStyle = "#57606a"; g.lineWidth = 1.25;
    g.beginPath(); g.moveTo(x0, y0); g.lineTo(x1, y1); g.stroke();
    var a = Math.atan2(y1 - y0, x1 - x0);
    g.beginPath(); g.moveTo(x1, y1); g.lineTo(x1 - 7 * Math.cos(a - 0.4), y1 - 7 * Math.sin(a - 0.4)); g.lineTo(x1 - 7 * Math.cos(a + 0.4), y1 - 7 * Math.sin(a + 0.4)); g.fill();
    g.fillStyle = "#1b1f24"; g.font = kit.SMALL; g.textAlign = "left"; g.fillText(text, x1 + 6, (y0 + y1) / 2);
  }
  function drawMLP() {
    mlpCells = [];
    var c = kit.ctx2d(mlpCanvas), g = c.g, W = c.W, i = state.sample, d = state.dev;
    g.fillStyle = "#fff"; g.fillRect(0, 0, W, c.H);
    var x0 = 110, w = W - x0 - 16, h = 16;
    function vec(name, extraIdx) { var r = cap.record(name), a = cap.slice(name, i), per = a.length / r.shape[1]; return a.subarray(d * per, (d + 1) * per); }
    [["film_enc", "encoder FiLM", 14], ["film_dec", "output FiLM", 186]].forEach(function (spec) {
      var p = spec[0], y = spec[2];
      g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left";
      g.fillText(spec[1], 8, y + 8);
      g.font = kit.SMALL; g.fillStyle = "#57606a"; g.fillText(kit.devName(devs[d]), 8, y + 22);
      var inp = vec(p + ".input"), nc = inp.length - cap.record("weights." + p + ".device_embed").shape[1];
      var wc = w * nc / inp.length;
      cellRow(g, x0, y, wc - 4, h, inp.subarray(0, nc), p + ".input cond", "condition (" + nc + ")");
      cellRow(g, x0 + wc, y, w - wc, h, inp.subarray(nc), p + ".input embed", "device embedding (" + (inp.length - nc) + ")");
      arrow(g, x0 + w / 2, y + h + 14, x0 + w / 2, y + h + 34, "fc1 " + inp.length + " → " + cap.record(p + ".hidden").shape[2] + " + ReLU");
      var hid = vec(p + ".hidden");
      cellRow(g, x0 + w * 0.2, y + h + 38, w * 0.6, h, hid, p + ".hidden", p + ".hidden (" + hid.length + ")");
      if (p === "film_enc") {
        var gam = cap.slice("film_enc.gamma", i), bet = cap.slice("film_enc.beta", i), per = NL * F;
        arrow(g, x0 + w / 2, y + 2 * h + 52, x0 + w / 2, y + 2 * h + 70, "fc2 " + hid.length + " → " + (NL * 2 * F) + ", view (" + NL + ", 2, " + F + "), 0.5·tanh");
        var gy = y + 2 * h + 74, gd = gam.subarray(d * per, (d + 1) * per), bd = bet.subarray(d * per, (d + 1) * per);
        var m = Math.max(kit.absmax(gd), kit.absmax(bd));
        var half = (w - 10) / 2;
        g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "right";
        for (var l = 0; l < NL; l++) g.fillText("layer " + l, x0 - 4, gy + l * 9 + 4);
        for (l = 0; l < NL; l++) {
          cellRow(g, x0, gy + l * 9, half, 8, gd.subarray(l * F, (l + 1) * F), "γ layer " + l, l === NL - 1 ? "γ: " + NL + " layers × " + F : "", m);
          cellRow(g, x0 + half + 10, gy + l * 9, half, 8, bd.subarray(l * F, (l + 1) * F), "β layer " + l, l === NL - 1 ? "β: " + NL + " layers × " + F : "", m);
        }
      } else {
        arrow(g, x0 + w / 2, y + 2 * h + 52, x0 + w / 2, y + 2 * h + 70, "fc2 " + hid.length + " → 2, 0.5·tanh");
        var gdv = cap.slice("film_dec.gamma", i)[d], bdv = cap.slice("film_dec.beta", i)[d];
        cellRow(g, x0 + w / 2 - 60, y + 2 * h + 74, 120, h, new Float32Array([gdv, bdv]), "(γ_dec, β_dec)", "γ_dec = " + fmt(gdv, 4) + ", β_dec = " + fmt(bdv, 4), 0.5);
      }
    });
  }
  mlpCanvas.addEventListener("mousemove", function (e) {
    var r = mlpCanvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
    for (var k = 0; k < mlpCells.length; k++) {
      var cl = mlpCells[k];
      if (x >= cl.x && x < cl.x + cl.w && y >= cl.y && y < cl.y + cl.h) { tooltip.show(cl.label + " = " + fmt(cl.v, 6), e.clientX, e.clientY); return; }
    }
    tooltip.hide();
  });
  mlpCanvas.addEventListener("mouseleave", function () { tooltip.hide(); });

  /* ---------------- 3: gamma / beta heatmaps (regl) ---------------- */
  var pStack = document.getElementById("film-stack"), pCanvas = document.getElementById("film-params"), pOverlay = document.getElementById("film-params-labels");
  kit.saveView(document.getElementById("view-params"), function () { return kit.layered(pCanvas, pOverlay); }, "film-gamma-beta.png");
  var regl = null;
  var pHms = [], pDefs = [];
  ["film_enc", "film_dec"].forEach(function (p) { pDefs.push({ kind: "embed", name: "weights." + p + ".device_embed", label: (p === "film_enc" ? "encoder" : "output") + " FiLM device embedding" }); });
  for (l = 0; l < NL; l++) {
    pDefs.push({ kind: "gb", which: "gamma", layer: l, label: "γ, layer " + l });
    pDefs.push({ kind: "gb", which: "beta", layer: l, label: "β, layer " + l });
  }
  function pData(def) {
    var i = state.sample;
    if (def.kind === "embed") { var r = cap.record(def.name); return { data: cap.get(def.name), rows: r.shape[0], cols: r.shape[1] }; }
    var a = cap.slice("film_enc." + def.which, i), mean = cap.slice("film_enc." + def.which + "_mean", i), out = new Float32Array((D + 1) * F);
    for (var dd = 0; dd < D; dd++) out.set(a.subarray((dd * NL + def.layer) * F, (dd * NL + def.layer + 1) * F), dd * F);
    out.set(mean.subarray(def.layer * F, (def.layer + 1) * F), D * F);
    return { data: out, rows: D + 1, cols: F };
  }
  var pBoxes = [];
  function pLayout() {
    var W = pStack.clientWidth, LM = 118, half = (W - LM - 30) / 2, y = 20, boxes = [];
    boxes.push({ x: LM, y: y, width: half, height: 60 }); boxes.push({ x: LM + half + 24, y: y, width: half, height: 60 });
    y += 60 + 46;
    for (var l2 = 0; l2 < NL; l2++) {
      boxes.push({ x: LM, y: y, width: half, height: 92 }); boxes.push({ x: LM + half + 24, y: y, width: half, height: 92 });
      y += 92 + 44;
    }
    pStack.style.height = (y + 4) + "px";
    return boxes;
  }
  function pUpload() {
    var gb = 0, em = 0;
    pDefs.forEach(function (def) { var m = kit.absmax(pData(def).data); if (def.kind === "gb") gb = Math.max(gb, m); else em = Math.max(em, m); });
    pDefs.forEach(function (def, k) {
      var pd = pData(def), v = def.kind === "gb" ? gb : em;
      if (!pHms[k]) pHms[k] = gl.heatmap(regl, { data: pd.data, rows: pd.rows, cols: pd.cols, vmin: -v, vmax: v, cmap: "burd" });
      else pHms[k].update(pd.data, -v, v);
      pHms[k].def = def;
    });
    var leg = document.getElementById("film-legends"); leg.textContent = "";
    legend(leg, "burd", -gb, gb, "γ and β (tanh-bounded to ±0.5)", 3);
    legend(leg, "burd", -em, em, "device embeddings (value)", 3);
  }
  function pDraw() {
    pBoxes = pLayout();
    pCanvas.style.width = pStack.clientWidth + "px"; pCanvas.style.height = pStack.clientHeight + "px";
    gl.fitCanvas(pCanvas); regl.poll(); regl.clear({ color: [1, 1, 1, 1] });
    pHms.forEach(function (hm, k) { hm.draw(pBoxes[k]); });
    var c = kit.ctx2d(pOverlay), g = c.g;
    pHms.forEach(function (hm, k) {
      var b = pBoxes[k], def = hm.def;
      g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left"; g.fillText(def.label, b.x, b.y - 9);
      g.font = kit.SMALL; g.fillStyle = "#57606a"; g.textAlign = "right";
      if (def.kind !== "embed") g.fillText("film_enc." + def.which + "[:, :, " + def.layer + ", :]", b.x + b.width, b.y - 9);
      g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
      if (k % 2 === 0) {
        g.textAlign = "right"; g.font = kit.SMALL;
        var rh = b.height / hm.rows;
        for (var r = 0; r < hm.rows; r++) {
          var lbl = r < D ? kit.devName(devs[r]) : "mean";
          g.fillStyle = r < D ? "#1b1f24" : palette[3]; g.fillText(lbl, b.x - 6, b.y + (r + 0.5) * rh);
        }
      }
      if (def.kind === "gb") {
        var yl = b.y + b.height * D / (D + 1);
        g.strokeStyle = "#1b1f24"; g.lineWidth = 2; g.beginPath(); g.moveTo(b.x, yl); g.lineTo(b.x + b.width, yl); g.stroke();
        g.fillStyle = "#57606a"; g.textAlign = "center";
        [0, F / 2, F - 1].forEach(function (f) { g.fillText(String(f), b.x + ((f + 0.5) / F) * b.width, b.y + b.height + 9); });
        g.fillText("feature", b.x + b.width / 2, b.y + b.height + 22);
      } else {
        g.fillStyle = "#57606a"; g.textAlign = "center";
        g.fillText(def.name + " (" + hm.rows + " × " + hm.cols + ")", b.x + b.width / 2, b.y + b.height + 10);
      }
    });
  }
  function initParams() {
  regl = gl.create(pCanvas);
  if (!regl) throw new Error("WebGL is not available");
  pUpload(); pDraw();
  gl.hover(pCanvas, pHms, {
    ariaLabel: "gamma and beta heatmaps",
    keyboardIndex: 2,
    label: function (hm, r, col, v) {
      var def = hm.def;
      if (def.kind === "embed") return def.name + "\n" + kit.devName(devs[r]) + ", dim " + col + ": " + fmt(v, 6);
      return (def.which === "gamma" ? "γ" : "β") + " layer " + def.layer + ", " + (r < D ? kit.devName(devs[r]) : "device mean") + ", feature " + col + "\n" + fmt(v, 6);
    },
  });
  }

  /* ---------------- 4: live FiLM ---------------- */
  var lStack = document.getElementById("film-live-stack"), lCanvas = document.getElementById("film-live"), lOverlay = document.getElementById("film-live-labels");
  var lPlotCanvas = document.getElementById("film-live-plot");
  kit.saveView(document.getElementById("view-live"), function () { return kit.layered(lCanvas, lOverlay); }, "film-live.png");
  var sl = document.getElementById("film-sliders"), fmt2 = function (v) { return (v >= 0 ? "+" : "") + v.toFixed(2); };
  var sGs = kit.range(sl, "ctl-gscale", "γ scale", 0, 3, 0.05, 1, function (v) { return "×" + v.toFixed(2); }, function (v) { state.p.gs = v; live(); });
  var sGo = kit.range(sl, "ctl-goffset", "γ offset", -1, 1, 0.01, 0, fmt2, function (v) { state.p.go = v; live(); });
  var sBs = kit.range(sl, "ctl-bscale", "β scale", 0, 3, 0.05, 1, function (v) { return "×" + v.toFixed(2); }, function (v) { state.p.bs = v; live(); });
  var sBo = kit.range(sl, "ctl-boffset", "β offset", -1, 1, 0.01, 0, fmt2, function (v) { state.p.bo = v; live(); });
  var rb = controls.button(sl, "Reset to captured", function () { sGs.setValue(1); sGo.setValue(0); sBs.setValue(1); sBo.setValue(0); });
  rb.id = "ctl-film-reset";
  var lregl = null, wi = null;
  var live0 = { x: null, xT: null, film: null, g: null, b: null }, lHms = [], lPlot = null, lBoxes = [];
  function liveData() {
    var i = state.sample, l2 = state.layer;
    live0.x = cap.slice("encoder." + l2 + ".ffn.out", i);                 // (L, F) time-major
    live0.film = cap.slice("encoder." + l2 + ".film", i);
    live0.g = cap.slice("film_enc.gamma_mean", i).subarray(l2 * F, (l2 + 1) * F);
    live0.b = cap.slice("film_enc.beta_mean", i).subarray(l2 * F, (l2 + 1) * F);
    var xT = new Float32Array(F * L);
    for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) xT[f * L + t] = live0.x[t * F + f];
    live0.xT = xT;
    live0.range = kit.absmax(xT);
  }
  function modulated() {
    var out = new Float32Array(F * L), x = live0.x, p = state.p;
    for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) out[f * L + t] = filmValue(x[t * F + f], live0.g[f], live0.b[f], p);
    return out;
  }
  function live() {
    if (!lregl) { lregl = gl.create(lCanvas); if (!lregl) throw new Error("WebGL is not available"); }
    var mod = modulated(), v = Math.max(live0.range, kit.absmax(mod));
    if (!lHms[0]) {
      lHms[0] = gl.heatmap(lregl, { data: live0.xT, rows: F, cols: L, vmin: -v, vmax: v, cmap: "burd" });
      lHms[1] = gl.heatmap(lregl, { data: mod, rows: F, cols: L, vmin: -v, vmax: v, cmap: "burd" });
      lHms[0].title = "encoder." + state.layer + ".ffn.out"; lHms[1].title = "modulated";
    } else { lHms[0].update(live0.xT, -v, v); lHms[1].update(mod, -v, v); }
    lHms[0].title = "encoder." + state.layer + ".ffn.out"; lHms[1].title = "(1 + γ′)·ffn_out + β′";
    state.range = v;
    liveDraw(); livePlot(mod); liveReadout(); liveCheck(mod); if (wi) wi.update();
  }
  function liveDraw() {
    var W = lStack.clientWidth, LM = 64, half = (W - LM - 40) / 2;
    lBoxes = [{ x: LM, y: 20, width: half, height: LIVE_PX }, { x: LM + half + 20, y: 20, width: half, height: LIVE_PX }];
    lCanvas.style.width = W + "px"; lCanvas.style.height = lStack.clientHeight + "px";
    gl.fitCanvas(lCanvas); if (lregl) { lregl.poll(); lregl.clear({ color: [1, 1, 1, 1] }); }
    if (lregl) lHms.forEach(function (hm, k) { hm.draw(lBoxes[k]); });
    var c = kit.ctx2d(lOverlay), g = c.g;
    lHms.forEach(function (hm, k) {
      var b = lBoxes[k];
      g.fillStyle = "#1b1f24"; g.font = kit.BOLD; g.textAlign = "left"; g.fillText(hm.title, b.x, b.y - 9);
      g.strokeStyle = "#8c959f"; g.lineWidth = 1; g.strokeRect(b.x - 0.5, b.y - 0.5, b.width + 1, b.height + 1);
      var cb = hm.cellBox(state.feature, state.t);
      g.strokeStyle = "#000"; g.lineWidth = 1; g.strokeRect(cb.x - 2, cb.y - 2, cb.width + 4, cb.height + 4);
      g.fillStyle = "#57606a"; g.font = kit.SMALL; g.textAlign = "center";
      [0, Math.round(L / 4), Math.round(L / 2), Math.round(3 * L / 4), L - 1].forEach(function (t) { g.fillText(String(t), b.x + ((t + 0.5) / L) * b.width, b.y + b.height + 9); });
      g.fillText("time step (min)", b.x + b.width / 2, b.y + b.height + 22);
      if (k === 0) { g.textAlign = "right"; g.fillText("feature 0", b.x - 4, b.y + 5); g.fillText(String(F - 1), b.x - 4, b.y + b.height - 5); }
      if (k === 1) { g.textAlign = "left"; g.fillText("0", b.x + b.width + 4, b.y + 5); g.fillText(String(F - 1), b.x + b.width + 4, b.y + b.height - 5); }
    });
  }
  function livePlot(mod) {
    var f = state.feature, xs = new Float32Array(L), ms = new Float32Array(L), cs = new Float32Array(L);
    for (var t = 0; t < L; t++) { xs[t] = live0.x[t * F + f]; ms[t] = mod[f * L + t]; cs[t] = live0.film[t * F + f]; }
    var opts = { title: "feature " + f + " of layer " + state.layer + " over time", x: { label: "time step", unit: "min", min: 0, max: L - 1 },
      lanes: [{ y: { label: "value" }, series: [
        { name: "ffn_out", y: xs, kind: "line", color: "#8c959f", width: 1.25 },
        { name: "modulated (live)", y: ms, kind: "line", color: palette[3], width: 1.75 },
        { name: "captured encoder." + state.layer + ".film", y: cs, kind: "line", color: "#000", width: 1, dash: [3, 3] }] }] };
    if (!lPlot) { lPlot = plot2d.create(lPlotCanvas, opts); plot2d.hover(lPlot, function (x) { state.t = Math.round(x); liveDraw(); liveReadout(); }); }
    else lPlot.opts = opts;
    lPlot.setCursor(state.t);
  }
  function liveReadout() {
    var f = state.feature, t = state.t, x = live0.x[t * F + f], p = state.p;
    var g = live0.g[f] * p.gs + p.go, b = live0.b[f] * p.bs + p.bo, y = filmValue(x, live0.g[f], live0.b[f], p), cpt = live0.film[t * F + f];
    kit.setReadout(document.getElementById("film-readout"), [
      ["layer, feature, t", f, "L" + state.layer + ", f " + f + ", t " + t + " min", "cell"],
      ["ffn_out", x, undefined, "ffn"],
      ["γ′ (mean over devices)", g, undefined, "gamma"],
      ["β′", b, undefined, "beta"],
      ["recomputed", y, undefined, "recomputed"],
      ["captured film", cpt, undefined, "captured"],
      ["equal?", y === cpt ? 1 : 0, y === cpt ? "yes, exactly" : "no (sliders moved)", "equal"],
    ]);
  }
  function liveCheck(mod) {
    var n = 0, N = F * L;
    for (var t = 0; t < L; t++) for (var f = 0; f < F; f++) if (mod[f * L + t] === live0.film[t * F + f]) n++;
    var el = document.getElementById("film-live-check");
    el.innerHTML = "";
    var b = document.createElement("span");
    b.className = "kit-badge " + (n === N ? "ok" : "off"); b.id = "film-match"; b.dataset.matches = String(n); b.dataset.total = String(N);
    b.textContent = n + " / " + N + " values equal the captured encoder." + state.layer + ".film";
    el.appendChild(b);
    el.appendChild(document.createTextNode(n === N ? " — bit for bit, at the captured γ and β." : " — the sliders move γ′, β′ away from the captured values."));
  }
  /* ---------------- 5: ablation ---------------- */
  var aCanvas = document.getElementById("film-ablation"), aPlot = null;
  kit.saveView(document.getElementById("view-ablation"), aCanvas, "film-on-off.png");
  function drawAblation() {
    var i = state.sample, on = cap.slice("output.power", i), off = cap.slice("ablation.no_film.output.power", i), tp = cap.slice("target.power", i);
    var lanes = devs.map(function (name, d) {
      var w = kit.watts(extra, name), sub = function (a) { return kit.mapArray(a.subarray(d * L, (d + 1) * L), w.f); };
      var a = sub(on), b = sub(off), t = sub(tp), ea = 0, eb = 0;
      for (var k = 0; k < L; k++) { ea += Math.abs(a[k] - t[k]); eb += Math.abs(b[k] - t[k]); }
      return { title: kit.devName(name) + " · MAE with FiLM " + fmt(ea / L, 3) + " W, without " + fmt(eb / L, 3) + " W",
               y: { label: kit.devName(name), unit: w.unit },
               series: [{ name: "ground truth", y: t, kind: "area", color: palette[2], width: 1 },
                        { name: "FiLM off", y: b, kind: "line", color: palette[0], width: 1.5, dash: [4, 3] },
                        { name: "FiLM on", y: a, kind: "line", color: palette[3], width: 1.5 }] };
    });
    var opts = { title: "final power per device · " + kit.sampleLabel(extra, i), x: { label: "time in window", unit: "min", min: 0, max: L - 1 }, lanes: lanes };
    if (!aPlot) { aPlot = plot2d.create(aCanvas, opts); plot2d.hover(aPlot); } else aPlot.opts = opts;
    aPlot.draw();
  }

  function all() { drawCond(); drawMLP(); pUpload(); pDraw(); liveData(); live(); drawAblation(); }
  kit.onResize(pStack, function () { if (pHms.length) pDraw(); liveDraw(); drawCond(); drawMLP(); if (aPlot) aPlot.draw(); if (lPlot) lPlot.draw(); });
  kit.steps([initParams, drawCond, drawMLP, liveData, function () { if (!lregl) lregl = gl.create(lCanvas); }, live, function () {
  gl.hover(lCanvas, lHms, {
    ariaLabel: "FFN output and modulated features",
    label: function (hm, r, col, v) { return hm.title + "\nfeature " + r + ", t " + col + " min: " + fmt(v, 6); },
    onCell: function (hm, r, col) { state.feature = r; state.t = col; liveDraw(); livePlot(modulated()); liveReadout(); },
  });

  }, drawAblation], function () {
    wi = filmWhatIf({ after: document.getElementById("view-live"), cap: cap, state: state, sampleLabel: function (i) { return kit.sampleLabel(extra, i); } });
    testHook({ state: state, cap: cap, extra: extra, live: live0, setCell: function (f, t) { state.feature = f; state.t = t; live(); },
                       sliders: { gs: sGs, go: sGo, bs: sBs, bo: sBo }, whatif: wi, liveHeatmaps: lHms, liveBoxes: function () { return lBoxes; }, filmValue: filmValue });
    stateInUrl([["sample", "#ctl-sample"], ["device", "#ctl-device"], ["layer", layerSel],
                ["gscale", sGs], ["goffset", sGo], ["bscale", sBs], ["boffset", sBo], ["filmon", "#whatif-film-on"]]);
    ready();
  });
}

registerPage({ slug: "film", start: run });
