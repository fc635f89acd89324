/* your_signal.js: the Playground's current edit, kept for the other pages (issue 11 item 5, docs/live-model.md).
 *
 * Stored in localStorage (one entry, JSON), which works from file:// (Chromium and Firefox give file pages one
 * storage), on a web server (one origin per site) and inside an iframe whose top-level page is the same site;
 * browsers partition an iframe's storage by the top-level site, so a page embedded elsewhere sees only the edits
 * made in the same embedding. The URL would not do: the edit is `window` numbers, and the pages are separate files.
 *
 *   saveSignal(spec, {aggregate, start, label})   -> true if stored
 *   loadSignal(spec) -> {aggregate: Float32Array (watts), start, label, savedAt} | null (none, or another model)
 */
var KEY = "nilmbuild:your-signal";

function storage() {
  try { return window.localStorage; } catch (e) { return null; }  // a sandboxed frame may refuse access
}

export function saveSignal(spec, sig) {
  var s = storage();
  if (!s) return false;
  var entry = { v: 1, window: spec.window, devices: spec.devices, start: sig.start, label: sig.label,
                savedAt: new Date().toISOString(), aggregate: Array.from(sig.aggregate, function (v) { return Math.round(v * 1000) / 1000; }) };
  try { s.setItem(KEY, JSON.stringify(entry)); return true; } catch (e) { return false; }
}

export function loadSignal(spec) {
  var s = storage(), raw = null;
  try { raw = s && s.getItem(KEY); } catch (e) { return null; }
  if (!raw) return null;
  try {
    var e = JSON.parse(raw);
    if (e.v !== 1 || e.window !== spec.window || e.aggregate.length !== spec.window || String(e.devices) !== String(spec.devices)) return null;
    return { aggregate: Float32Array.from(e.aggregate), start: e.start, label: e.label, savedAt: e.savedAt };
  } catch (err) {
    return null;
  }
}
