// ONNX graphs built in memory for ONNX Runtime (onnx-proto's generated classes): the adapter's
// (adapter.js) and the benchmark's (bench/ort_attention_time.js). And the one file ONNX Runtime
// 1.30 leaves behind.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { onnx } = require("onnx-proto");

const ELEM = { float32: onnx.TensorProto.DataType.FLOAT, float16: onnx.TensorProto.DataType.FLOAT16, bool: onnx.TensorProto.DataType.BOOL,
               int64: onnx.TensorProto.DataType.INT64 };

function valueInfo(name, dtype, rank) {
  const dim = Array.from({ length: rank }, (_, i) => ({ dimParam: `${name}_${i}` }));
  return onnx.ValueInfoProto.create({ name, type: { tensorType: { elemType: ELEM[dtype], shape: { dim } } } });
}
// Attributes {name: integer | {float: x}}: an INT, or a FLOAT (2.0 is a FLOAT when the operator says so).
function attributes(a) {
  const A = onnx.AttributeProto.AttributeType;
  return Object.entries(a).map(([name, v]) => typeof v === "object" ? onnx.AttributeProto.create({ name, type: A.FLOAT, f: v.float })
                                                                    : onnx.AttributeProto.create({ name, type: A.INT, i: v }));
}
function node(opType, input, output, a = {}) {
  return onnx.NodeProto.create({ opType, input, output, attribute: attributes(a) });
}
// inputs, outputs: [name, dtype, rank]
function modelBytes(nodes, inputs, outputs, opset = 23) {
  const graph = onnx.GraphProto.create({ name: "vl", node: nodes, input: inputs.map((i) => valueInfo(...i)),
                                         output: outputs.map((o) => valueInfo(...o)) });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 10, opsetImport: [{ domain: "", version: opset }], graph })).finish();
}

// ONNX Runtime 1.30's Linux library writes an empty mat-debug-<pid>.log to the temporary folder
// once a session runs, and leaves it: a process that used it removes that file (its own
// process's, only if empty) when it ends.
function removeDebugLogOnExit() {
  process.on("exit", () => {
    const debugLog = path.join(os.tmpdir(), `mat-debug-${process.pid}.log`);
    try {
      if (fs.statSync(debugLog).size === 0) fs.unlinkSync(debugLog);
    } catch (e) {
      if (e.code !== "ENOENT") process.stderr.write(`${debugLog}: ${e.message}\n`);
    }
  });
}

module.exports = { ELEM, valueInfo, attributes, node, modelBytes, removeDebugLogOnExit };
