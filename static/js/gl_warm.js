/* gl_warm.js: a classic script inlined in the <head> of the pages that draw with WebGL (forward, attention: their
 * templates' head block), so it runs as the page starts to parse, hundreds of ms before the page's module does.
 * A page's first WebGL context costs 50-500 ms of software-GL start-up in one synchronous call; a worker pays it
 * here, off the main thread, by making (and dropping) a WebGL context of its own on an OffscreenCanvas. The page's
 * own context, made later on the main thread, then takes ~10-30 ms (gl.open).
 *   window.nilmbuildGLWarm: a Promise, resolved (true when the worker made its context, false when it could not or
 *                           after 3 s) once the worker is done; gl.warm() returns it.
 */
(function () {
  var WARM = "var ok = false; try { ok = !!new OffscreenCanvas(1, 1).getContext('webgl'); } catch (e) {} postMessage(ok);";
  window.nilmbuildGLWarm = new Promise(function (resolve) {
    if (typeof OffscreenCanvas !== "function" || typeof Worker !== "function") { resolve(false); return; }
    var url = null, worker = null, timer = null;
    function done(ok) {
      if (timer === null) return;
      clearTimeout(timer); timer = null;
      if (worker) worker.terminate();
      if (url) URL.revokeObjectURL(url);
      resolve(ok);
    }
    timer = setTimeout(function () { done(false); }, 3000);
    try {
      url = URL.createObjectURL(new Blob([WARM], { type: "text/javascript" }));
      worker = new Worker(url);
      worker.onmessage = function (e) { done(!!e.data); };
      worker.onerror = function (e) { e.preventDefault(); done(false); };
    } catch (e) { done(false); }
  });
})();
