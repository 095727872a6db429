"""Record golden files in reference_outputs/manifest.json (path -> provenance + sha256).

Every reference script calls `record(...)` for each file it writes. The audit (lessons audit)
recomputes each sha256 and fails, naming the file, when a golden does not match its entry.
Run with Debian's interpreter: /usr/bin/python3.
"""
import hashlib
import json
import os
import platform
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN_DIR = os.path.join(ROOT, "reference_outputs")
MANIFEST = os.path.join(GOLDEN_DIR, "manifest.json")


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def library_versions(*modules):
    """Versions of the interpreter and of each imported module that produced a golden."""
    out = {"python": platform.python_version()}
    for m in modules:
        out[m.__name__] = getattr(m, "__version__", "unknown")
    return out


def record(relpath, generator, libraries, seed=None, note=None):
    """Add or replace the manifest entry of reference_outputs/<relpath> (a generated golden)."""
    path = os.path.join(GOLDEN_DIR, relpath)
    if not os.path.isfile(path):
        sys.exit(f"manifest.py: {path}: no such golden file")
    manifest = load()
    entry = {
        "kind": "generated",
        "generator": generator,
        "libraries": libraries,
        "sha256": sha256_of(path),
    }
    if seed is not None:
        entry["seed"] = seed
    if note:
        entry["note"] = note
    manifest["files"][relpath] = entry
    save(manifest)


def load():
    if not os.path.exists(MANIFEST):
        return {"files": {}}
    with open(MANIFEST) as f:
        return json.load(f)


def save(manifest):
    manifest["files"] = dict(sorted(manifest["files"].items()))
    tmp = MANIFEST + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")
    os.replace(tmp, MANIFEST)


def record_documented(relpath, source, listing, note=None):
    """Add or replace the entry of a documented output: text copied verbatim from a lesson."""
    path = os.path.join(GOLDEN_DIR, relpath)
    if not os.path.isfile(path):
        sys.exit(f"manifest.py: {path}: no such golden file")
    manifest = load()
    entry = {"kind": "documented", "source": source, "listing": listing, "sha256": sha256_of(path)}
    if note:
        entry["note"] = note
    manifest["files"][relpath] = entry
    save(manifest)
