/* core.js: what every page needs (ES module; no side effects on import, so node can load it).
 * page()               the page's payload from Python (<script type="application/json" id="nb-page">):
 *                      slug, title, section, blobs (names) and data (the view's JSON for its JS)
 * registerPage({slug, start})   the one way a page starts: see register.js
 * blob(name)           -> Uint8Array of the page's inlined blob (base64 in the script element #nb-blob-NAME)
 * inflateBlobs()       -> Promise: the deflated blobs inflated (registerPage awaits it before start)
 * inTasks([f, g, ...])  run a page's start steps one macrotask each (no single long load task)
 * newTask              a no-op first step for inTasks: the next step then starts in a task of its own
 * ready()              first frame drawn: <html data-ready="true"> + "nilmbuild:ready" event (once)
 * fail(err)            readable message in #nb-error, <html data-ready="error">
 * isEmbed()            the page was opened with #embed (only the visual is shown)
 * savePNG / saveButton download a canvas as PNG
 * tooltip              show(text, clientX, clientY) / hide(); element #nb-tooltip
 * fmt(x)               compact, exact-enough number formatting
 * gridCursor           arrow-key cursor over a focused grid (heatmaps)
 * controls             real, labelled <button>/<select>/<input> controls
 * animate              requestAnimationFrame loop that can be skipped (reduced motion / tests)
 * onResize             ResizeObserver wrapper
 * overlay2d(el, W, H)  a 2D canvas laid over another, sized W x H CSS px at devicePixelRatio -> its context
 * element(tag, attrs, text)  a new element with attributes and text (what-if panels build theirs with it)
 * afterReady(steps)   steps that build views far down the page, one macrotask each after ready()
 * onScreen(el)         -> later(fn): fn runs now while el is on screen, else when it scrolls into view (the
 *                      latest fn only); flushDeferred() runs every pending one (tests, Save PNG)
 * sizeBacking(el, w, h) canvas backing store w x h, reallocated only when it changes
 * context2d(canvas)    a chart canvas' 2D context, rastered on the CPU (see there why)
 * In #embed mode inside a frame, ready() starts the nilmbuild:height messages (embed_height.js, docs/embedding.md).
 */
import { startHeightReporter } from "./embed_height.js";

/* ---- the page payload ---- */
var pageCache = null;
export function page() {
  if (!pageCache) {
    var el = document.getElementById("nb-page");
    pageCache = el ? JSON.parse(el.textContent) : { slug: "nilmbuild", title: "", section: "", blobs: [], data: {} };
  }
  return pageCache;
}

