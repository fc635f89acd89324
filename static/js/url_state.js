/* url_state.js: a page's control state in the URL fragment (#embed&layer=1&head=3&sample=5).
 * Deep links and iframes open on exactly that view; changing a control rewrites the fragment with
 * history.replaceState (no new history entries). Values are only ever taken from the fragment after
 * validation against the control itself (its <option>s, its min/max/step), which the page built from its
 * data: a bad or out-of-range value is clamped or ignored, never thrown.
 *
 *   parseHash("#embed&layer=1")            -> {embed: true, params: {layer: "1"}}
 *   formatHash(embed, [[key, value], ...]) -> "#embed&layer=1"
 *   controlBinding(el)                     -> {get(), set(raw) -> applied?} for a <select>/<input>
 *   bindUrlState(bindings, env)            -> {apply(), write(), values(), later()}
 *     bindings: [[key, element | {get, set}], ...] in the order they are applied
 *   stateInUrl(bindings)                   -> the same, for this page; a binding may also be a "#id" selector.
 *     A page calls it once its controls exist and before ready(); later() rewrites the fragment after a change
 *     that no input event announces (an animation moving a control).
 *   The fragment is rewritten once the controls have been still for SETTLE_MS, not on every input event:
 *   each replaceState costs Chromium a round trip to the browser process and a repaint, which took a dragged
 *   slider from ~27 to ~20 frames/s on the Gate page (SwiftShader, make bench).
 */

export const SETTLE_MS = 250;

const FLAG = /^[A-Za-z][A-Za-z0-9_-]*$/;

function decode(s) {
  try { return decodeURIComponent(s.replace(/\+/g, " ")); } catch (e) { return null; }
}

