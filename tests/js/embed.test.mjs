// node --test tests/js/: url_state.js, embed_height.js, embed_snippet.js, dom_patch.js escapeHTML (ES modules, no browser)
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const load = (f) => import(pathToFileURL(path.join(ROOT, "static", "js", f)).href);
const U = await load("url_state.js");
const H = await load("embed_height.js");
const S = await load("embed_snippet.js");

test("parseHash: embed flag, params, first value wins, garbage skipped", () => {
  assert.deepEqual(U.parseHash("#embed&layer=1&head=3&sample=5"),
    { embed: true, params: { layer: "1", head: "3", sample: "5" } });
  assert.deepEqual(U.parseHash(""), { embed: false, params: {} });
  assert.deepEqual(U.parseHash("#layer=1&layer=2&note=a+b%26c"), { embed: false, params: { layer: "1", note: "a b&c" } });
  const bad = U.parseHash("#%E0%A4%A=1&=3&&embed=zzz&head=%ZZ&1x=2&<script>=1&t=%E2%82%AC");
  assert.deepEqual(bad, { embed: false, params: { embed: "zzz", t: "€" } });
});

test("formatHash round-trips through parseHash", () => {
  const h = U.formatHash(true, [["layer", 1], ["note", "a b&c"], ["skip", undefined]]);
  assert.equal(h, "#embed&layer=1&note=a+b%26c");
  assert.deepEqual(U.parseHash(h), { embed: true, params: { layer: "1", note: "a b&c" } });
  assert.equal(U.formatHash(false, []), "");
});

test("chooseOption: exact value, nearest numeric option, or nothing", () => {
  assert.equal(U.chooseOption(["0", "1", "2"], "1"), "1");
  assert.equal(U.chooseOption(["0", "1", "2"], "99"), "2");
  assert.equal(U.chooseOption(["0", "1", "2"], "-4"), "0");
  assert.equal(U.chooseOption(["0", "1", "2"], "abc"), undefined);
  assert.equal(U.chooseOption(["log", "sqrt"], "linear"), undefined);
  assert.equal(U.chooseOption(["log", "sqrt"], "sqrt"), "sqrt");
  assert.equal(U.chooseOption([], "1"), undefined);
  assert.equal(U.chooseOption(["kettle", "fridge"], "kettle"), "kettle");  // the first option, by name
  assert.equal(U.chooseOption(["10", "20"], "10"), "10");
});

test("clampToRange: clamps, snaps to the step, rejects non-numbers", () => {
  assert.equal(U.clampToRange("240", 0, 479, 1), 240);
  assert.equal(U.clampToRange("1e9", 0, 479, 1), 479);
  assert.equal(U.clampToRange("-3", 0, 479, 1), 0);
  assert.equal(U.clampToRange("0.337", 0, 1, 0.01), 0.34);
  assert.equal(U.clampToRange("Infinity", 0, 1, 0.01), undefined);
  assert.equal(U.clampToRange("12px", 0, 1, 0.01), undefined);
  assert.equal(U.clampToRange("", 0, 1, 0.01), undefined);
  assert.equal(U.clampToRange("2.5", 0, NaN, NaN), 2.5);
  assert.equal(U.clampToRange("2.3", NaN, 10, 1), 2.3);  // no min: nothing to snap from
  assert.equal(U.clampToRange("2.3", 0, 10, 0), 2.3);    // a step of 0 snaps nothing
  assert.equal(U.clampToRange("1", 0, 1, 0.4), 0.8);     // 1.2, the nearest step, is above max: one step down
  assert.equal(U.clampToRange("0.9", 0.5, 1, 0.25), 1);  // 0.5 + 2 x 0.25: the max itself
  // snapped values keep the decimals of the step and of min: never rounded off the grid
  assert.equal(U.clampToRange("0.76", 0, 1, 0.25), 0.75);
  assert.equal(U.clampToRange("0.4", 0, 1, 0.125), 0.375);
  assert.equal(U.clampToRange("3.6", 0, 10, 1.25), 3.75);
  assert.equal(U.clampToRange("2.4", 0.1, 10, 1), 2.1);
  assert.equal(U.clampToRange("0.31", 0, 1, 0.1), 0.3);   // 3 x 0.1 is 0.30000000000000004 in floats
  assert.equal(U.clampToRange("0.6", 0, 1, 1 / 3), 0.666666666667);
  assert.equal(U.clampToRange("12345.3", 0, 20000, 0.1), 12345.3);  // 123453 x 0.1 is 12345.300000000001
  assert.equal(U.clampToRange("12345.65", 0, 20000, 0.05), 12345.65);  // and 246913 x 0.05 12345.650000000001
});

test("parseBool", () => {
  for (const s of ["1", "true", "yes", "on", " TRUE "]) assert.equal(U.parseBool(s), true, s);
  for (const s of ["0", "false", "no", "off", "Off"]) assert.equal(U.parseBool(s), false, s);
  assert.equal(U.parseBool("maybe"), undefined);
});

