/* on_width.js: onWidth(el, fn): fn() in the next animation frame after el's width really changed (not on the
 * observer's first call). Views whose redraw sets their own canvas' height (the upstream Attention, Forward and FiLM
 * pages) redraw outside the ResizeObserver's delivery, so the height change is not an undelivered notification
 * (Chromium reports that as an error). */
import { onResize } from "./core.js";

export function onWidth(el, fn) {
  var w = el.clientWidth;
  onResize(el, function () {
    if (el.clientWidth === w) return;
    w = el.clientWidth;
    requestAnimationFrame(function () { fn(); });
  });
}
