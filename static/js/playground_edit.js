/* playground_edit.js: the edited aggregate (watts, one value per model step) with undo and reset.
 * Every edit returns a new signal and pushes the old one; values are clamped at 0 W. */
export function createSignal(initial) {
  var base = Float32Array.from(initial), cur = Float32Array.from(initial), undoStack = [];

  function commit(next) {
    undoStack.push(cur);
    if (undoStack.length > 100) undoStack.shift();
    for (var i = 0; i < next.length; i++) next[i] = Math.max(0, next[i]);
    cur = next;
    return cur;
  }
  function range(a, b) {
    var lo = Math.max(0, Math.min(a, b)), hi = Math.min(cur.length - 1, Math.max(a, b));
    return [lo, hi];
  }
  return {
    get: function () { return cur; },
    canUndo: function () { return undoStack.length > 0; },
    // Set steps a..b to watts (a straight line from wa to wb): one mouse/touch stroke segment.
    draw: function (a, wa, b, wb, fresh) {
      var next = fresh ? Float32Array.from(cur) : cur, r = range(a, b);
      for (var t = r[0]; t <= r[1]; t++) next[t] = a === b ? wb : wa + (wb - wa) * (t - a) / (b - a);
      return fresh ? commit(next) : (cur = next.map(function (v) { return Math.max(0, v); }));
    },
    addEvent: function (at, watts) {
      var next = Float32Array.from(cur);
      for (var k = 0; k < watts.length && at + k < next.length; k++) if (at + k >= 0) next[at + k] += watts[k];
      return commit(next);
    },
    scale: function (a, b, factor) {
      var next = Float32Array.from(cur), r = range(a, b);
      for (var t = r[0]; t <= r[1]; t++) next[t] *= factor;
      return commit(next);
    },
    shift: function (a, b, watts) {
      var next = Float32Array.from(cur), r = range(a, b);
      for (var t = r[0]; t <= r[1]; t++) next[t] += watts;
      return commit(next);
    },
    paste: function (values) {
      if (values.length !== cur.length) throw new Error("paste " + cur.length + " values, got " + values.length);
      return commit(Float32Array.from(values));
    },
    reset: function (to) { if (to) base = Float32Array.from(to); return commit(Float32Array.from(base)); },
    undo: function () { if (undoStack.length) cur = undoStack.pop(); return cur; },
  };
}

// "1, 2 3\n4" -> [1, 2, 3, 4]; throws on anything that is not a number.
export function parseValues(text) {
  var parts = String(text).split(/[\s,;]+/).filter(Boolean);
  return parts.map(function (p) {
    var v = Number(p);
    if (!isFinite(v)) throw new Error("not a number: " + JSON.stringify(p));
    return v;
  });
}