/* ---- blobs ---- */
var blobCache = {};
export const blob = function (name) {
  if (blobCache[name]) return blobCache[name];
  var el = document.getElementById("nb-blob-" + name);
  if (!el) throw new Error("blob '" + name + "' is not part of this page");
  if (el.dataset.encoding) throw new Error("blob '" + name + "' is still " + el.dataset.encoding + "d: read it after inflateBlobs()");
  return (blobCache[name] = base64Bytes(el.textContent));
};
// Inflate every deflated blob (data-encoding="deflate", see assets.blob_html) with the browser's own
// DecompressionStream, so that blob(name) can stay synchronous; registerPage starts the page when this resolves.
export const inflateBlobs = function () {
  var els = document.querySelectorAll('script[type="application/octet-stream"][data-encoding="deflate"]');
  return Promise.all(Array.prototype.map.call(els, function (el) {
    var name = el.id.slice("nb-blob-".length);
    if (blobCache[name]) return null;
    var stream = new Blob([base64Bytes(el.textContent)]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Response(stream).arrayBuffer().then(function (buf) { blobCache[name] = new Uint8Array(buf); });
  }));
};
// Native Uint8Array.fromBase64 where the browser has it (Chromium 140+: ~10x faster than atob + a per-byte loop).
export const base64Bytes = function (text) {
  if (typeof Uint8Array.fromBase64 === "function") return Uint8Array.fromBase64(text.trim());
  var bin = atob(text.trim());
  var out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
};

/* ---- start in several tasks ---- */
// Run steps one macrotask each (the first in the current task): between them the browser may paint and handle
// input, and no single task of a page's start grows past its slowest step, e.g. one WebGL context in software
// GL. Resolves after the last step; the first exception goes to fail() and stops the rest.
export const inTasks = function (steps) {
  return steps.reduce(function (prev, step, i) {
    return prev.then(function () {
      return i === 0 ? step() : new Promise(function (resolve) { setTimeout(resolve, 0); }).then(step);
    });
  }, Promise.resolve()).catch(fail);
};
// A step that does nothing: first in inTasks' list, it starts the next step in a task of its own instead of the
// current one (apart from the page script's evaluation and the work start() did before inTasks).
export function newTask() {}

/* ---- off-screen views: drawn when they scroll into view ---- */
// A control change redraws every view it touches; views far off screen need not be drawn on every change (each
// costs CPU raster or GPU passes while the user drives a control up the page). later(fn) runs fn at once while
// the page is starting (until ready(): a page's first state is drawn in full) or while `el` is within 50 px of the
// viewport; otherwise it keeps fn (replacing an older one: only the latest state is drawn) until `el` comes
// into view. flushDeferred() runs every kept fn now: the test hook and savePNG call it before reading a canvas.
var pendingDraws = new Set();
export function onScreen(el) {
  var visible = true, pending = null;           // visible until the observer's first report says otherwise
  var entry = { run: function () { var f = pending; pending = null; pendingDraws.delete(entry); if (f) f(); } };
  if (typeof IntersectionObserver === "function") {
    new IntersectionObserver(function (es) {
      visible = es[es.length - 1].isIntersecting;
      if (visible) entry.run();
    }, { rootMargin: "50px" }).observe(el);
  }
  return function later(fn) {
    if (visible || !readyDone) { pending = null; pendingDraws.delete(entry); fn(); return; }
    pending = fn; pendingDraws.add(entry);
  };
}
// Steps that build views far down a page (their own WebGL context, say), one macrotask each after the page's
// ready(): what is on screen is drawn first. flushDeferred() runs the steps not yet run, in order, at once.
export const afterReady = function (steps) {
  var i = 0, entry = { run: function () { pendingDraws.delete(entry); while (i < steps.length) steps[i++](); } };
  pendingDraws.add(entry);
  function next() {   // each step two frames after the last: the GPU thread has then drawn what it queued, and a
    // new context (which waits for that thread) is made without waiting behind a frame
    if (i >= steps.length) { pendingDraws.delete(entry); return; }
    requestAnimationFrame(function () { requestAnimationFrame(function () { setTimeout(function () {
      if (i >= steps.length) return;                // flushDeferred ran them
      try { steps[i++](); } catch (e) { i = steps.length; pendingDraws.delete(entry); fail(e); return; }
      next();
    }, 0); }); });
  }
  next();
};
export function flushDeferred() {   // until none is left: a deferred draw may defer steps of its own (afterReady)
  for (var k = 0; k < 8 && pendingDraws.size; k++) Array.from(pendingDraws).forEach(function (e) { e.run(); });
}

/* ---- ready / fail ---- */
var readyDone = false;
export const ready = function () {
  var root = document.documentElement;
  if (readyDone || root.dataset.ready === "error") return;
  readyDone = true;
  if (isEmbed() && window.parent !== window) startHeightReporter({ page: page().slug });
  root.dataset.ready = "true";
  var ev = new Event("nilmbuild:ready");
  window.dispatchEvent(ev);
  document.dispatchEvent(new Event("nilmbuild:ready"));
};

export const fail = function (err) {
  var root = document.documentElement;
  var msg = err && err.message ? err.message : String(err);
  if (root.dataset.ready === "error") return; // keep the first (root-cause) message
  root.dataset.ready = "error";
  var box = document.getElementById("nb-error");
  if (!box) {
    box = document.createElement("div");
    box.id = "nb-error";
    box.className = "nb-error";
    box.setAttribute("role", "alert");
    document.body.insertBefore(box, document.body.firstChild);
  }
  box.textContent = "This view could not be shown: " + msg;
  box.hidden = false;
  if (window.console) console.warn("nilmbuild:", err); // warn, not error: the message is on the page
  window.dispatchEvent(new CustomEvent("nilmbuild:error", { detail: msg }));
};

// Uncaught errors and rejections end up in #nb-error (called once, by registerPage).
export function catchErrors() {
  window.addEventListener("error", function (e) {
    fail(e.error || e.message || "unknown script error");
  });
  window.addEventListener("unhandledrejection", function (e) {
    fail(e.reason || "unhandled promise rejection");
  });
}

/* ---- embed mode ---- */
export const isEmbed = function () {
  return /(^#|[#&])embed(&|$)/.test(location.hash);
};
function syncEmbed() {
  document.documentElement.classList.toggle("nb-embed", isEmbed());
}
// Keep <html class="nb-embed"> in step with the URL hash (called once, by registerPage).
export function followEmbed() {
  syncEmbed();
  window.addEventListener("hashchange", syncEmbed);
}

/* ---- numbers ---- */
// Up to `digits` significant digits, trailing zeros dropped; exponent form for very large/small.
// The canvas font stack (the CSS one, minus fonts canvas text never picks here): one place for every page.
export const FONT_FAMILY = 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
export const font = function (px, weight) { return (weight ? weight + " " : "") + px + "px " + FONT_FAMILY; };

export const fmt = function (x, digits) {
  digits = digits || 4;
  if (x === null || x === undefined) return "–";
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "-∞";
  if (x === 0) return "0";
  var a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) {
    return x.toExponential(digits - 1).replace(/\.?0+e/, "e").replace("e+", "e");
  }
  if (a >= Math.pow(10, digits)) return String(Math.round(x));  // 2000 -> "2000", not toPrecision's "2.00e+3"
  var s = x.toPrecision(digits);
  if (s.indexOf(".") >= 0) s = s.replace(/0+$/, "").replace(/\.$/, "");
  return s;
};

/* ---- tooltip ---- */
// show(text, clientX, clientY, refresh): refresh (optional) rebuilds the readout from the view's current data; it
// runs after any control changes (a select, range, checkbox or button anywhere on the page, the URL state) while
// the tooltip is up, so a mode, sample, layer or head switch never leaves stale text.
var tipRefresh = null, tipListening = false;
function refreshTooltip() {
  requestAnimationFrame(function () {   // after the control's own handlers and the redraw they schedule
    var t = document.getElementById("nb-tooltip");
    if (tipRefresh && t && !t.hidden) tipRefresh();
  });
}
function listenForControls() {
  if (tipListening) return;
  tipListening = true;
  ["change", "input", "click", "hashchange", "popstate"].forEach(function (ev) {
    (ev === "hashchange" || ev === "popstate" ? window : document).addEventListener(ev, refreshTooltip);
  });
}
export const tooltip = {
  el: function () {
    var t = document.getElementById("nb-tooltip");
    if (!t) {
      t = document.createElement("div");
      t.id = "nb-tooltip";
      t.className = "nb-tooltip";
      t.setAttribute("role", "tooltip");
      document.body.appendChild(t);
    }
    return t;
  },
  // clientX/Y: viewport coordinates of the point the text describes
  show: function (text, clientX, clientY, refresh) {
    var t = this.el();
    tipRefresh = refresh || null;
    if (refresh) listenForControls();
    t.textContent = text;
    t.hidden = false;
    var w = t.offsetWidth, h = t.offsetHeight;
    var x = clientX + 12, y = clientY + 12;
    if (x + w > window.innerWidth - 4) x = Math.max(4, clientX - w - 12);
    if (y + h > window.innerHeight - 4) y = Math.max(4, clientY - h - 12);
    t.style.left = x + "px";
    t.style.top = y + "px";
  },
  hide: function () {
    var t = document.getElementById("nb-tooltip");
    tipRefresh = null;
    if (t) t.hidden = true;
  },
  refresh: refreshTooltip,
};

/* ---- PNG export ---- */
// Canvases made by gl.create keep their drawing buffer, so toBlob sees the last frame. `render`
// (optional) redraws first, for canvases that do not.
export const savePNG = function (canvas, filename, render) {
  flushDeferred();
  if (render) render();
  filename = filename || page().slug + ".png";
  var url = canvas.toDataURL("image/png");
  var a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
};
// A standard "Save PNG" button in `container`; getCanvas: a canvas or a function returning one.
export const saveButton = function (container, getCanvas, filename, render) {
  var b = controls.button(container, "Save PNG", function () {
    var c = typeof getCanvas === "function" ? getCanvas() : getCanvas;
    savePNG(c, filename, render);
  });
  b.classList.add("nb-save-png");
  b.title = "Download this view as a PNG image";
  return b;
};

/* ---- controls: real, labelled form elements ---- */
var uid = 0;
function field(container, label, input) {
  var id = input.id || "nb-ctl-" + ++uid;
  input.id = id;
  var wrap = document.createElement("span");
  wrap.className = "nb-field";
  var l = document.createElement("label");
  l.htmlFor = id;
  l.textContent = label;
  wrap.appendChild(l);
  wrap.appendChild(input);
  container.appendChild(wrap);
  return input;
}
export const controls = {
  button: function (container, label, onClick) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "nb-btn";
    b.textContent = label;
    b.addEventListener("click", onClick);
    container.appendChild(b);
    return b;
  },
  // options: array of values or of {value, label}
  select: function (container, label, options, value, onChange) {
    var s = document.createElement("select");
    options.forEach(function (o) {
      var opt = document.createElement("option");
      opt.value = typeof o === "object" ? o.value : o;
      opt.textContent = typeof o === "object" ? o.label : o;
      s.appendChild(opt);
    });
    if (value !== undefined) s.value = value;
    s.addEventListener("change", function () { onChange(s.value); });
    return field(container, label, s);
  },
  range: function (container, label, min, max, step, value, onInput) {
    var r = document.createElement("input");
    r.type = "range";
    r.min = min; r.max = max; r.step = step; r.value = value;
    r.addEventListener("input", function () { onInput(Number(r.value)); });
    return field(container, label, r);
  },
  checkbox: function (container, label, checked, onChange) {
    var c = document.createElement("input");
    c.type = "checkbox";
    c.checked = !!checked;
    c.addEventListener("change", function () { onChange(c.checked); });
    return field(container, label, c);
  },
};