export function parseHash(hash) {
  const out = { embed: false, params: {} };
  const body = String(hash || "").replace(/^#/, "");
  for (const part of body.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const key = decode(eq < 0 ? part : part.slice(0, eq));
    if (key === null || !FLAG.test(key)) continue;
    if (eq < 0) { if (key === "embed") out.embed = true; continue; }
    const value = decode(part.slice(eq + 1));
    if (value !== null && !Object.prototype.hasOwnProperty.call(out.params, key)) out.params[key] = value;
  }
  return out;
}

function encode(s) { return encodeURIComponent(String(s)).replace(/%20/g, "+"); }

export function formatHash(embed, entries) {
  const parts = embed ? ["embed"] : [];
  for (const [k, v] of entries) if (v !== undefined && v !== null) parts.push(encode(k) + "=" + encode(v));
  return parts.length ? "#" + parts.join("&") : "";
}

/* ---- validation against a control ---- */

function number(raw) {
  const s = String(raw).trim();
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return NaN;
  return Number(s);
}

// The option value `raw` names, or the nearest numeric option when every option is a number.
export function chooseOption(values, raw) {
  if (!values.length) return undefined;
  if (values.indexOf(String(raw)) >= 0) return String(raw);
  const x = number(raw), nums = values.map(number);
  if (!Number.isFinite(x) || nums.some((n) => !Number.isFinite(n))) return undefined;
  let best = 0;
  nums.forEach((n, i) => { if (Math.abs(n - x) < Math.abs(nums[best] - x)) best = i; });
  return values[best];
}

// A number clamped to [min, max] and snapped to min + k * step (step "any" or missing: no snapping).
export function clampToRange(raw, min, max, step) {
  const x = number(raw);
  if (!Number.isFinite(x)) return undefined;
  const lo = Number.isFinite(min) ? min : -Infinity, hi = Number.isFinite(max) ? max : Infinity;
  let v = Math.min(hi, Math.max(lo, x));
  if (Number.isFinite(step) && step > 0 && Number.isFinite(lo)) {
    v = lo + Math.round((v - lo) / step) * step;
    if (v > hi) v -= step;
    v = Number(v.toFixed(Math.max(decimals(lo), decimals(step))));  // lo + k * step has no more decimals than these
  }
  return v;
}

// The fewest decimals (at most 12) that write n exactly: 0.125 -> 3, 2 -> 0, 1 / 3 -> 12.
function decimals(n) {
  let d = 0;
  while (d < 12 && Math.round(n * 10 ** d) / 10 ** d !== n) d++;
  return d;
}

export function parseBool(raw) {
  const s = String(raw).trim().toLowerCase();
  if (["1", "true", "yes", "on"].indexOf(s) >= 0) return true;
  if (["0", "false", "no", "off"].indexOf(s) >= 0) return false;
  return undefined;
}

function fire(el, type) { el.dispatchEvent(new Event(type, { bubbles: true })); }

// get/set for a form control; set(raw) validates, sets, and fires the event the page listens to.
export function controlBinding(el) {
  if (el.tagName === "SELECT") {
    return {
      get: () => el.value,
      set: (raw) => {
        const v = chooseOption(Array.from(el.options, (o) => o.value), raw);
        if (v === undefined) return false;
        if (v !== el.value) { el.value = v; fire(el, "change"); }
        return true;
      },
    };
  }
  if (el.type === "checkbox") {
    return {
      get: () => (el.checked ? "1" : "0"),
      set: (raw) => {
        const v = parseBool(raw);
        if (v === undefined) return false;
        if (v !== el.checked) { el.checked = v; fire(el, "change"); }
        return true;
      },
    };
  }
  return {
    get: () => el.value,
    set: (raw) => {
      const v = clampToRange(raw, parseFloat(el.min), parseFloat(el.max), parseFloat(el.step));
      if (v === undefined) return false;
      if (String(v) !== el.value) { el.value = String(v); fire(el, "input"); fire(el, "change"); }
      return true;
    },
  };
}

/* ---- the page's binding ---- */

function asBinding(b) { return b && typeof b.get === "function" && typeof b.set === "function" ? b : controlBinding(b); }

// env: {win, doc} (defaults: window, document). Reads the fragment once now (apply; a non-empty fragment is then
// rewritten as the state it produced, clamped values included), and rewrites it after every user interaction with the page (input/change/click/keyup, after the page's own handlers ran) and on write().
export function bindUrlState(bindings, env = {}) {
  const win = env.win || window, doc = env.doc || win.document;
  const list = bindings.filter(([, b]) => b).map(([k, b]) => [k, asBinding(b)]);
  let embed = false, pending = 0;

  function values() { return list.map(([k, b]) => [k, b.get()]); }
  function apply() {
    const st = parseHash(win.location.hash);
    embed = st.embed;
    for (const [k, b] of list) {
      if (!(k in st.params)) continue;
      try { b.set(st.params[k]); } catch (e) { if (win.console) win.console.warn("nilmbuild: #" + k + " ignored:", e); }
    }
  }
  function write() {
    pending = 0;
    embed = parseHash(win.location.hash).embed;
    const hash = formatHash(embed, values());
    if (hash === win.location.hash || (hash === "" && !win.location.hash)) return;
    const url = win.location.href.replace(/#.*$/, "") + hash;
    // the absolute URL, never a bare "#...": in an <iframe srcdoc> a relative one resolves against the host
    // page's URL, which replaceState refuses and location.replace would navigate the frame to
    try { win.history.replaceState(win.history.state, "", url); } catch (e) {
      try { win.location.replace(url); } catch (e2) { /* a sandboxed frame may refuse both */ }
    }
  }
  function later() {
    if (pending && win.clearTimeout) win.clearTimeout(pending);
    pending = win.setTimeout(write, SETTLE_MS);
  }

  apply();
  if (win.location.hash.length > 1) write();   // a link's fragment, rewritten as the state it opened on
  for (const type of ["input", "change", "click", "keyup"]) doc.addEventListener(type, later, true);
  win.addEventListener("hashchange", apply);
  return { apply, write, values, later };
}

export function stateInUrl(bindings) {
  return bindUrlState(bindings.map(([k, b]) => [k, typeof b === "string" ? document.querySelector(b) : b]));
}
