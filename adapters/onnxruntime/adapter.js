#!/usr/bin/env node
// ONNX Runtime as a vl-candidate/1 candidate (docs/candidates.md):
//
//     lessons audit --candidate 'node adapters/onnxruntime/adapter.js'
//
// attention  one ONNX `Attention` node (opset 23; 24 with key lengths), run by ONNX Runtime's CPU
//            kernels: q, k, v (B, H, S, D), GQA by the heads' counts, `scale`, `softcap`,
//            `is_causal` (where ONNX's alignment is the request's; another is given as a boolean
//            mask `And`ed in the graph: `causality`), the request's mask as `attn_mask` (bool:
//            true = may attend; float: added; broadcast here to (B, H, Sq, Sk): ONNX Runtime wants
//            the query axis full), a KV cache (hello "past_kv") as `past_key`/`past_value` with
//            `present_key`/`present_value` out, key lengths (hello "kv_lengths") as
//            `nonpad_kv_seqlen`, the weights or a score stage (hello "qk_matmul_output"), when
//            asked, through `qk_matmul_output_mode`
// mha        torch's nn.MultiheadAttention as a graph around the same node: MatMul + Add for the
//            three projections (in_proj_weight split and transposed here: data movement only),
//            `Attention` on (B, S, H·hd) with q_num_heads = kv_num_heads = H, MatMul + Add for the
//            output projection; torch's masks merged here into one attn_mask (B, 1, Sq, Sk): bool
//            ones inverted (torch: true = blocked), a float one kept with −∞ at the padding
//
// Why Attention and not com.microsoft.MultiHeadAttention: Attention is the ONNX standard, the
// operator ONNX's backend cases (../shared/external/onnx-node-attention) test, so the audit judges
// what a user of the standard gets. It declares float32 and float16: ONNX Runtime's CPU
// Attention has no float64 or bfloat16 kernel. The positional table, the linear forms and the
// backward have no ONNX Runtime operator here: not listed, so their claims are N/A.
"use strict";
const path = require("path");
const readline = require("readline");
const ort = require("onnxruntime-node");
const npy = require(path.join(__dirname, "npy.js"));
const { node, modelBytes, removeDebugLogOnExit } = require(path.join(__dirname, "onnx_graph.js"));

const VERSION = require("onnxruntime-node/package.json").version;
const ORT_TYPE = { float32: "float32", float16: "float16", bool: "bool" };

class Unsupported extends Error {}

const sessions = new Map(); // one session per graph: the same shapes of request reuse it
async function run(key, build, feeds) {
  if (!sessions.has(key)) {
    const options = { intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3 };
    sessions.set(key, await ort.InferenceSession.create(build(), options));
  }
  return sessions.get(key).run(feeds);
}
function tensor(a) {
  return new ort.Tensor(ORT_TYPE[a.dtype], a.dtype === "bool" ? Uint8Array.from(a.data) : a.data, a.shape);
}

// --- attention ------------------------------------------------------------------------------------

// A causal mask as ONNX's attn_mask wants it (true = may attend): query i sees key j ≤ i + offset.
function causalAllowed(sq, sk, offset) {
  const data = new Uint8Array(sq * sk);
  for (let i = 0; i < sq; ++i) for (let j = 0; j < sk; ++j) data[i * sk + j] = j <= i + offset ? 1 : 0;
  return { dtype: "bool", shape: [sq, sk], data };
}

// `a` broadcast NumPy-style to `shape` (ONNX Runtime's Attention wants the mask's query axis full).
function broadcast(a, shape) {
  const rank = shape.length, from = Array(rank - a.shape.length).fill(1).concat(a.shape);
  if (a.shape.length > rank || from.some((d, i) => d !== 1 && d !== shape[i]))
    throw new Error(`the mask of shape (${a.shape}) does not broadcast to (${shape})`);
  const strides = Array(rank).fill(0);
  for (let i = rank - 1, s = 1; i >= 0; s *= from[i], --i) strides[i] = from[i] === 1 ? 0 : s;
  const count = shape.reduce((x, d) => x * d, 1), data = new a.data.constructor(count), at = Array(rank).fill(0);
  for (let n = 0; n < count; ++n) {
    let src = 0;
    for (let i = 0; i < rank; ++i) src += at[i] * strides[i];
    data[n] = a.data[src];
    for (let i = rank - 1; i >= 0 && ++at[i] === shape[i]; --i) at[i] = 0;
  }
  return { dtype: a.dtype, shape, data };
}