/* ---- keyboard cursor over a grid ---- */
// Makes `el` focusable; arrow keys / Home / End / PageUp / PageDown move a (row, col) cursor and call
// onMove(row, col). Returns {row, col, set(row, col)}.
export const gridCursor = function (el, rows, cols, onMove, label) {
  var cur = { row: 0, col: 0 };
  if (!el.hasAttribute("tabindex")) el.tabIndex = 0;
  el.setAttribute("role", "application");
  el.setAttribute("aria-roledescription", "grid cursor");
  if (label) el.setAttribute("aria-label", label + " (arrow keys move the cursor)");
  cur.set = function (r, c) {
    cur.row = Math.max(0, Math.min(rows - 1, r));
    cur.col = Math.max(0, Math.min(cols - 1, c));
    onMove(cur.row, cur.col);
  };
  el.addEventListener("keydown", function (e) {
    var r = cur.row, c = cur.col, step = e.shiftKey ? 10 : 1;
    switch (e.key) {
      case "ArrowUp": r -= step; break;
      case "ArrowDown": r += step; break;
      case "ArrowLeft": c -= step; break;
      case "ArrowRight": c += step; break;
      case "Home": c = 0; break;
      case "End": c = cols - 1; break;
      case "PageUp": r = 0; break;
      case "PageDown": r = rows - 1; break;
      default: return;
    }
    e.preventDefault();
    cur.set(r, c);
  });
  // focus from the keyboard shows the cursor's cell; focus from a click must not (the pointer's own readout stands,
  // and a tooltip for cell (0, 0) at the grid's corner would misreport what was clicked)
  var byPointer = false;
  el.addEventListener("pointerdown", function () { byPointer = true; setTimeout(function () { byPointer = false; }, 0); });
  el.addEventListener("focus", function () { if (!byPointer) cur.set(cur.row, cur.col); byPointer = false; });
  return cur;
};

