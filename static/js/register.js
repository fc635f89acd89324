/* register.js: the one way a page starts, and the one test hook.
 *
 *   import { registerPage } from "../register.js";
 *   registerPage({ slug: "attention", start: function (page) { ...; return { state: S }; } });
 *
 * registerPage checks that the payload is this page's, routes uncaught errors to #nb-error, follows #embed,
 * inflates the page's deflated blobs, then calls start(page()) (an exception becomes the page's error message). What start
 * returns (and whatever testHook(obj) adds later) lands on window.nilmbuild.test, next to a few shared
 * helpers (page, fmt, colormaps, decode, blob, msgpack) that the browser tests use to compute expected values, and
 * flush (core.flushDeferred: draw the off-screen views a control change left for later, before reading them).
 * Pages call ready() themselves once the first frame is drawn. Before start, the page's computed findings
 * (page().data.story) are placed on their figures (story.js).
 */
import { decode as msgpackDecode } from "@msgpack/msgpack";

import { colormaps } from "./colormaps.js";
import { blob, catchErrors, fail, flushDeferred, fmt, followEmbed, inflateBlobs, page } from "./core.js";
import { decode } from "./decode.js";
import { placeFindings } from "./story.js";

// window.nilmbuild.test: the browser tests' only way into a page.
export function testHook(obj) {
  var nb = (window.nilmbuild = window.nilmbuild || {});
  nb.test = nb.test || { page: page, fmt: fmt, colormaps: colormaps, decode: decode, blob: blob,
                        msgpack: { decode: msgpackDecode }, flush: flushDeferred };
  if (obj) Object.assign(nb.test, obj);
  return nb.test;
}

export function registerPage(spec) {
  catchErrors();
  followEmbed();
  testHook();
  var p = page();
  var findings = placeFindings((p.data || {}).story);  // the computed findings on their figures (story.js)
  testHook({ findings: findings });
  inflateBlobs().then(function () {
    if (p.slug !== spec.slug) throw new Error("page '" + p.slug + "' runs the script of page '" + spec.slug + "'");
    testHook(spec.start(p));
  }).catch(fail);
}
