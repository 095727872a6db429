#!/usr/bin/python3
"""The conformance matrix page, from this build's audits (issue 19; docs/candidates.md).

    write_conformance_page(lessons, source, out, pages, plain_audit)   (called by build_docs.py)

Five implementations: `plain` (the audit build_docs.py already has), `fused`, the NumPy adapter,
the torch adapter and the ONNX Runtime adapter (`lessons audit --candidate ...`), each audited
with `--json` into OUT/conformance/ in every precision it computes in; the four are run side by side. With VL_CONFORMANCE_AUDITS=DIR (ctest sets it
to the build folder, where the candidate tests keep audit-numpy.json, audit-torch.json and
audit-onnxruntime.json) an
audit-NAME.json already there is used instead of running that audit again.

An audit that exits 1 is shown as it is (the torch adapter fails on purpose: its real departures);
the build fails if an audit could not run (any other exit status), wrote no JSON, or reports a
claim or listing as ERROR. The page, PAGES/conformance.md, ends with what ran: the commit, each
implementation's command, and the Python, NumPy and torch the adapters ran on.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance_matrix  # noqa: E402

PYTHON = "/usr/bin/python3"  # the adapters' interpreter: Debian's, with its numpy and torch


class ConformanceError(Exception):
    pass


def implementations(source: Path):
    """(name, the audit's arguments after `lessons audit --root SOURCE`) in column order."""
    numpy = ["--candidate", f"{PYTHON} {source / 'adapters' / 'numpy_reference.py'}"]
    torch = ["--candidate", f"{PYTHON} {source / 'adapters' / 'torch_reference.py'}"]
    # Each audit judges every precision its implementation computes in (lessons audit's default):
    # ours float64, float32, bfloat16 and float16 (the last two stored, float32 arithmetic), the
    # NumPy adapter float64, float32 and float16, the torch adapter float64, float32 and bfloat16;
    # a column per precision.
    onnxruntime = ["--candidate", f"node {source / 'adapters' / 'onnxruntime' / 'adapter.js'}"]
    return [("fused", ["--backend", "fused"]), ("numpy", numpy), ("torch", torch), ("onnxruntime", onnxruntime)]


def check_audit(name, path: Path, status=None, log=""):
    if status is not None and status not in (0, 1):
        raise ConformanceError(f"the {name} audit could not run (exit status {status}): {log[-1500:]}")
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ConformanceError(f"the {name} audit wrote no readable JSON ({path}: {e}) {log[-1500:]}")
    errors = [f"{item['id']}: {item.get('why', '')}" for lesson in report.get("lessons", [])
              for item in lesson.get("claims", []) + lesson.get("listings", []) if item.get("status") == "error"]
    if errors:
        raise ConformanceError(f"the {name} audit ({path}) reports ERROR: " + "; ".join(errors[:5]))
    return report


def versions(source: Path):
    code = ("import sys, numpy, torch; "
            "print(f'Python {sys.version.split()[0]}, NumPy {numpy.__version__}, torch {torch.__version__}')")
    run = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True)
    python = run.stdout.strip() if run.returncode == 0 else f"(not known: {run.stderr.strip()[-200:]})"
    node = subprocess.run(["node", "-e", "process.stdout.write(`Node ${process.version}, ONNX Runtime ` + "
                           "require('onnxruntime-node/package.json').version)"],
                          capture_output=True, text=True, cwd=source / "adapters" / "onnxruntime")
    return python + "; " + (node.stdout.strip() if node.returncode == 0 else f"(ONNX Runtime not known: {node.stderr.strip()[-200:]})")


def write_conformance_page(lessons, source: Path, out: Path, pages: Path, plain_audit: Path):
    """Runs (or reuses) the audits and writes PAGES/conformance.md; raises ConformanceError."""
    folder = out / "conformance"
    folder.mkdir(parents=True, exist_ok=True)
    reuse = Path(os.environ["VL_CONFORMANCE_AUDITS"]) if os.environ.get("VL_CONFORMANCE_AUDITS") else None
    running, paths = {}, {"plain": plain_audit}
    for name, args in implementations(source):
        given = reuse / f"audit-{name}.json" if reuse else None
        paths[name] = folder / f"audit-{name}.json"
        if given and given.is_file():
            paths[name].write_bytes(given.read_bytes())
            print(f"conformance: using the {name} audit in {given}")
            continue
        if not lessons:
            raise ConformanceError(f"give --lessons: the {name} audit has to run")
        paths[name].unlink(missing_ok=True)
        log = open(folder / f"audit-{name}.log", "w")
        running[name] = (subprocess.Popen([str(lessons), "audit", "--root", str(source), *args, "--json", str(paths[name])],
                                          cwd=source, stdout=log, stderr=subprocess.STDOUT), log)
    for name, (proc, log) in running.items():
        status = proc.wait()
        log.close()
        print(f"conformance: the {name} audit exited {status}")
        running[name] = status
    audits = []
    for name in ["plain"] + [n for n, _ in implementations(source)]:
        log = (folder / f"audit-{name}.log").read_text() if (folder / f"audit-{name}.log").exists() else ""
        check_audit(name, paths[name], running.get(name), log)
        audits += conformance_matrix.load_all(str(paths[name]))
    text = conformance_matrix.page(audits)
    commands = {"plain": "lessons audit --backend plain", **{n: "lessons audit " + " ".join(
        f'"{a}"' if " " in a else a for a in args) for n, args in implementations(source)}}
    text += ("\n## What ran\n\n"
             f"Built by `docs/build_docs.py` from this build's audits (none is a committed snapshot): commit "
             f"{audits[0][2].get('commit', '?')}, {audits[0][2].get('date', '?')}; the adapters on {versions(source)}.\n\n"
             + "".join(f"- **{name}**: `{commands[name]} --json`\n"
                       for name in ["plain"] + [n for n, _ in implementations(source)]))
    page = pages / "conformance.md"
    page.write_text(text)
    return page


if __name__ == "__main__":
    print(__doc__)