/* ---- animation that tests and reduced-motion users can skip ---- */
export const animationsOff = function () {
  return !!(window.nilmbuild && window.nilmbuild.test && window.nilmbuild.test.noAnimation) ||
    (window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches);
};
// step(t in [0,1]) is called per frame for `ms`; when animations are off it is called once with t=1.
export const animate = function (ms, step, done) {
  if (animationsOff() || !ms) { step(1); if (done) done(); return { cancel: function () {} }; }
  var t0 = null, id = 0, stopped = false;
  function frame(now) {
    if (stopped) return;
    if (t0 === null) t0 = now;
    var t = Math.min(1, (now - t0) / ms);
    step(t);
    if (t < 1) id = requestAnimationFrame(frame); else if (done) done();
  }
  id = requestAnimationFrame(frame);
  return { cancel: function () { stopped = true; cancelAnimationFrame(id); step(1); if (done) done(); } };
};

/* ---- resize ---- */
export const onResize = function (el, fn) {
  if (!window.ResizeObserver) { window.addEventListener("resize", fn); return; }
  new ResizeObserver(function () { fn(); }).observe(el);
};

/* ---- 2D overlays (axes and labels over a WebGL canvas) ---- */
// Size `el` to W x H CSS pixels with a devicePixelRatio backing store; returns its cleared 2D context with a
// CSS-pixel transform.
export function overlay2d(el, W, H) {
  var dpr = window.devicePixelRatio || 1;
  el.style.width = W + "px"; el.style.height = H + "px";
  sizeBacking(el, Math.round(W * dpr), Math.round(H * dpr));
  var g = context2d(el);
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, W, H);
  return g;
}
// Text and place of an element that follows a control, written only when they change (a write repaints).
export function setText(el, text) { if (el.textContent !== text) el.textContent = text; }
export function placeAt(el, x, y, w, h) {   // CSS pixels in its positioned parent; w, h optional
  el.style.left = x + "px"; el.style.top = y + "px";
  if (w !== undefined) { el.style.width = w + "px"; el.style.height = h + "px"; }
}
// A new element: element("p", {class: "x", id: "y"}, "text"); attributes as given, text (if any) as textContent.
export function element(tag, attrs, text) {
  var e = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
  if (text != null) e.textContent = text;
  return e;
}

// Size a 2D canvas' backing store as `el.width = w; el.height = h` does (cleared, context state reset), but
// reallocate it only when the size changes: every assignment reallocates, even to the same size.
export function sizeBacking(el, w, h) {
  if (el.width !== w || el.height !== h) { el.width = w; el.height = h; return; }
  var g = context2d(el);
  if (g && typeof g.reset === "function") g.reset(); else { el.width = w; el.height = h; }
}
// The 2D context of a chart canvas, rastered on the CPU (willReadFrequently): charts are lines, rectangles and
// text redrawn on every control change, which a CPU rasteriser draws in a fraction of the time that a software
// GPU (SwiftShader, headless or blocklisted GPUs) takes, and a real GPU gains little on. The first getContext
// call of a canvas fixes its kind, so every module asks here.
export function context2d(canvas) {
  return canvas.getContext("2d", { willReadFrequently: true });
}
