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
import re
import subprocess
import sys
import tempfile
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


def audit_arguments(name, args):
    """The audit's arguments for an implementation: the fused backend's audit is of the claims
    about the computation only, the page's rows (its claims about our own code run on our code, as
    in plain's audit), the same command as ctest's audit_all_fused, whose JSON the docs test reuses."""
    return args + (["--computation-only"] if name == "fused" else [])


ONNX_CASES = "onnx-node-attention"  # ../shared/external/: ONNX's backend cases (Attention opsets 23-26, LinearAttention 27)


def onnx_cases_section(lessons, source: Path, env=None):
    """ONNX's backend cases through each implementation (`lessons onnx DIR` with --backend or
    --candidate): the counts, every FAIL with its line, and the SKIPs grouped by their reason."""
    cases = source.parent / "shared" / "external" / ONNX_CASES
    if not cases.is_dir() or not lessons:
        return f"\n## ONNX's backend cases\n\nNot run: ../shared/external/{ONNX_CASES} is not on this machine.\n"
    out = ["", "## ONNX's backend cases", "",
           f"ONNX's own node tests ({ONNX_CASES}: the model, its inputs and ONNX's expected outputs), run through each "
           "implementation by `lessons onnx DIR` with the same rules for all: a case passes when every output it defines is "
           "within ONNX's tolerance; one the implementation cannot run is a SKIP with the reason, never a pass.", "",
           "| implementation | passed | failed | skipped |", "| --- | --- | --- | --- |"]
    details = []
    for name, args in [("plain", ["--backend", "plain"])] + implementations(source):
        try:
            run = subprocess.run([str(lessons), "onnx", str(cases), *args], capture_output=True, text=True, cwd=source, timeout=600,
                                 env=env)
        except subprocess.TimeoutExpired:
            raise ConformanceError(f"lessons onnx through {name} ran past 600 s")
        lines = run.stdout.splitlines()
        total = next((line for line in reversed(lines) if " passed, " in line), None)
        if run.returncode not in (0, 1) or total is None:
            raise ConformanceError(f"lessons onnx through {name} could not run (exit status {run.returncode}): {run.stderr[-800:]}")
        counts = [int(x.split()[0]) for x in total.split(", ")] + [0]
        out.append(f"| {name} | {counts[0]} | {counts[1]} | {counts[2]} |")
        failures = [line for line in lines if line.startswith("FAIL ")]
        reasons = {}
        for line in lines:
            if line.startswith("SKIP "):
                why = re.sub(r"request \d+", "request N", line.split(": ", 1)[1])
                reasons[why] = reasons.get(why, 0) + 1
        if failures or reasons:
            details.append(f"- **{name}**: " + "; ".join(
                [f"FAIL `{line[5:].split(':', 1)[0]}` ({line.split(': ', 1)[1][:160]})" for line in failures] +
                [f"{n} skipped: {why}" for why, n in sorted(reasons.items(), key=lambda x: -x[1])]))
    return "\n".join(out + ["", "Why each case did not pass:", ""] + details) + "\n"


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
    # The audits and ONNX's cases run with a temporary folder of their own, removed after them:
    # ONNX Runtime writes a session-id file (.ses) into its temporary folder and leaves it there.
    with tempfile.TemporaryDirectory(prefix="vl-conformance-") as tmp:
        return _write_conformance_page(lessons, source, out, pages, plain_audit, dict(os.environ, TMPDIR=tmp))


def _write_conformance_page(lessons, source: Path, out: Path, pages: Path, plain_audit: Path, env):
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
        running[name] = (subprocess.Popen([str(lessons), "audit", "--root", str(source), *audit_arguments(name, args), "--json",
                                           str(paths[name])],
                                          cwd=source, stdout=log, stderr=subprocess.STDOUT, env=env), log)
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
    text = conformance_matrix.page(audits) + onnx_cases_section(lessons, source, env)
    quoted = lambda args: " ".join(f'"{a}"' if " " in a else a for a in args)
    selectors = [("plain", ["--backend", "plain"])] + implementations(source)
    text += ("\n## What ran\n\n"
             f"Built by `docs/build_docs.py` from this build's audits (none is a committed snapshot): commit "
             f"{audits[0][2].get('commit', '?')}, {audits[0][2].get('date', '?')}; the adapters on {versions(source)}.\n\n"
             + "".join(f"- **{name}**: `lessons audit {quoted(audit_arguments(name, args))} --json`; ONNX's cases: "
                       f"`lessons onnx DIR {quoted(args)}`\n" for name, args in selectors))
    page = pages / "conformance.md"
    page.write_text(portable(text, source))
    return page


def portable(text: str, source: Path) -> str:
    """The page as any reader's checkout would say it: the candidates' commands as the audits ran
    them name this machine's checkout and interpreter (/usr/bin/python3 /home/…/adapters/x.py);
    the page names the files relative to the checkout and the interpreter by its command."""
    text = text.replace(f"{Path(source).resolve()}/", "").replace(f"{source}/", "")
    return re.sub(r"(?<![\w./-])/(?:[\w.+-]+/)*bin/(python[\d.]*|node)\b", r"\1", text)


if __name__ == "__main__":
    print(__doc__)
