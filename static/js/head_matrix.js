/* head_matrix.js: which heads serve which device (records ablation.heads.*, nilmbuild/capture/head_ablation.py).
 * headMatrix.create(canvas, cap, opts) draws the (layer x head) x device matrix of the mean |change in watts|
 * when one head's context is zeroed (opts.names = {delta, sample}: the records, from the view), with row/column
 * labels on a 2D overlay; opts.onPick(layer, head, sample)
 * is called on click / Enter with the batch sample where that cell's effect is largest. A grid of a few dozen cells:
 * heatmap2d.js on a 2D canvas (a WebGL context would cost 100-300 ms in software GL).
 */
import { context2d, fmt, font, onResize, sizeBacking } from "./core.js";
import { fitCanvas, hoverGrid } from "./grid.js";
import { clear2d, heatmap2d } from "./heatmap2d.js";
import { plot2d } from "./plot2d.js";
var PAD = { l: 118, t: 64, r: 8, b: 8 };

function pretty(s) { return String(s).replace(/_/g, " "); }

// rows: layer-major (layer l, head h) -> row l * H + h; columns: devices in model order
function matrixOf(cap, names) {
  var r = cap.record(names.delta);
  return { data: cap.get(names.delta), sample: cap.get(names.sample),
           layers: r.shape[0], heads: r.shape[1], devices: r.shape[2] };
}

function labels(overlay, m, devices, box) {
  var dpr = window.devicePixelRatio || 1, W = overlay.clientWidth, Hh = overlay.clientHeight;
  sizeBacking(overlay, Math.round(W * dpr), Math.round(Hh * dpr));
  var g = context2d(overlay);
  g.setTransform(dpr, 0, 0, dpr, 0, 0); g.clearRect(0, 0, W, Hh);
  plot2d.recordText(g, overlay);   // every label's box, for the overlap tests
  g.font = font(12); g.fillStyle = "#1b1f24";
  var rh = box.height / (m.layers * m.heads), cw = box.width / m.devices;
  g.textAlign = "center"; g.textBaseline = "bottom";
  var names = devices.slice(0, m.devices).map(pretty), wide = names.some(function (t) { return g.measureText(t).width + 4 > cw; });
  names.forEach(function (t, d) {   // on two staggered rows where the columns are too narrow (a phone), inside the canvas
    var hw = g.measureText(t).width / 2, x = Math.max(hw + 1, Math.min(W - hw - 1, box.x + (d + 0.5) * cw));
    g.fillText(t, x, box.y - 6 - (wide && d % 2 ? 15 : 0));
  });
  g.fillText("device whose output changes →", box.x + box.width / 2, box.y - (wide ? 38 : 24));
  g.textAlign = "right"; g.textBaseline = "middle";
  for (var l = 0; l < m.layers; l++) for (var h = 0; h < m.heads; h++) {
    var y = box.y + (l * m.heads + h + 0.5) * rh;
    g.fillText((h === 0 ? "layer " + l + " · " : "") + "head " + h, box.x - 6, y);
  }
  g.strokeStyle = "#1b1f24"; g.lineWidth = 1.5;
  for (l = 1; l < m.layers; l++) {
    var yl = box.y + l * m.heads * rh;
    g.beginPath(); g.moveTo(box.x - 100, yl); g.lineTo(box.x + box.width, yl); g.stroke();
  }
}

export const headMatrix = {
  create: function (canvas, overlay, cap, opts) {
    var m = matrixOf(cap, opts.names), devices = cap.meta.devices, vmax = 0;
    for (var i = 0; i < m.data.length; i++) vmax = Math.max(vmax, m.data[i]);
    fitCanvas(canvas);
    var hm = heatmap2d(canvas, { data: m.data, rows: m.layers * m.heads, cols: m.devices, vmin: 0, vmax: vmax || 1,
                                 cmap: "viridis" });
    function box() {
      return { x: PAD.l, y: PAD.t, width: canvas.clientWidth - PAD.l - PAD.r, height: canvas.clientHeight - PAD.t - PAD.b };
    }
    function draw() {
      fitCanvas(canvas); clear2d(canvas);
      var b = box(); hm.draw(b);
      overlay.style.width = canvas.clientWidth + "px"; overlay.style.height = canvas.clientHeight + "px";
      labels(overlay, m, devices, b);
    }
    function cell(row, col) {
      return { layer: Math.floor(row / m.heads), head: row % m.heads, device: col,
               value: m.data[row * m.devices + col], sample: m.sample[row * m.devices + col] };
    }
    function pick(row, col) { var c = cell(row, col); if (opts.onPick) opts.onPick(c.layer, c.head, c.sample, c); }
    var cursor = hoverGrid(canvas, [hm], {
      ariaLabel: "head ablation matrix: rows are (layer, head), columns are devices; Enter opens the head's attention map",
      label: function (h, r, c, v) {
        var x = cell(r, c);
        return "layer " + x.layer + ", head " + x.head + " zeroed\n" + pretty(devices[c]) + ": mean |Δ| = " + fmt(v, 4) +
          " W\nlargest on batch sample " + x.sample + " (click to open)";
      },
    });
    canvas.addEventListener("click", function (e) {
      var r = canvas.getBoundingClientRect(), c = hm.cellAt(e.clientX - r.left, e.clientY - r.top);
      if (c) { cursor.row = c.row; cursor.col = c.col; pick(c.row, c.col); }
    });
    canvas.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); pick(cursor.row, cursor.col); }
    });
    draw();
    onResize(canvas, draw);
    return { heatmap: hm, matrix: m, vmax: vmax, cell: cell, draw: draw, box: box };
  },
};
