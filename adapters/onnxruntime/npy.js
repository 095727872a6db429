// NumPy's .npy files, as vl-candidate/1 carries arrays: read '<f8', '<f4', '<f2', '|b1' (version
// 1.0 to 3.0, C order), write '<f4' and '<f2' (version 1.0, as np.save writes them).
//
// Written here because no maintained npm package reads and writes .npy in Node with float16 and
// bool (npyjs reads only, through fetch); the format is a short header and the raw elements.
"use strict";
const fs = require("fs");

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // "\x93NUMPY"

// A .npy file as {dtype: "float64" | "float32" | "float16" | "bool", shape, data}: data a
// Float64Array, Float32Array, Uint16Array (float16's bits, as ONNX Runtime takes them) or
// Uint8Array (bool). Throws an Error naming the file for anything else.
function load(path) {
  const b = fs.readFileSync(path);
  const fail = (why) => { throw new Error(`${path}: not a .npy this adapter reads: ${why}`); };
  if (b.length < 10 || !b.subarray(0, 6).equals(MAGIC)) fail("no \\x93NUMPY magic");
  const major = b[6];
  if (major < 1 || major > 3) fail(`format version ${major}.${b[7]}`);
  if (major > 1 && b.length < 12) fail("truncated header");
  const headerLength = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  if (b.length < start + headerLength) fail("truncated header");
  const header = b.subarray(start, start + headerLength).toString("latin1");
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const order = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) fail(`malformed header ${JSON.stringify(header)}`);
  if (order[1] !== "False") fail("Fortran order");
  const dims = shape[1].split(",").map((s) => s.trim()).filter((s) => s.length).map(Number);
  const count = dims.reduce((a, d) => a * d, 1);
  const types = { "<f8": ["float64", Float64Array, 8], "<f4": ["float32", Float32Array, 4], "<f2": ["float16", Uint16Array, 2],
                  "|b1": ["bool", Uint8Array, 1] };
  const t = types[descr[1]];
  if (!t) fail(`dtype ${descr[1]}`);
  const offset = start + headerLength;
  if (b.length - offset !== count * t[2]) fail(`${b.length - offset} data bytes for shape (${dims}) of ${descr[1]}`);
  const bytes = b.buffer.slice(b.byteOffset + offset, b.byteOffset + offset + count * t[2]); // aligned copy
  return { dtype: t[0], shape: dims, data: new t[1](bytes) };
}

// Writes data (Float32Array as '<f4', Uint16Array of float16 bits as '<f2') of the given shape.
function save(path, dtype, shape, data) {
  const descr = { float32: "<f4", float16: "<f2" }[dtype];
  if (!descr) throw new Error(`${path}: this adapter writes float32 and float16, not ${dtype}`);
  const dims = shape.length === 1 ? `${shape[0]},` : shape.join(", ");
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${dims}), }`;
  const total = 10 + header.length + 1;
  header += " ".repeat((64 - (total % 64)) % 64) + "\n";
  const head = Buffer.alloc(10);
  MAGIC.copy(head, 0);
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(path, Buffer.concat([head, Buffer.from(header, "latin1"), Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

module.exports = { load, save };
