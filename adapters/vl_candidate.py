"""vl-candidate/1 from the candidate's side (docs/candidates.md): an adapter is a few functions.

    from vl_candidate import serve, Unsupported

    def attention(inputs, attrs, wanted):      # inputs: name -> numpy array (read from .npy)
        ...                                    # attrs: the request's attrs; wanted: output names
        return {"y": y, "weights": w}          # only the names in `wanted` are written

    serve("my-attention", {"attention": attention})

serve() answers the hello, then one reply line per request line until its stdin ends. Each output
is written to the path the suite gave, as .npy, in the request's dtype (its "dtype" attr, else the
dtype of its first floating input: the protocol's rule), C order. bfloat16, which NumPy lacks,
travels as the uint16 bits: this helper hands the functions its numbers as float32 (exactly) and
writes their outputs back as bfloat16 bits (rounded to nearest even); attrs["dtype"] says
"bfloat16", so a function can compute in it (torch.bfloat16). Raise Unsupported("why") for an operation or an option you
lack (the claim is then not applicable), InvalidInput("why") for an input you refuse as
inconsistent (a layer whose widths do not fit, where torch raises); any other exception is reported as an error, with its
traceback on stderr (the suite shows the candidate's stderr on error). stdout carries the protocol
only: print() in an adapter goes to stderr.
"""
import io
import json
import math
import os
import sys
import traceback

import numpy as np

PROTOCOL = "vl-candidate/1"


class Unsupported(Exception):
    """The candidate lacks this operation or option: the claim is not applicable to it."""


class InvalidInput(Exception):
    """The candidate refuses this input as inconsistent (a layer whose sub-layer returns another
    width than the residual's, as torch raises): a claim that requires the refusal counts it, any
    other reports an error."""


def bfloat16_to_float32(bits):
    """bfloat16 bits (uint16) -> the float32 numbers they are: the upper half of a float32."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


def float32_to_bfloat16(x):
    """float32 -> bfloat16 bits (uint16), rounded to nearest, ties to even; NaN a quiet NaN."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    bits = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), bits)


def _dtype_of(inputs, attrs):
    if "dtype" in attrs:  # sent to a candidate whose hello lists "dtypes": the request's precision
        if attrs["dtype"] == "bfloat16":
            return "bfloat16"
        return np.dtype({"float64": np.float64, "float32": np.float32, "float16": np.float16}[attrs["dtype"]])
    for a in inputs.values():
        if a.dtype.kind == "f":
            return a.dtype
    return np.dtype(np.float64)


# np.load (NumPy 1.24, Debian 12's) parses each file's header with Python's tokenizer: numpy/lib/format.py
# filters format 1.0 and 2.0 headers for Python 2's long-integer suffixes. That is ~0.13 ms a file,
# more than half of this helper's time in a whole audit, which sends ~80,000 small arrays whose few
# distinct headers repeat. So NumPy's own header reader parses each distinct header once, and every
# file's data is read in one call into a writable buffer: the same dtype, shape, order and values as
# np.load's. Anything else (another format version, a zero-size or object dtype, a short file) goes
# to np.load, which reads it or says why not. The table is bounded (one entry per distinct header).
_HEADERS = {}  # the bytes from the version to the header's end -> (shape, fortran_order, dtype)
_HEADERS_KEPT = 4096
_HEADER_READERS = {1: (2, np.lib.format.read_array_header_1_0), 2: (4, np.lib.format.read_array_header_2_0)}


def _remember(table, key, value):
    """table[key] = value, the table emptied first when it holds _HEADERS_KEPT entries (bounded)."""
    if len(table) >= _HEADERS_KEPT:
        table.clear()
    table[key] = value
    return value


def load_npy(path):
    """The array in the .npy file at path, as np.load(path, allow_pickle=False) reads it."""
    with open(path, "rb") as f:
        data = bytearray(os.fstat(f.fileno()).st_size)
        got = f.readinto(data)
    npy = got == len(data) and len(data) > 8 and data[:6] == np.lib.format.MAGIC_PREFIX and data[7] == 0
    major = data[6] if npy else None
    if major in _HEADER_READERS:
        width, reader = _HEADER_READERS[major]
        end = 8 + width + int.from_bytes(data[8:8 + width], "little")
        key = bytes(data[6:end])
        header = _HEADERS.get(key)
        if header is None and end <= len(data):
            try:
                header = reader(io.BytesIO(key[2:]))
            except ValueError:  # np.load below says what is wrong with it
                pass
            else:
                _remember(_HEADERS, key, header)
        if header is not None:
            shape, fortran, dtype = header
            count = math.prod(shape)
            if not dtype.hasobject and dtype.itemsize > 0 and len(data) - end >= count * dtype.itemsize:
                flat = np.frombuffer(data, dtype=dtype, count=count, offset=end)
                return flat.reshape(shape[::-1]).transpose() if fortran else flat.reshape(shape)
    return np.load(path, allow_pickle=False)


