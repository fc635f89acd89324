/* whatif_signal_attention.js: the Attention page's source switch (issue 11 item 5): "captured batch" (the page as it
 * is) or "your signal", the Playground's current edit run through the live model, whose attention for the page's
 * selected layer and head is drawn instead (query rows, key columns, log colour scale) with the selected query's
 * row beside the edited aggregate.
 *   var ys = attentionSignal({spec, state, controlsEl, before, hide: [elements]}); ys.update() after a change.
 * state: the page's {layer, head, query, masked} (the mask toggle applies to your signal too). */
import { colormaps, legend, palette } from "./colormaps.js";
import { context2d, controls, element as el, fmt, sizeBacking } from "./core.js";
import { plot2d } from "./plot2d.js";
import { yourSignal } from "./whatif_signal.js";

var LOG_LO = -4, LOG_HI = 0;  // colour scale: log10 weight from 1e-4 to 1
var MAP_PX = 520;

function drawMap(canvas, att, L, layer, head, query, title) {
  var dpr = window.devicePixelRatio || 1, W = canvas.clientWidth, H = canvas.clientHeight;
  sizeBacking(canvas, Math.round(W * dpr), Math.round(H * dpr));
  var g = context2d(canvas), m = { l: 64, r: 12, t: 26, b: 40 }, side = Math.min(W - m.l - m.r, H - m.t - m.b);
  g.setTransform(dpr, 0, 0, dpr, 0, 0); g.fillStyle = "#fff"; g.fillRect(0, 0, W, H);
  var img = new ImageData(L, L), lut = colormaps.lut("viridis"), off = layer * L * L;
  for (var i = 0; i < L * L; i++) {
    var v = att[off + i], t = v > 0 ? (Math.log10(v) - LOG_LO) / (LOG_HI - LOG_LO) : 0, k = Math.round(Math.max(0, Math.min(1, t)) * 255) * 4;
    img.data[4 * i] = lut[k]; img.data[4 * i + 1] = lut[k + 1]; img.data[4 * i + 2] = lut[k + 2]; img.data[4 * i + 3] = 255;
  }
  var tmp = el("canvas"); tmp.width = L; tmp.height = L; tmp.getContext("2d").putImageData(img, 0, 0);
  g.imageSmoothingEnabled = false; g.drawImage(tmp, m.l, m.t, side, side);
  g.strokeStyle = "#fff"; g.lineWidth = 1; var y = m.t + (query + 0.5) / L * side;
  g.beginPath(); g.moveTo(m.l, y); g.lineTo(m.l + side, y); g.stroke();
  g.fillStyle = "#1b1f24"; g.font = "600 13px system-ui, sans-serif"; g.textAlign = "left"; g.fillText(title, m.l, 16);
  g.font = "12px system-ui, sans-serif"; g.fillStyle = "#57606a"; g.textAlign = "center";
  [0, Math.round(L / 4), Math.round(L / 2), Math.round(3 * L / 4), L - 1].forEach(function (s) {
    g.fillText(String(s), m.l + (s + 0.5) / L * side, m.t + side + 14);
    g.textAlign = "right"; g.fillText(String(s), m.l - 4, m.t + (s + 0.5) / L * side + 4); g.textAlign = "center";
  });
  g.fillText("key step s (attended to)", m.l + side / 2, m.t + side + 32);
  g.save(); g.translate(14, m.t + side / 2); g.rotate(-Math.PI / 2); g.fillText("query step t (attending)", 0, 0); g.restore();
  return { x: m.l, y: m.t, side: side };
}

export function attentionSignal(opts) {
  var spec = opts.spec, state = opts.state, ys = yourSignal(spec), source = "capture", L = spec.window, plot = null;
  var sec = el("section", { id: "ys-attention", hidden: "", "data-state": "idle" });
  sec.appendChild(el("p", { class: "att-readout", id: "ys-status", "aria-live": "polite" }));
  var map = el("canvas", { id: "ys-att-map", class: "nb-canvas", style: "width:100%;height:" + MAP_PX + "px" });
  sec.appendChild(map);
  var leg = el("div", { id: "ys-att-legend" });
  sec.appendChild(leg);
  var row = el("canvas", { id: "ys-att-row", class: "nb-canvas", style: "width:100%;height:300px" });
  sec.appendChild(row);
  opts.before.parentNode.insertBefore(sec, opts.before);
  var status = sec.querySelector("#ys-status");
  // the map, its legend and the row chart only while there is a run to show: with no stored edit the message
  // replaces them, instead of sitting above two empty canvases
  function showChart(on) { [map, leg, row].forEach(function (c) { c.style.display = on ? "" : "none"; }); }

  function draw(r) {
    var att = r.outputs.attention.data, q = state.query, sig = r.signal;
    showChart(true);
    drawMap(map, att, L, state.layer, state.head, q, "Your signal · layer " + state.layer + ", head " + state.head +
      (state.masked ? "" : ", diagonal mask off") + " (live model)");
    legend(leg, "viridis", LOG_LO, LOG_HI, "log\u2081\u2080 attention weight (your signal; masked diagonal = 0 \u2192 darkest)");
    var w = att.subarray((state.layer * L + q) * L, (state.layer * L + q + 1) * L);
    var o = { title: "query t = " + q + ": its weights over keys, beside your edited aggregate", x: { label: "key step s", min: 0, max: L - 1 },
              lanes: [{ title: "your aggregate", y: { label: "aggregate", unit: "W" }, series: [{ name: "your edit", y: sig.aggregate, kind: "line", color: "#1b1f24" }] },
                      { title: "attention row", y: { label: "weight" }, series: [{ name: "weight", y: w, kind: "line", color: palette[0], width: 1.5 }] }] };
    if (!plot) { plot = plot2d.create(row, o); plot2d.hover(plot); } else plot.opts = o;
    plot.setCursor(q);
    status.textContent = sig.label + ", saved " + sig.savedAt.slice(0, 16).replace("T", " ") + " UTC; run in " + fmt(r.ms, 3) + " ms. Row t = " + q +
      ": largest weight " + fmt(Math.max.apply(null, Array.from(w)), 4) + " at key " + w.indexOf(Math.max.apply(null, Array.from(w))) + ".";
    sec.dataset.state = "done";
    sec.dataset.layer = String(state.layer); sec.dataset.head = String(state.head);
  }

  function update() {
    if (source !== "signal") return;
    sec.dataset.state = "running";
    ys.run(state.head, ["attention", "watts"], { maskDiagonal: state.masked }).then(function (r) { if (source === "signal") draw(r); }, function (e) {
      sec.dataset.state = "none"; status.textContent = e.message;
      showChart(false);
    });
  }

  function setSource(v) {
    source = v;
    sec.hidden = v !== "signal";
    opts.hide.forEach(function (h) { h.style.display = v === "signal" ? "none" : ""; });
    update();
  }
  controls.select(opts.controlsEl, "Source", [{ value: "capture", label: "captured batch" },
    { value: "signal", label: "your signal (Playground edit)" }], "capture", setSource).id = "att-source";
  return { update: update, setSource: setSource, element: sec, signal: ys };
}
