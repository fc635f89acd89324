/* live_worker.js: the live model's Web Worker (a classic worker script).
 *
 * nilmbuild/live/runtime.py prepends onnxruntime-web's ort.wasm.min.js (global `ort`) and ships the result as
 * text inside nilmbuild-runtime.js; live_model.js starts it from a Blob URL, so file:// works.
 * Messages in:  {type: "init", wasmGzipBase64, glue, modelGzipBase64: string (the ONNX graph, gzipped)}
 *               {type: "run", id, x: Float32Array (1 x channels x window), dims, head, fetch: [output names],
 *                whatIf: {input name: {data: Float32Array, dims}} (every what-if input of the graph)}
 * Messages out: {type: "ready"} | {type: "result", id, outputs: {name: {data: Float32Array, dims}}, ms}
 *               | {type: "error", id, message}
 */
/* global ort */
var session = null;
var started = null;

function base64Bytes(b64) {
  var bin = atob(b64), out = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function gunzip(bytes) {
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).arrayBuffer();
}

async function init(msg) {
  ort.env.logLevel = "error";
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.proxy = false;
  var both = await Promise.all([gunzip(base64Bytes(msg.wasmGzipBase64)), gunzip(base64Bytes(msg.modelGzipBase64))]);
  ort.env.wasm.wasmBinary = both[0];
  ort.env.wasm.wasmPaths = { mjs: URL.createObjectURL(new Blob([msg.glue], { type: "text/javascript" })) };
  // No graph optimisation: on this 684k-parameter graph it made session creation ~0.5 s longer (the Playground's
  // data-ready 2.25 -> 1.73 s on 2 loaded cores) and every later run no faster (105 vs 103 ms per window).
  session = await ort.InferenceSession.create(new Uint8Array(both[1]), {
    executionProviders: ["wasm"], logSeverityLevel: 3, graphOptimizationLevel: "disabled",
  });
}

async function run(msg) {
  var t0 = performance.now();
  var feeds = {
    x: new ort.Tensor("float32", msg.x, msg.dims),
    head: new ort.Tensor("int64", BigInt64Array.of(BigInt(msg.head)), []),
  };
  for (var k in msg.whatIf) feeds[k] = new ort.Tensor("float32", msg.whatIf[k].data, msg.whatIf[k].dims);
  var res = await session.run(feeds, msg.fetch);
  var outputs = {}, transfer = [];
  for (var name of msg.fetch) {
    var data = new Float32Array(res[name].data);
    outputs[name] = { data: data, dims: res[name].dims.slice() };
    transfer.push(data.buffer);
  }
  self.postMessage({ type: "result", id: msg.id, outputs: outputs, ms: performance.now() - t0 }, transfer);
}

self.onmessage = function (ev) {
  var msg = ev.data;
  if (msg.type === "init") {
    started = init(msg);
    started.then(function () { self.postMessage({ type: "ready" }); },
                 function (e) { self.postMessage({ type: "error", id: null, message: String(e && e.message || e) }); });
  } else if (msg.type === "run") {
    started.then(function () { return run(msg); })
      .catch(function (e) { self.postMessage({ type: "error", id: msg.id, message: String(e && e.message || e) }); });
  }
};