# np.save costs ~23 µs a small file in Python (its header built and formatted each time, the file
# opened buffered, ~14 system calls); an audit writes ~15,000 outputs. save_npy writes the same
# bytes: NumPy's own header writer makes each distinct (dtype, shape)'s header once (bounded
# table), then the header and the array's buffer go to a file opened unbuffered (~8 µs). Anything
# else (a dtype other than bool, integer or float, an array not C-contiguous) goes to np.save.
_SAVED_HEADERS = {}  # (dtype.str, shape) -> the header bytes, format 1.0


def save_npy(path, a):
    """np.save(path, a, allow_pickle=False), in fewer steps for a C-contiguous array of numbers."""
    a = np.asanyarray(a)
    if not isinstance(path, (str, os.PathLike)) or not a.flags.c_contiguous or a.dtype.kind not in "biuf" or a.dtype.itemsize == 0:
        np.save(path, a, allow_pickle=False)  # a file object, another order, another dtype
        return
    path = os.fspath(path)
    if not path.endswith(".npy"):  # as np.save names it
        path += ".npy"
    key = (a.dtype.str, a.shape)  # C order, numbers: the header depends on nothing else
    header = _SAVED_HEADERS.get(key)
    if header is None:
        out = io.BytesIO()  # 1.0, as np.save writes it: a number dtype's header, ≤ 32 axes, is far below 1.0's 64 KiB
        np.lib.format.write_array_header_1_0(out, np.lib.format.header_data_from_array_1_0(a))
        header = _remember(_SAVED_HEADERS, key, out.getvalue())
    with open(path, "wb", buffering=0) as f:
        for part in (memoryview(header), memoryview(a.reshape(-1).view(np.uint8))):
            while part:  # a raw file's write may take fewer bytes than given
                part = part[f.write(part):]


def _answer(request, ops):
    rid = request.get("id")
    op = request.get("op")
    if op == "hello":
        if request.get("protocol") != PROTOCOL:
            return {"id": rid, "ok": False, "error": f"protocol {request.get('protocol')!r}: this adapter speaks {PROTOCOL}"}
        return None  # answered by serve(), which knows the name
    if op not in ops:
        return {"id": rid, "ok": False, "error": f"unsupported: no operation {op!r}"}
    inputs = {name: load_npy(path) for name, path in request.get("inputs", {}).items()}
    if request.get("attrs", {}).get("dtype") == "bfloat16":  # its floating arrays came as uint16 bits
        inputs = {name: bfloat16_to_float32(a) if a.dtype == np.uint16 else a for name, a in inputs.items()}
    outputs = request.get("outputs", {})
    try:
        produced = ops[op](inputs, request.get("attrs", {}), set(outputs))
    except Unsupported as e:
        return {"id": rid, "ok": False, "error": f"unsupported: {e}"}
    except InvalidInput as e:
        return {"id": rid, "ok": False, "error": f"invalid: {e}"}
    dtype = _dtype_of(inputs, request.get("attrs", {}))
    for name, path in outputs.items():
        if name not in produced:
            return {"id": rid, "ok": False, "error": f"the adapter produced no output {name!r}"}
        if dtype == "bfloat16":
            save_npy(path, float32_to_bfloat16(np.asarray(produced[name], dtype=np.float32)))
        else:
            save_npy(path, np.ascontiguousarray(np.asarray(produced[name]), dtype=dtype))
    return {"id": rid, "ok": True}


def serve(name, ops, attrs=(), dtypes=None):
    """Answer vl-candidate/1 requests on stdin until it ends. ops: request op -> function;
    attrs: the optional attrs the functions implement (the hello lists them: "kv_lengths",
    "window", "first_query", "positions", "float_attn_mask"; the suite sends none that is not listed); dtypes: the precisions
    the functions compute in, in the inputs' own dtype ("float64", "float32", ...; None: the
    hello lists none, and the suite sends float64 only)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # print() in an adapter must not corrupt the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as e:
            reply = {"id": None, "ok": False, "error": f"not JSON: {e}"}
        else:
            try:
                reply = _answer(request, ops)
                if reply is None:
                    # This helper reads a request's "dtype" attr (_dtype_of): with dtypes, it says so.
                    listed = sorted(set(attrs) | ({"dtype"} if dtypes else set()))
                    reply = {"id": request.get("id"), "ok": True, "name": name, "ops": sorted(ops), "attrs": listed}
                    if dtypes is not None:
                        reply["dtypes"] = list(dtypes)
            except Exception as e:  # reported to the suite, never a silent pass
                traceback.print_exc(file=sys.stderr)
                reply = {"id": request.get("id"), "ok": False, "error": f"{type(e).__name__}: {e}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()
