/* live_page.js: what an ES-module entry page needs from the page itself (payload, blobs, ready/fail).
 * Python writes <script type="application/json" id="nb-page"> (slug, title, blobs, data) and the blobs as
 * base64 in <script id="nb-blob-NAME">. */
var cache = {};

export function pagePayload() {
  if (!cache.payload) cache.payload = JSON.parse(document.getElementById("nb-page").textContent);
  return cache.payload;
}

export function pageBlob(name) {
  var el = document.getElementById("nb-blob-" + name);
  if (!el) throw new Error("blob '" + name + "' is not part of this page");
  var bin = atob(el.textContent.trim()), out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function ready() {
  var root = document.documentElement;
  if (root.dataset.ready) return;
  root.dataset.ready = "true";
  window.dispatchEvent(new Event("nilmbuild:ready"));
}

export function fail(err) {
  var root = document.documentElement, msg = err && err.message ? err.message : String(err);
  if (root.dataset.ready === "error") return;
  root.dataset.ready = "error";
  var box = document.getElementById("nb-error") || document.body.insertBefore(document.createElement("div"), document.body.firstChild);
  box.id = "nb-error";
  box.className = "nb-error";
  box.setAttribute("role", "alert");
  box.textContent = "This view could not be shown: " + msg;
  box.hidden = false;
  console.warn("nilmbuild:", err);
}
