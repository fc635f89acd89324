/* colormaps.js: colour-blind-safe colormaps as 256-entry RGBA lookup tables, a categorical palette,
 * and legend (a labelled colour bar).
 *
 * Sources (tables are generated here from these published fits / anchor points):
 *  - viridis: van der Walt & Smith (2015), matplotlib's default; generated from the 6th-degree
 *    polynomial fit by Matt Zucker (CC0, shadertoy.com/view/WlfXRN), max error about 4/255 per channel (at the ends).
 *  - cividis: Nuñez, Anderton & Renslow (2018), "Optimizing colormaps with consideration for color
 *    vision deficiency", PLoS ONE 13(7): e0199239; 21 anchors (entries 0,16,...,240,255 of the
 *    published 256-entry table, plus 19, 23, 26, 251 where it bends), linearly interpolated: every
 *    entry within 1/255 of the published table (tests/test_colormaps.py).
 *  - burd: ColorBrewer "RdBu" 11-class (Brewer, colorbrewer2.org; marked colour-blind safe), reversed so
 *    blue = negative, white = 0 (when vmin = -vmax), red = positive; linear interpolation in sRGB.
 *  - palette: Okabe & Ito (2008) categorical colours, for line plots.
 * Index rule (heatmap2d.js and the attention shaders' LUT lookups): value t in [0,1] -> entry round(t * 255).
 */
import { context2d, fmt, setText } from "./core.js";


