#!/usr/bin/env node
// ONNX Runtime's Attention timed in its own process, for bench/compare.py: one ONNX `Attention`
// node (opset 23) on one head, d = 64, float32, unmasked and causal (is_causal), run by ONNX
// Runtime's CPU kernels on `--threads` intra-op threads; inputs standard normal, made once.
//
//   node bench/ort_attention_time.js [--threads 2] [--repeats 5] N ...
//
// One JSON line per (n, causal): {"n", "causal", "median_ms", "best_ms", "threads", "onnxruntime"},
// the session created and run once before the timed runs. The npm packages are the adapter's
// (adapters/onnxruntime/node_modules: scripts/install-deps.sh installs them).
"use strict";
const path = require("path");
const ortDir = path.join(__dirname, "..", "adapters", "onnxruntime");
const ort = require(path.join(ortDir, "node_modules", "onnxruntime-node"));
const { node, modelBytes, removeDebugLogOnExit } = require(path.join(ortDir, "onnx_graph.js"));
const VERSION = require(path.join(ortDir, "node_modules", "onnxruntime-node", "package.json")).version;

function usage(why) {
  process.stderr.write(`ort_attention_time.js: ${why}\nusage: node bench/ort_attention_time.js [--threads T] [--repeats R] N ...\n`);
  process.exit(2);
}

function parse(argv) {
  const o = { threads: 2, repeats: 5, sizes: [] };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === "--threads" || a === "--repeats") {
      const v = Number(argv[++i]);
      if (!Number.isInteger(v) || v < 1) usage(`${a} needs a whole number >= 1`);
      o[a.slice(2)] = v;
    } else if (/^[0-9]+$/.test(a) && Number(a) >= 1) {
      o.sizes.push(Number(a));
    } else {
      usage(`not an option or a size: ${a}`);
    }
  }
  if (o.sizes.length === 0) usage("no size given");
  return o;
}

function normals(count, seed) {  // Box–Muller over a 32-bit LCG: inputs only, not statistics
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 1) / 4294967297;
  const x = new Float32Array(count);
  for (let i = 0; i < count; ++i) x[i] = Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next());
  return x;
}

async function time(n, causal, o) {
  const d = 64;
  const nodes = [node("Attention", ["Q", "K", "V"], ["Y"], causal ? { is_causal: 1 } : {})];
  const io = (name) => [name, "float32", 4];
  const model = modelBytes(nodes, [io("Q"), io("K"), io("V")], [io("Y")], 23);
  const session = await ort.InferenceSession.create(model, { intraOpNumThreads: o.threads, interOpNumThreads: 1, logSeverityLevel: 3 });
  const feeds = {};
  ["Q", "K", "V"].forEach((name, i) => { feeds[name] = new ort.Tensor("float32", normals(n * d, 7 + i), [1, 1, n, d]); });
  await session.run(feeds);  // the first run plans and allocates
  const times = [];
  for (let r = 0; r < o.repeats; ++r) {
    const t = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  await session.release();
  times.sort((a, b) => a - b);
  const median = times.length % 2 ? times[(times.length - 1) / 2] : (times[times.length / 2 - 1] + times[times.length / 2]) / 2;
  return { n, causal, median_ms: median, best_ms: times[0], threads: o.threads, onnxruntime: VERSION };
}

async function main() {
  const o = parse(process.argv.slice(2));
  for (const n of o.sizes)
    for (const causal of [false, true]) process.stdout.write(`${JSON.stringify(await time(n, causal, o))}\n`);
}

removeDebugLogOnExit();
main().catch((e) => {
  process.stderr.write(`ort_attention_time.js: ${e.message}\n`);
  process.exit(1);
});