// Where query i sits, and who hides the future: with a KV cache (past_key), ONNX's is_causal counts
// from the past's length, the protocol's first_query; with key lengths (nonpad_kv_seqlen, opset
// 24) from L_b − Sq, the protocol's bottom-right; without either, is_causal is top-left. Any other
// alignment goes in as a boolean mask (`causalAllowed`), `And`ed in the graph with the request's.
function causality(attrs, sq, sk, past, lengths) {
  if (!attrs.causal) return {};
  const bottomRight = attrs.alignment === "bottom_right";
  if (past || (lengths && bottomRight) || (!lengths && (!bottomRight || sq === sk))) return { own: true };
  return { mask: causalAllowed(sq, sk, bottomRight ? sk - sq : 0) };
}

async function attention(inputs, attrs, outputs) {
  const { q, k, v } = inputs;
  const dtype = q.dtype;
  if (!(dtype in { float32: 1, float16: 1 })) throw new Unsupported(`ONNX Runtime's CPU Attention has no ${dtype} kernel`);
  const past = inputs.past_key;  // hello "past_kv": keys 0 … P − 1 here, the rest in k
  const lengths = attrs.kv_lengths;  // hello "kv_lengths": nonpad_kv_seqlen
  if (past && lengths) throw new Error("past_key and kv_lengths together: ONNX has one cache or the other");
  const mask = inputs.mask;
  const [B, H, sq] = q.shape, sk = k.shape[2] + (past ? past.shape[2] : 0);
  const { own, mask: causalMask } = causality(attrs, sq, sk, past, lengths);
  // One qk_matmul_output: the weights (mode 3) or the stage asked (hello "qk_matmul_output").
  const scores = "scores" in outputs, weights = "weights" in outputs;
  if (scores && weights && attrs.qk_matmul_output_mode !== 3) throw new Unsupported("one node gives one qk_matmul_output stage");
  const a = scores ? { qk_matmul_output_mode: attrs.qk_matmul_output_mode } : weights ? { qk_matmul_output_mode: 3 } : {};
  if (own) a.is_causal = 1;
  if (attrs.scale !== null && attrs.scale !== undefined) a.scale = { float: attrs.scale };
  if (attrs.softcap) a.softcap = { float: attrs.softcap };
  const feeds = { Q: tensor(q), K: tensor(k), V: tensor(v) };
  const graphInputs = [["Q", dtype, 4], ["K", dtype, 4], ["V", dtype, 4]];
  const nodes = [];
  let maskName = "";
  if (causalMask) {
    feeds.C = tensor(causalMask);
    graphInputs.push(["C", "bool", 2]);
    maskName = "C";
  }
  if (mask) {
    feeds.M = tensor(broadcast(mask, [B, H, sq, sk]));
    graphInputs.push(["M", mask.dtype, 4]);
    if (maskName) { // both: hidden if either hides (bool: And; float: −∞ where the causal mask hides)
      if (mask.dtype === "bool") nodes.push(node("And", ["M", "C"], ["MC"]));
      else {
        feeds.NEG = new ort.Tensor(dtype, dtype === "float16" ? Uint16Array.from([0xfc00]) : Float32Array.from([-Infinity]), []);
        graphInputs.push(["NEG", dtype, 0]);
        nodes.push(node("Where", ["C", "M", "NEG"], ["MC"]));
      }
      maskName = "MC";
    } else {
      maskName = "M";
    }
  }
  const nodeInputs = ["Q", "K", "V", maskName];
  if (past) {
    Object.assign(feeds, { PK: tensor(past), PV: tensor(inputs.past_value) });
    graphInputs.push(["PK", dtype, 4], ["PV", dtype, 4]);
    nodeInputs.push("PK", "PV");
  }
  if (lengths) {
    if (lengths.length !== B) throw new Error(`kv_lengths has ${lengths.length} entries for ${B} batches`);
    feeds.L = new ort.Tensor("int64", BigInt64Array.from(lengths.map(BigInt)), [B]);
    graphInputs.push(["L", "int64", 1]);
    nodeInputs.push("", "", "L");
  }
  const qk = scores || weights;
  const nodeOutputs = ["Y", past ? "PKO" : "", past ? "PVO" : "", qk ? "W" : ""];
  while (nodeOutputs[nodeOutputs.length - 1] === "") nodeOutputs.pop();
  nodes.push(node("Attention", nodeInputs, nodeOutputs, a));
  const graphOutputs = nodeOutputs.filter((o) => o).map((o) => [o, dtype, 4]);
  const opset = lengths ? 24 : 23;  // nonpad_kv_seqlen came with opset 24
  const key = JSON.stringify(["attention", dtype, a, graphInputs, nodeInputs, nodeOutputs, opset]);
  const r = await run(key, () => modelBytes(nodes, graphInputs, graphOutputs, opset), feeds);
  const out = { y: r.Y };
  if (weights) out.weights = r.W;
  if (scores) out.scores = r.W;
  if (past) Object.assign(out, { present_key: r.PKO, present_value: r.PVO });
  return out;
}

