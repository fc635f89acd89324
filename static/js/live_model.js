/* live_model.js: NILMFormer running live in the page (issue 11, docs/live-model.md).
 *
 * The ONNX graph (nilmbuild/live/export.py) comes from the site's shared nilmbuild-model.js and onnxruntime-web
 * from the site's shared nilmbuild-runtime.js: sibling files written once per site, each loaded once on first use
 * with a classic <script src> (file://, iframe, no network); the model runs in a Web Worker made from a Blob URL.
 * `spec` is the page data Python wrote (nilmbuild/site/views/live_parts.py: devices, window, channels, step, aggregate scaler,
 * output names, the runtime and model files).
 *
 *   var live = createLiveModel(spec);
 *   live.runWindow(aggregateW, "2024-04-12T08:00", whatIf?)  -> Promise<{device: Float32Array watts}>
 *   live.run(x, head, ["watts", "gate_prob", "attention"], whatIf?) -> Promise<{outputs: {name: {data, dims}}, ms}>
 *
 * whatIf (optional): {thresholds: [one per device], filmEncAffine: [[γ scale, γ offset, β scale, β offset] per
 * encoder layer], filmOn: bool, maskDiagonal: bool, softGate: bool}; what is left out keeps the checkpoint's
 * value (spec.whatIf holds the graph's defaults, written by Python). See docs/live-model.md.
 */
import { parseStart, timeFeatures, upstreamTimeFeatures } from "./live_time.js";

// The shared runtime file, added to the document once; resolves to self.nilmbuildRuntime.
export function loadRuntime(src) { return loadScript(src, "nilmbuildRuntime"); }

// A classic sibling script that sets self[name]; added once. Resolves to that value.
var scripts = {};
function loadScript(src, name) {
  if (self[name]) return Promise.resolve(self[name]);
  if (!scripts[src]) {
    scripts[src] = new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { self[name] ? resolve(self[name]) : reject(new Error(src + " defined no " + name)); };
      s.onerror = function () { delete scripts[src]; reject(new Error("could not load " + src + ": keep it next to the page")); };
      document.head.appendChild(s);
    });
  }
  return scripts[src];
}

// The graph: the shared model file's gzipped base64 (decoded in the worker).
function modelMessage(spec) {
  return loadScript(spec.modelFile, "nilmbuildModel").then(function (m) { return { modelGzipBase64: m.gzipBase64 }; });
}

function startWorker(spec) {
  return Promise.all([loadRuntime(spec.runtime), modelMessage(spec)]).then(function (both) {
    var rt = both[0], model = both[1];
    var url = URL.createObjectURL(new Blob([rt.worker], { type: "text/javascript" }));
    var worker = new Worker(url);
    return new Promise(function (resolve, reject) {
      worker.onmessage = function (ev) {
        if (ev.data.type === "ready") resolve(worker);
        else reject(new Error("live model: " + ev.data.message));
      };
      worker.onerror = function (e) { reject(new Error("live model worker: " + (e.message || "failed"))); };
      worker.postMessage(Object.assign({ type: "init", wasmGzipBase64: rt.wasmGzipBase64, glue: rt.glue }, model));
    });
  });
}

// (window,) watts + start -> (channels x window) model input, as nilmbuild.pipeline.model_input builds it.
export function modelInput(spec, aggregateW, startISO) {
  var W = spec.window;
  if (!aggregateW || aggregateW.length !== W) throw new Error("runWindow needs " + W + " aggregate values in watts, got " + (aggregateW ? aggregateW.length : 0));
  var z = new Float32Array(W);
  for (var t = 0; t < W; t++) {
    var v = Number(aggregateW[t]);
    if (!isFinite(v)) throw new Error("runWindow needs finite aggregate values; step " + t + " is " + aggregateW[t]);
    z[t] = (v - spec.aggregate.b) / spec.aggregate.a;
  }
  return modelInputScaled(spec, z, startISO);
}