test("heightMessage shape", () => {
  assert.deepEqual(H.heightMessage("attention", 612.2),
    { type: "nilmbuild:height", page: "attention", height: 613, version: 1 });
});

test("startHeightReporter posts once per distinct height, only to a frame's parent", () => {
  let h = 400;
  const listeners = {};
  const doc = { documentElement: { get scrollHeight() { return h; }, getBoundingClientRect: () => ({ height: 10 }) },
                body: { scrollHeight: 0 }, querySelectorAll: () => [] };
  const sent = [];
  const win = { document: doc, setTimeout: (f) => f(), addEventListener: (t, f) => { listeners[t] = f; },
                removeEventListener() {} };
  win.parent = { postMessage: (m, o) => sent.push([m, o]) };
  const r = H.startHeightReporter({ page: "gate", win, doc });
  listeners.resize();
  h = 520; listeners.resize();
  assert.deepEqual(sent.map(([m]) => m.height), [400, 520]);
  assert.equal(sent[0][1], "*");
  r.stop(); h = 600; r.post();
  assert.equal(sent.length, 2);
  const top = { document: doc, setTimeout: (f) => f(), addEventListener() {}, removeEventListener() {} };
  top.parent = top;                                    // not in a frame: nothing to tell
  H.startHeightReporter({ page: "gate", win: top, doc });
  assert.equal(sent.length, 2);
});

test("snippets: iframe with the state, the sizing listener, per format", () => {
  const o = { src: S.embedSrc("attention.html#old", [["layer", 1], ["head", 3]]), title: "Attention \"x\"", height: 480 };
  assert.equal(o.src, "attention.html#embed&layer=1&head=3");
  const html = S.snippet("html", o);
  assert.ok(html.startsWith('<iframe data-nilmbuild src="attention.html#embed&amp;layer=1&amp;head=3" title="Attention &quot;x&quot;"'));
  assert.ok(html.includes('d.type !== "nilmbuild:height"'));
  assert.ok(S.snippet("mkdocs", o).endsWith(html));
  const rst = S.snippet("sphinx", o).split("\n");
  assert.equal(rst[0], ".. raw:: html");
  assert.equal(rst[1], "");
  assert.ok(rst.slice(2).every((l) => l === "" || l.startsWith("   ")));
  assert.throws(() => S.snippet("latex", o), /unknown snippet format/);
});

test("escapeHTML: a name from a user's file stays text in an element and in a quoted attribute", async () => {
  const { escapeHTML } = await load("dom_patch.js");
  assert.equal(escapeHTML("k<img src=x onerror=__pwned=1>"), "k&lt;img src=x onerror=__pwned=1&gt;");
  assert.equal(escapeHTML(`a'b"c&d</script>`), "a&#39;b&quot;c&amp;d&lt;/script&gt;");
  assert.equal(escapeHTML("washing_machine"), "washing_machine");
  assert.equal(escapeHTML(3), "3");
});

test("bindUrlState: the opening fragment is rewritten as the clamped state it produced", () => {
  const urls = [];
  const win = {
    location: { hash: "#embed&layer=99&mode=zzz&x=1", href: "file:///s/a.html#embed&layer=99&mode=zzz&x=1", replace() {} },
    history: { state: null, replaceState(s, t, url) { urls.push(url); win.location.href = url; win.location.hash = url.slice(url.indexOf("#")); } },
    setTimeout: () => 1, clearTimeout() {}, addEventListener() {},
  };
  let layer = "0", mode = "a";
  const bindings = [
    ["layer", { get: () => layer, set: (r) => { const v = U.clampToRange(r, 0, 2, 1); if (v === undefined) return false; layer = String(v); return true; } }],
    ["mode", { get: () => mode, set: (r) => { if (r !== "a" && r !== "b") return false; mode = r; return true; } }],
  ];
  U.bindUrlState(bindings, { win, doc: { addEventListener() {} } });
  assert.equal(layer, "2");
  assert.deepEqual(urls, ["file:///s/a.html#embed&layer=2&mode=a"]);
  assert.deepEqual(U.parseHash(win.location.hash), { embed: true, params: { layer: "2", mode: "a" } });
});

// A form control as controlBinding sees it: its value or checked state, options, min/max/step, and the events it got.
function control(props) {
  const el = new EventTarget();
  el.events = [];
  for (const type of ["input", "change"]) el.addEventListener(type, (e) => el.events.push(e.type + (e.bubbles ? "" : "!")));
  return Object.assign(el, props);
}