// --- mha ------------------------------------------------------------------------------------------

// Rows r0 … r0 + n − 1 of a (rows, d) matrix, transposed to (d, n): x @ Wᵀ as MatMul(x, Wᵀ).
function transposedRows(w, r0, n, dtype) {
  const d = w.shape[1];
  const data = new w.data.constructor(d * n);
  for (let i = 0; i < n; ++i) for (let j = 0; j < d; ++j) data[j * n + i] = w.data[(r0 + i) * d + j];
  return new ort.Tensor(dtype, data, [d, n]);
}
function slice1(b, r0, n, dtype) {
  return new ort.Tensor(dtype, b.data.slice(r0, r0 + n), [n]);
}

async function mha(inputs, attrs, outputs) {
  const { query, key, value } = inputs;
  const dtype = query.dtype;
  if (!(dtype in { float32: 1, float16: 1 })) throw new Unsupported(`ONNX Runtime's CPU Attention has no ${dtype} kernel`);
  const [B, sq, d] = query.shape, sk = key.shape[1], h = Number(attrs.num_heads);
  const W = inputs.in_proj_weight, b = inputs.in_proj_bias;
  const feeds = { x_q: tensor(query), x_k: tensor(key), x_v: tensor(value),
                  w_q: transposedRows(W, 0, d, dtype), w_k: transposedRows(W, d, d, dtype), w_v: transposedRows(W, 2 * d, d, dtype),
                  b_q: slice1(b, 0, d, dtype), b_k: slice1(b, d, d, dtype), b_v: slice1(b, 2 * d, d, dtype),
                  w_o: transposedRows(inputs.out_proj_weight, 0, d, dtype), b_o: slice1(inputs.out_proj_bias, 0, d, dtype) };
  const graphInputs = [["x_q", dtype, 3], ["x_k", dtype, 3], ["x_v", dtype, 3], ["w_q", dtype, 2], ["w_k", dtype, 2], ["w_v", dtype, 2],
                       ["b_q", dtype, 1], ["b_k", dtype, 1], ["b_v", dtype, 1], ["w_o", dtype, 2], ["b_o", dtype, 1]];
  // torch's masks (true = blocked; key_padding_mask (B, Sk), true = padding) as one ONNX mask
  // (B, 1, Sq, Sk), true = may attend.
  const am = inputs.attn_mask, kpm = inputs.key_padding_mask;
  if (am && (am.shape.length !== 2 || am.shape[0] !== sq || am.shape[1] !== sk))
    throw new Error(`attn_mask of shape (${am.shape}): the protocol's is (Sq, Sk) = (${sq}, ${sk})`);
  if (kpm && (kpm.shape.length !== 2 || kpm.shape[0] !== B || kpm.shape[1] !== sk))
    throw new Error(`key_padding_mask of shape (${kpm.shape}): the protocol's is (B, Sk) = (${B}, ${sk})`);
  let maskName = "";
  if (am && am.dtype !== "bool") { // torch's float mask (Sq, Sk), added; padding at −∞ in it
    const minusInf = dtype === "float16" ? 0xfc00 : -Infinity; // float16 travels as its bits
    const added = new am.data.constructor(B * sq * sk);
    for (let n = 0; n < B; ++n)
      for (let i = 0; i < sq; ++i)
        for (let j = 0; j < sk; ++j) added[(n * sq + i) * sk + j] = kpm && kpm.data[n * sk + j] ? minusInf : am.data[i * sk + j];
    feeds.m = new ort.Tensor(dtype, added, [B, 1, sq, sk]);
    graphInputs.push(["m", dtype, 4]);
    maskName = "m";
  } else if (am || kpm) {
    const allowed = new Uint8Array(B * sq * sk);
    for (let n = 0; n < B; ++n)
      for (let i = 0; i < sq; ++i)
        for (let j = 0; j < sk; ++j)
          allowed[(n * sq + i) * sk + j] = (am && am.data[i * sk + j]) || (kpm && kpm.data[n * sk + j]) ? 0 : 1;
    feeds.m = new ort.Tensor("bool", allowed, [B, 1, sq, sk]);
    graphInputs.push(["m", "bool", 4]);
    maskName = "m";
  }
  const weights = "weights" in outputs;
  const a = weights ? { q_num_heads: h, kv_num_heads: h, qk_matmul_output_mode: 3 } : { q_num_heads: h, kv_num_heads: h };
  if (attrs.causal) a.is_causal = 1;
  const nodes = [
    node("MatMul", ["x_q", "w_q"], ["pq"]), node("Add", ["pq", "b_q"], ["Q"]),
    node("MatMul", ["x_k", "w_k"], ["pk"]), node("Add", ["pk", "b_k"], ["K"]),
    node("MatMul", ["x_v", "w_v"], ["pv"]), node("Add", ["pv", "b_v"], ["V"]),
    node("Attention", ["Q", "K", "V", maskName], weights ? ["O", "", "", "W"] : ["O"], a),
    node("MatMul", ["O", "w_o"], ["po"]), node("Add", ["po", "b_o"], ["Y"]),
  ];
  const r = await run(JSON.stringify(["mha", dtype, a, graphInputs]),
                      () => modelBytes(nodes, graphInputs, [["Y", dtype, 3]].concat(weights ? [["W", dtype, 4]] : [])), feeds);
  return weights ? { y: r.Y, weights: r.W } : { y: r.Y };
}

