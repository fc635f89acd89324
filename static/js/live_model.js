/* live_model.js: NILMFormer running live in the page (issue 11, docs/live-model.md).
 *
 * The ONNX graph (nilmbuild/live/export.py) rides in the page's own blob; onnxruntime-web comes from the
 * site's shared nilmbuild-runtime.js, loaded once on first use with a classic <script src> (file://, iframe,
 * no network), and runs in a Web Worker made from a Blob URL. `spec` is the page data Python wrote
 * (nilmbuild/live/page.py: devices, window, channels, step, aggregate scaler, output names, runtime file).
 *
 *   var live = createLiveModel(spec, modelBytes);
 *   live.runWindow(aggregateW, "2024-04-12T08:00")  -> Promise<{device: Float32Array watts}>
 *   live.run(x, head, ["watts", "gate_prob", "attention"]) -> Promise<{outputs: {name: {data, dims}}, ms}>
 */
import { parseStart, timeFeatures } from "./live_time.js";

var runtimePromise = null;

// The shared runtime file, added to the document once; resolves to self.nilmbuildRuntime.
export function loadRuntime(src) {
  if (self.nilmbuildRuntime) return Promise.resolve(self.nilmbuildRuntime);
  if (!runtimePromise) {
    runtimePromise = new Promise(function (resolve, reject) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = function () { self.nilmbuildRuntime ? resolve(self.nilmbuildRuntime) : reject(new Error(src + " defined no runtime")); };
      s.onerror = function () { runtimePromise = null; reject(new Error("could not load " + src + ": keep it next to the page")); };
      document.head.appendChild(s);
    });
  }
  return runtimePromise;
}

function startWorker(spec, modelBytes) {
  return loadRuntime(spec.runtime).then(function (rt) {
    var url = URL.createObjectURL(new Blob([rt.worker], { type: "text/javascript" }));
    var worker = new Worker(url);
    return new Promise(function (resolve, reject) {
      worker.onmessage = function (ev) {
        if (ev.data.type === "ready") resolve(worker);
        else reject(new Error("live model: " + ev.data.message));
      };
      worker.onerror = function (e) { reject(new Error("live model worker: " + (e.message || "failed"))); };
      worker.postMessage({ type: "init", wasmGzipBase64: rt.wasmGzipBase64, glue: rt.glue, model: modelBytes });
    });
  });
}

// (window,) watts + start -> (channels x window) model input, as nilmbuild.pipeline.model_input builds it.
export function modelInput(spec, aggregateW, startISO) {
  var W = spec.window;
  if (!aggregateW || aggregateW.length !== W) throw new Error("runWindow needs " + W + " aggregate values in watts, got " + (aggregateW ? aggregateW.length : 0));
  var x = new Float32Array(spec.channels * W);
  for (var t = 0; t < W; t++) {
    var v = Number(aggregateW[t]);
    if (!isFinite(v)) throw new Error("runWindow needs finite aggregate values; step " + t + " is " + aggregateW[t]);
    x[t] = (v - spec.aggregate.b) / spec.aggregate.a;
  }
  x.set(timeFeatures(parseStart(startISO), spec.stepS, W), W);
  return x;
}

export function createLiveModel(spec, modelBytes) {
  var workerPromise = null, nextId = 1, pending = new Map();

  function worker() {
    if (!workerPromise) {
      workerPromise = startWorker(spec, modelBytes).then(function (w) {
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

  function run(x, head, fetch) {
    return worker().then(function (w) {
      return new Promise(function (resolve, reject) {
        var id = nextId++;
        pending.set(id, { resolve: resolve, reject: reject });
        w.postMessage({ type: "run", id: id, x: x, dims: [1, spec.channels, spec.window], head: head || 0,
                        fetch: fetch || ["watts"] });
      });
    });
  }

  // Split a (devices x window) output into {device: Float32Array}.
  function perDevice(out) {
    var res = {}, W = spec.window;
    spec.devices.forEach(function (d, i) { res[d] = out.data.slice(i * W, (i + 1) * W); });
    return res;
  }

  function runWindow(aggregateW, startISO) {
    try {
      var x = modelInput(spec, aggregateW, startISO);
    } catch (e) {
      return Promise.reject(e);
    }
    return run(x, 0, ["watts"]).then(function (r) { return perDevice(r.outputs.watts); });
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
