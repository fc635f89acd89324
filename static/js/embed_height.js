/* embed_height.js: in #embed mode, tell the host page how tall this page's content is, so it can size the iframe.
 *
 *   parent.postMessage({type: "nilmbuild:height", page: SLUG, height: N, version: 1}, "*")
 *
 * N is a whole number of CSS pixels: the document's content height (at least the embed view's minimum height;
 * a frame taller than that is filled, so setting the iframe to N is stable). Sent once the page is ready and
 * again whenever that height changes (ResizeObserver), never twice in a row with the same value.
 *
 *   heightMessage(page, height)        -> the message object
 *   contentHeight(doc)                 -> N
 *   startHeightReporter({page, win, doc, target, observe}) -> {post(), stop()}
 */

export const MESSAGE_TYPE = "nilmbuild:height";
export const MESSAGE_VERSION = 1;

export function heightMessage(page, height) {
  return { type: MESSAGE_TYPE, page: String(page), height: Math.ceil(height), version: MESSAGE_VERSION };
}

export function contentHeight(doc) {
  const root = doc.documentElement, body = doc.body;
  return Math.ceil(Math.max(root.scrollHeight, body ? body.scrollHeight : 0, root.getBoundingClientRect().height));
}

// target: the window to post to (default win.parent; nothing is posted when the page is not in a frame).
// observe: elements whose size changes can change the content height (default: <html>, <body>, and the view's
// main blocks when present).
export function startHeightReporter(opts) {
  const win = opts.win || window, doc = opts.doc || win.document;
  const target = opts.target || (win.parent !== win ? win.parent : null);
  let last = -1, frame = 0, stopped = false;

  function post() {
    frame = 0;
    if (stopped || !target) return;
    const h = contentHeight(doc);
    if (h === last) return;
    last = h;
    target.postMessage(heightMessage(opts.page, h), "*");
  }
  function soon() { if (!frame) frame = (win.requestAnimationFrame || win.setTimeout).call(win, post); }

  const els = opts.observe || [doc.documentElement, doc.body].concat(
    Array.from(doc.querySelectorAll(".nb-view, .nb-stage, .nb-visual, .nb-side, .nb-after")));
  let ro = null;
  if (win.ResizeObserver) {
    ro = new win.ResizeObserver(soon);
    els.forEach((el) => el && ro.observe(el));
  }
  win.addEventListener("resize", soon);
  win.addEventListener("load", soon);
  post();
  return {
    post,
    stop() { stopped = true; if (ro) ro.disconnect(); win.removeEventListener("resize", soon); },
  };
}