// --- the protocol ---------------------------------------------------------------------------------

const OPS = { attention, mha };

async function answer(request) {
  const id = request.id;
  if (request.op === "hello") {
    if (request.protocol !== "vl-candidate/1") return { id, ok: false, error: `protocol ${request.protocol}: this adapter speaks vl-candidate/1` };
    return { id, ok: true, name: `onnxruntime-${VERSION}`, ops: Object.keys(OPS), attrs: ["dtype", "float_attn_mask", "kv_lengths", "past_kv", "qk_matmul_output"],
             dtypes: ["float32", "float16"] };
  }
  const op = OPS[request.op];
  if (!op) return { id, ok: false, error: `unsupported: no operation ${request.op}` };
  const attrs = request.attrs || {};
  if (attrs.dtype && !(attrs.dtype in { float32: 1, float16: 1 })) return { id, ok: false, error: `unsupported: no ${attrs.dtype} kernel` };
  try {
    const inputs = {};
    for (const [name, file] of Object.entries(request.inputs || {})) inputs[name] = npy.load(file);
    const wanted = request.outputs || {};
    const produced = await op(inputs, attrs, wanted);
    for (const [name, file] of Object.entries(wanted)) {
      const t = produced[name];
      if (!t) return { id, ok: false, error: `the adapter produced no output ${name}` };
      npy.save(file, t.type, t.dims, t.data);
    }
    return { id, ok: true };
  } catch (e) {
    if (e instanceof Unsupported) return { id, ok: false, error: `unsupported: ${e.message}` };
    process.stderr.write(`${e.stack}\n`);
    return { id, ok: false, error: `${e.name}: ${e.message}` };
  }
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let reply;
    try {
      reply = await answer(JSON.parse(line));
    } catch (e) {
      reply = { id: null, ok: false, error: `not JSON: ${e.message}` };
    }
    process.stdout.write(`${JSON.stringify(reply)}\n`);
  }
}

removeDebugLogOnExit();
main();