var VIRIDIS_POLY = [ // c0..c6 for r, g, b: colour(t) = sum c_k t^k
  [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
  [0.1050930431085774, 1.404613529898575, 1.384590162594685],
  [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
  [-4.634230498983486, -5.799100973351585, -19.33244095627987],
  [6.228269936347081, 14.17993336680509, 56.69055260068105],
  [4.776384997670288, -13.74514537774601, -65.35303263337234],
  [-5.435455855934631, 4.645852612178535, 26.3124352495832],
];

var CIVIDIS_ANCHORS = [ // [table index, r, g, b]
  [0, 0.0000, 0.1351, 0.3048], [16, 0.0000, 0.1788, 0.4148], [19, 0.0000, 0.1869, 0.4355],
  [23, 0.0036, 0.1959, 0.4416], [26, 0.0462, 0.2039, 0.4402], [32, 0.1034, 0.2204, 0.4358],
  [48, 0.1951, 0.2644, 0.4259], [64, 0.2637, 0.3078, 0.4228], [80, 0.3242, 0.3513, 0.4263],
  [96, 0.3808, 0.3952, 0.4357], [112, 0.4352, 0.4398, 0.4511], [128, 0.4887, 0.4853, 0.4710],
  [144, 0.5478, 0.5319, 0.4717], [160, 0.6091, 0.5798, 0.4636], [176, 0.6720, 0.6293, 0.4480],
  [192, 0.7365, 0.6806, 0.4240], [208, 0.8027, 0.7340, 0.3902], [224, 0.8707, 0.7896, 0.3433],
  [240, 0.9411, 0.8475, 0.2758], [251, 0.9922, 0.8884, 0.2055], [255, 0.9957, 0.9093, 0.2178],
];

var BURD_HEX = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7",
                "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"];

function clamp01(x) { return x < 0 ? 0 : x > 1 ? 1 : x; }
function to8(x) { return Math.round(clamp01(x) * 255); }

function polyTable(c) {
  var out = new Uint8Array(256 * 4);
  for (var i = 0; i < 256; i++) {
    var t = i / 255;
    for (var ch = 0; ch < 3; ch++) {
      var v = 0;
      for (var k = c.length - 1; k >= 0; k--) v = v * t + c[k][ch];
      out[i * 4 + ch] = to8(v);
    }
    out[i * 4 + 3] = 255;
  }
  return out;
}

// anchors: [[position in 0..255, r, g, b (0..1)], ...] sorted by position
function anchorTable(anchors) {
  var out = new Uint8Array(256 * 4), j = 0;
  for (var i = 0; i < 256; i++) {
    while (j < anchors.length - 2 && i > anchors[j + 1][0]) j++;
    var a = anchors[j], b = anchors[j + 1];
    var f = (i - a[0]) / (b[0] - a[0]);
    for (var ch = 1; ch <= 3; ch++) out[i * 4 + ch - 1] = to8(a[ch] + (b[ch] - a[ch]) * f);
    out[i * 4 + 3] = 255;
  }
  return out;
}

function hexAnchors(hex) {
  return hex.map(function (h, k) {
    var n = parseInt(h.slice(1), 16);
    return [(k * 255) / (hex.length - 1), ((n >> 16) & 255) / 255, ((n >> 8) & 255) / 255, (n & 255) / 255];
  });
}

var builders = {
  viridis: function () { return polyTable(VIRIDIS_POLY); },
  cividis: function () { return anchorTable(CIVIDIS_ANCHORS); },
  burd: function () { return anchorTable(hexAnchors(BURD_HEX)); },
};
var cache = {};

export const colormaps = {
  names: ["viridis", "cividis", "burd"],
  // which maps suit signed data centred on 0
  diverging: { burd: true },
  // Uint8Array(256*4) RGBA; shared, do not modify
  lut: function (name) {
    if (!builders[name]) throw new Error("unknown colormap '" + name + "' (have: " + this.names.join(", ") + ")");
    return cache[name] || (cache[name] = builders[name]());
  },
  // t in [0,1] -> [r, g, b] (0..255), the exact colour the GPU heatmap draws for t
  map: function (name, t) {
    var lut = this.lut(name), i = Math.round(clamp01(t) * 255) * 4;
    return [lut[i], lut[i + 1], lut[i + 2]];
  },
  css: function (name, t) {
    var c = this.map(name, t);
    return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
  },
};

// Okabe-Ito categorical palette (black last: it is used for the cursor and axes).
export const palette = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"];

// The 256 x 1 PNG of a colormap's LUT, made once per colormap (a canvas + 2D context per legend took ~9 % of
// the FiLM page's frames while a control moved).
var barUrls = {};
function barUrl(name) {
  if (!barUrls[name]) {
    var c = document.createElement("canvas");
    c.width = 256; c.height = 1;
    var ctx = context2d(c), img = ctx.createImageData(256, 1);
    img.data.set(colormaps.lut(name));
    ctx.putImageData(img, 0, 0);
    barUrls[name] = c.toDataURL("image/png");
  }
  return barUrls[name];
}

function legendFigure() {   // figure > figcaption (label), img (bar), div (ticks)
  var fig = document.createElement("figure");
  fig.className = "nb-legend";
  fig.style.margin = "0";
  var cap = document.createElement("figcaption");
  cap.className = "nb-legend-label";
  var bar = document.createElement("img");
  bar.className = "nb-legend-bar";
  var ticks = document.createElement("div");
  ticks.className = "nb-legend-ticks";
  fig.appendChild(cap); fig.appendChild(bar); fig.appendChild(ticks);
  return fig;
}

function fillTicks(ticks, vmin, vmax, nticks) {
  while (ticks.children.length > nticks) ticks.removeChild(ticks.lastChild);
  while (ticks.children.length < nticks) ticks.appendChild(document.createElement("span"));
  for (var k = 0; k < nticks; k++) {
    var f = k / (nticks - 1), s = ticks.children[k];
    s.style.left = f * 100 + "%";
    setText(s, fmt(vmin + (vmax - vmin) * f));
  }
}

// Writes a legend's colormap, range and label into `fig`, touching only what changed: pages redraw legends on
// every sample switch, and a rebuilt legend cost the FiLM page ~10 frames/s while its sample select was held.
function fillLegend(fig, name, vmin, vmax, label, nticks) {
  var bar = fig.children[1], src = barUrl(name);
  fig.dataset.cmapFor = label || "";
  fig.dataset.cmap = name;
  setText(fig.children[0], label || "value");
  if (bar.getAttribute("src") !== src) bar.setAttribute("src", src);
  bar.alt = "colour scale " + name + " from " + fmt(vmin) + " to " + fmt(vmax);
  fillTicks(fig.children[2], vmin, vmax, nticks || 3);
  return fig;
}

// A labelled horizontal colour bar in `container`: label (with units) above, vmin/mid/vmax ticks below.
// Returns the legend element; call again with the same label to update it in place.
export const legend = function (container, name, vmin, vmax, label, nticks) {
  var old = null;  // the legend this label drew before (compared as data, so any label text is safe)
  Array.prototype.forEach.call(container.querySelectorAll(".nb-legend"), function (el) {
    if (el.dataset.cmapFor === (label || "")) old = el;
  });
  return fillLegend(old || container.appendChild(legendFigure()), name, vmin, vmax, label, nticks);
};

// Makes `container`'s legends exactly `specs` ([name, vmin, vmax, label, nticks?] each, in order), reusing the
// legend elements already there (labels may change: the k-th spec updates the k-th legend). -> the legends.
export function setLegends(container, specs) {
  var figs = Array.prototype.filter.call(container.children, function (el) { return el.classList.contains("nb-legend"); });
  for (var k = specs.length; k < figs.length; k++) container.removeChild(figs[k]);
  return specs.map(function (s, k) {
    return fillLegend(figs[k] || container.appendChild(legendFigure()), s[0], s[1], s[2], s[3], s[4]);
  });
}