test("controlBinding: a select takes an option by name, a checkbox a boolean word, a range a clamped number", () => {
  const sel = control({ tagName: "SELECT", value: "kettle", options: [{ value: "kettle" }, { value: "fridge" }] });
  const s = U.controlBinding(sel);
  assert.deepEqual([s.set("kettle"), sel.events], [true, []]);  // already the value: applied, no event
  assert.deepEqual([s.set("fridge"), sel.value, sel.events], [true, "fridge", ["change"]]);
  assert.deepEqual([s.set("oven"), sel.value, s.get()], [false, "fridge", "fridge"]);

  const box = control({ tagName: "INPUT", type: "checkbox", checked: false });
  const b = U.controlBinding(box);
  assert.deepEqual([b.set("on"), box.checked, b.get(), box.events], [true, true, "1", ["change"]]);
  assert.deepEqual([b.set("yes"), box.events.length], [true, 1]);
  assert.deepEqual([b.set("maybe"), box.checked], [false, true]);

  const range = control({ tagName: "INPUT", type: "range", value: "0.5", min: "0", max: "1", step: "0.25" });
  const r = U.controlBinding(range);
  assert.deepEqual([r.set("0.8"), range.value, range.events], [true, "0.75", ["input", "change"]]);
  assert.deepEqual([r.set("0.76"), range.events.length], [true, 2]);
  assert.deepEqual([r.set("wide"), range.value], [false, "0.75"]);
});

test("bindUrlState: any fragment is rewritten as the state, even one that names nothing; no fragment stays none", () => {
  for (const [hash, want] of [["#x", ["file:///s/a.html#layer=1"]], ["", []]]) {
    const urls = [];
    const win = {
      location: { hash, href: "file:///s/a.html" + hash, replace() {} },
      history: { state: null, replaceState(s, t, url) { urls.push(url); } },
      setTimeout: () => 1, clearTimeout() {}, addEventListener() {},
    };
    const bound = U.bindUrlState([["layer", { get: () => "1", set: () => true }]], { win, doc: { addEventListener() {} } });
    assert.deepEqual(urls, want, hash);
    if (!hash) {  // a page opened without a fragment gets one at the first change of a control
      bound.write();
      assert.deepEqual(urls, ["file:///s/a.html#layer=1"]);
    }
  }
});

test("chooseOption: ties go to the first option, a mixed list takes no number, the nearest is by distance", () => {
  assert.equal(U.chooseOption(["0", "2"], "1"), "0");
  assert.equal(U.chooseOption(["1", "x"], "5"), undefined);
  assert.equal(U.chooseOption(["-3", "3"], "2.9"), "3");
});

// A window whose timers run by hand, whose history records each URL, and whose replaceState may refuse.
function fakeWindow(hash, { refuse = false } = {}) {
  const w = { urls: [], replaced: [], cleared: [], timers: new Map(), next: 7 };
  Object.assign(w, {
    location: { hash, href: "file:///s/a.html" + hash, replace(url) { w.replaced.push(url); } },
    history: {
      state: null,
      replaceState(s, t, url) {
        if (refuse) throw new Error("SecurityError");
        w.urls.push(url);
        w.location.href = url;
        w.location.hash = url.includes("#") ? url.slice(url.indexOf("#")) : "";
      },
    },
    setTimeout(fn) { w.timers.set(w.next, fn); return w.next++; },
    clearTimeout(id) { w.cleared.push(id); w.timers.delete(id); },
    addEventListener() {},
    fire() { const fns = [...w.timers.values()]; w.timers.clear(); fns.forEach((f) => f()); },
  });
  return w;
}

test("bindUrlState: one write per settled change, no rewrite of an unchanged fragment, timers of its own only", () => {
  const win = fakeWindow("");
  let layer = "1";
  const bound = U.bindUrlState([["layer", { get: () => layer, set: (r) => { layer = r; return true; } }]],
    { win, doc: { addEventListener() {} } });
  bound.later();  // nothing pending yet: no timer to clear (not even an id the page never got)
  assert.deepEqual(win.cleared, []);
  layer = "2";
  bound.later();  // a second change before the first settled: the first timer is cleared, one write follows
  assert.deepEqual(win.cleared, [7]);
  win.fire();
  assert.deepEqual(win.urls, ["file:///s/a.html#layer=2"]);
  bound.write();  // the fragment already says the state
  assert.deepEqual(win.urls, ["file:///s/a.html#layer=2"]);
  bound.later();  // after a write no timer is pending: nothing to clear
  assert.deepEqual(win.cleared, [7]);
});

test("bindUrlState: a frame that refuses replaceState navigates with location.replace; no controls, no fragment", () => {
  const win = fakeWindow("#layer=9", { refuse: true });
  U.bindUrlState([["layer", { get: () => "2", set: () => true }]], { win, doc: { addEventListener() {} } });
  assert.deepEqual(win.replaced, ["file:///s/a.html#layer=2"]);
  const bare = fakeWindow("#x");
  U.bindUrlState([], { win: bare, doc: { addEventListener() {} } });
  assert.deepEqual(bare.urls, ["file:///s/a.html"]);
});