// (window,) scaled aggregate (the model input's channel 0) + start -> the model input (channels x window).
export function modelInputScaled(spec, scaled, startISO) {
  var W = spec.window, x = new Float32Array(spec.channels * W);
  x.set(scaled.subarray ? scaled.subarray(0, W) : scaled.slice(0, W), 0);
  var ms = parseStart(startISO);
  x.set(spec.exo ? upstreamTimeFeatures(spec.exo, ms, spec.stepS, W) : timeFeatures(ms, spec.stepS, W), W);
  return x;
}

function flatten(v) {
  if (typeof v === "number") return [v];
  var out = [];
  Array.from(v).forEach(function (r) { out = out.concat(typeof r === "number" ? [r] : Array.from(r)); });
  return out;
}

// {thresholds, filmEncAffine, filmOn, maskDiagonal, softGate} (any subset) -> the graph's what-if feeds, every
// input present (the defaults from spec.whatIf for what is left out; spec.whatIf[name].key is the JS name).
export function whatIfFeeds(spec, whatIf) {
  var feeds = {}, given = {}, keys = {};
  Object.keys(spec.whatIf).forEach(function (name) { keys[spec.whatIf[name].key] = name; });
  Object.keys(whatIf || {}).forEach(function (k) {
    if (!(k in keys)) throw new Error("unknown what-if '" + k + "'; use " + Object.keys(keys).join(", "));
    given[keys[k]] = whatIf[k];
  });
  Object.keys(spec.whatIf).forEach(function (name) {
    var def = spec.whatIf[name], v = given[name], data = Float32Array.from(def.value);
    if (typeof v === "boolean") data[0] = v ? 1 : 0;
    else if (v != null) {
      var flat = flatten(v);
      if (flat.length !== data.length || !flat.every(isFinite)) throw new Error("what-if " + name + " needs " + data.length + " finite values, got " + flat.join(", "));
      data.set(flat);
    }
    feeds[name] = { data: data, dims: def.dims.slice() };
  });
  return feeds;
}

export function createLiveModel(spec) {
  var workerPromise = null, nextId = 1, pending = new Map();

  function worker() {
    if (!workerPromise) {
      workerPromise = startWorker(spec).then(function (w) {
        w.onmessage = function (ev) {
          var m = ev.data, p = pending.get(m.id);
          if (!p) return;
          pending.delete(m.id);
          m.type === "result" ? p.resolve({ outputs: m.outputs, ms: m.ms }) : p.reject(new Error("live model: " + m.message));
        };
        return w;
      });
      workerPromise.catch(function () { workerPromise = null; });
    }
    return workerPromise;
  }

  function run(x, head, fetch, whatIf) {
    var feeds;
    try { feeds = whatIfFeeds(spec, whatIf); } catch (e) { return Promise.reject(e); }
    return worker().then(function (w) {
      return new Promise(function (resolve, reject) {
        var id = nextId++;
        pending.set(id, { resolve: resolve, reject: reject });
        w.postMessage({ type: "run", id: id, x: x, dims: [1, spec.channels, spec.window], head: head || 0,
                        fetch: fetch || ["watts"], whatIf: feeds });
      });
    });
  }

  // Split a (devices x window) output into {device: Float32Array}.
  function perDevice(out) {
    var res = {}, W = spec.window;
    spec.devices.forEach(function (d, i) { res[d] = out.data.slice(i * W, (i + 1) * W); });
    return res;
  }

  function runWindow(aggregateW, startISO, whatIf) {
    try {
      var x = modelInput(spec, aggregateW, startISO);
    } catch (e) {
      return Promise.reject(e);
    }
    return run(x, 0, ["watts"], whatIf).then(function (r) { return perDevice(r.outputs.watts); });
  }

  return { spec: spec, devices: spec.devices.slice(), window: spec.window, run: run, runWindow: runWindow,
           perDevice: perDevice, modelInput: function (a, s) { return modelInput(spec, a, s); } };
}

// window.nilmbuild.runWindow / .devices / .live on a page that carries the model.
export function exposeLiveModel(live) {
  var nb = (window.nilmbuild = window.nilmbuild || {});
  nb.runWindow = live.runWindow;
  nb.devices = live.devices.slice();
  nb.live = live;
  return live;
}
