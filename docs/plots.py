"""Plots of this run's numbers, for the lesson pages (matplotlib, Agg backend, SVG).

A plot hook looks at one lesson's audit result (and its spec) and returns the figures it can
draw, each anchored to a block of the page: after a claim's card, after a listing's output, or
at the end. Hooks recognise their data by its shape (a claim detail with per-n counts, a
listing that prints a d_k table, ...), not by the lesson's name alone, and draw nothing when it
is absent: a lesson that does not exist yet, or prints something else, gets no plot.

    @hook
    def my_plot(ctx):                 # ctx: Context (lesson JSON, spec, where to write)
        ...
        return [ctx.save(fig, "name", caption, ("claim", claim_id))]

The numbers come from this build: the audit's JSON (a check's `series`, the numbers behind its
measured value, and the listings' printed lines) and the arrays the listings computed
(`lessons export`, the same arrays the audit compares with the goldens). Nothing is computed
from a formula here. A hook that recognises its data but cannot draw it raises, and the docs
build fails (generate.py): a plot never silently disappears.
"""
from __future__ import annotations

import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HOOKS = []

# One look for every plot: quiet axes, the site's colours, text as paths (no web fonts).
STYLE = {
    "figure.figsize": (6.4, 3.6), "figure.dpi": 100, "savefig.bbox": "tight", "svg.fonttype": "path",
    "font.family": "DejaVu Sans", "font.size": 10, "axes.titlesize": 10.5, "axes.titleweight": "bold",
    "axes.spines.top": False, "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.25,
    "grid.linestyle": "-", "legend.frameon": False, "legend.fontsize": 9, "axes.edgecolor": "#666",
    "xtick.color": "#444", "ytick.color": "#444", "axes.labelcolor": "#222",
    "axes.prop_cycle": matplotlib.cycler(color=["#1f5fa8", "#d1495b", "#2e8b57", "#8e6bb8", "#e08a1e"]),
}
BLUE, RED, GREEN, GREY = "#1f5fa8", "#d1495b", "#2e8b57", "#9a9a9a"


@dataclass
class Figure:
    file: str          # name under img/ (Doxygen's IMAGE_PATH)
    caption: str
    anchor: tuple      # ("claim", id) | ("listing", id) | ("end", None)


@dataclass
class Context:
    lesson: dict       # the lesson's object in the audit JSON
    spec: object       # generate.Spec or None
    img_dir: Path
    arrays: dict = None  # listing id -> {array name: numpy array}, from `lessons export`
    run: dict = None     # the audit's provenance: its date, commit, machine (the run a timing is from)

    def save(self, fig, name: str, caption: str, anchor) -> Figure:
        file = f"{self.lesson['id']}-{name}.svg".replace("/", "_")
        fig.savefig(self.img_dir / file, format="svg", metadata={"Date": None})
        plt.close(fig)
        if not (self.img_dir / file).is_file() or (self.img_dir / file).stat().st_size < 1000:
            raise PlotMissing(f"{file}: matplotlib wrote no plot")
        return Figure(file, caption, anchor)

    def listing_arrays(self, listing_id):
        return (self.arrays or {}).get(listing_id, {})

    def claims(self):
        return self.lesson.get("claims", [])

    def listings(self):
        return self.lesson.get("listings", [])

    def spec_listing(self, listing_id):
        for b in (self.spec.blocks if self.spec else []):
            if b.kind == "listing" and b.get("id") == listing_id:
                return b
        return None


class PlotMissing(Exception):
    """A plot whose data the page has, that could not be drawn: the docs build fails."""


def hook(fn):
    HOOKS.append(fn)
    return fn


def figures_for(lesson, spec, img_dir: Path, warnings: list, arrays=None, run=None):
    """Every figure the hooks can draw for this lesson (none when it has no audit result).
    Raises PlotMissing when a hook fails: the caller fails the build."""
    if not lesson:
        return []
    ctx = Context(lesson, spec, img_dir, arrays, run or {})
    out = []
    with plt.rc_context(STYLE):
        for fn in HOOKS:
            try:
                out += fn(ctx) or []
            except Exception as e:  # a plot the page has data for is missing: the build fails
                plt.close("all")
                raise PlotMissing(f"plot hook {fn.__name__} failed on lesson {lesson.get('id')}: {e!r}") from e
    return out


# ---------------------------------------------------------------------------------------------
# Parsing helpers.

NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def measured_series(entry):
    """A check's or control's "series" from the audit JSON -> (abscissa name, xs, {name: values},
    {name: (formula name, values)}), or None when it has no abscissa and a measured series."""
    series = entry.get("series") or []
    if len(series) < 2:
        return None
    x = series[0]
    measured = {s["name"]: s["values"] for s in series[1:] if not s.get("formula_of")}
    formulas = {s["formula_of"]: (s["name"], s["values"]) for s in series[1:] if s.get("formula_of")}
    if not measured or any(len(v) != len(x["values"]) for v in measured.values()):
        return None
    return x["name"], x["values"], measured, formulas


# ---------------------------------------------------------------------------------------------
# linear-rnn: multiply-adds against n, log-log, from a complexity claim's check series ("n",
# then each form's counts and the formula of its leading terms).

@hook
def cost_against_n(ctx: Context):
    figs = []
    for claim in ctx.claims():
        if claim.get("kind") != "complexity":
            continue
        for check in claim.get("checks", []):
            parsed = measured_series(check)
            if not parsed or parsed[0] != "n":
                continue
            _, ns, series, formulas = parsed
            ns = [int(n) for n in ns]
            # What is counted: work (multiply-adds, the default) or memory (series named "bytes …").
            memory = all(name.startswith("bytes") for name in series)
            fig, ax = plt.subplots(figsize=(7.6, 3.8))
            colours = [BLUE, RED, GREEN, "#8e6bb8"]
            slopes, dashed, grey = {}, False, False
            for k, (name, counts) in enumerate(series.items()):
                c = colours[k % len(colours)]
                slope = np.polyfit(np.log2(ns), np.log2(counts), 1)[0]
                slopes[name] = slope
                # (linear-family names its series "multiply-adds, <rule>": the axis already says so)
                shown = name.removeprefix("multiply-adds, ")
                ax.loglog(ns, counts, "o-", color=c, lw=2, ms=5,
                          label=f"{shown}{'' if memory else ' form'}, counted (slope {slope:.2f})")
                if name in formulas and len(formulas[name][1]) == len(ns):
                    ax.loglog(ns, formulas[name][1], "--", color=c, lw=1, alpha=0.7,
                              label=f"{formulas[name][0]}")
                    dashed = True
            for ctl in check.get("controls", []):
                cp = measured_series(ctl)
                cn = [int(n) for n in cp[1]] if cp else []
                if cn and set(cn) <= set(ns):  # a control may be run at fewer sizes than the check
                    # The count the control changes: its first series that differs from the check's.
                    first = next(((k, v) for k, v in cp[2].items() if v != series.get(k)), next(iter(cp[2].items())))
                    ax.loglog(cn, first[1], "x", color=GREY, ms=9, mew=1.5,
                              label=f"negative control: {ctl['name']}")
                    grey = True
            ax.set_xlabel("sequence length n")
            ax.set_ylabel("bytes" if memory else "multiply-adds")
            ax.set_xscale("log", base=2)
            ax.set_xticks(ns, [str(n) for n in ns])
            ax.minorticks_off()
            ax.set_title(f"{'Memory' if memory else 'Work'} against sequence length, counted in this build")
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=8.5)
            # The caption says what is drawn: which slopes, and dashed and grey only where there are.
            if "chunked" in slopes and "parallel" in slopes:
                what = "the chunked form's line has slope 1 (linear in n), the parallel form's slope 2."
            elif all(round(v) == 1 for v in slopes.values()):
                what = "every line has slope 1 (linear in n)."
            else:
                what = "; ".join(f"{k.removeprefix('multiply-adds, ')}: slope {v:.2f}" for k, v in slopes.items()) + "."
            names = list(series)
            hidden = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]
                      if series[a] == series[b] and all(series[a] != series[c] for c in names[:i])]
            if hidden:
                what += " Equal counts draw one line: " + ", ".join(
                    f"{a.removeprefix('multiply-adds, ')} lies under {b.removeprefix('multiply-adds, ')}"
                    for a, b in hidden) + "."
            if dashed:
                what += " Dashed: the leading terms of the cost formulas."
            if grey:
                what += " Grey: the broken variant the check rejects."
            figs.append(ctx.save(fig, f"cost-{claim['id'].split('.')[-1]}",
                                 f"{'Bytes' if memory else 'Multiply-adds'} counted by this build for {claim['id']}, log-log: {what}",
                                 ("claim", claim["id"])))
            break
    return figs


# ---------------------------------------------------------------------------------------------
# attention: measured time against n. Always this build's own timing: the lines the cost listing
# printed when the audit ran (rows "n  n*n  MiB  seconds", the docs build's audit or the one
# scripts/main.sh ran just before it), and, when bench/compare.py's JSON exists (VL_BENCH_JSON,
# else build-perf/bench.json or build/bench.json), its kernels' curves beside them.

COST_ROW = re.compile(rf"^\s*(\d+)\s+(\d+)\s+({NUM})\s+({NUM})\s*$")


def bench_json():
    import json
    import os
    root = Path(__file__).resolve().parent.parent
    for p in [os.environ.get("VL_BENCH_JSON"), root / "build-perf/bench.json", root / "build/bench.json"]:
        if p and Path(p).is_file():
            try:
                return json.loads(Path(p).read_text())
            except ValueError:
                return None
    return None


@hook
def measured_cost(ctx: Context):
    listing = next((li for li in ctx.listings() if any("n*n" in l for l in li.get("produced", []))), None)
    if listing is None:
        return []
    rows = [(int(m.group(1)), float(m.group(4))) for m in map(COST_ROW.match, listing.get("produced", [])) if m]
    timed = [(n, t) for n, t in rows if t > 0]
    if len(timed) < 2:
        raise PlotMissing(f"{listing['id']}: fewer than two timed rows (n, seconds > 0) in what the listing printed: "
                          f"{listing.get('produced')}")
    fig, ax = plt.subplots(figsize=(7.6, 4.0))
    ns, ts = zip(*timed)
    ax.loglog(ns, ts, "o-", color=RED, lw=2.2, ms=6, label=f"{listing['id']}, this build's audit run (3 decimals)")
    ref = [ts[-1] * (n / ns[-1]) ** 2 for n in ns]
    ax.loglog(ns, ref, ":", color="black", lw=1.2, label="slope 2 (∝ n²), through the last point")
    data = bench_json()
    curves = {}
    for r in (data or {}).get("rows", []):
        if "seconds" in r:  # a path this CPU lacks is a row with "not_run" and no time
            curves.setdefault(r["kernel"], []).append((r["n"], r["seconds"]))
    for r in (data or {}).get("python_results", []):
        if r["kernel"] in ("numpy_listing", "torch_listing"):
            curves.setdefault(r["kernel"], []).append((r["n"], r["seconds"]))
    styles = {"attention_plain": ("bench: plain kernel", BLUE), "attention_fused": ("bench: fused kernel", GREEN),
              "attention_fused_causal": ("bench: fused kernel, causal", "#8e6bb8"),
              "numpy_listing": ("bench: NumPy, the listing", GREY), "torch_listing": ("bench: torch", "#8c564b")}
    for name, (label, colour) in styles.items():
        pts = sorted(curves.get(name, []))
        if len(pts) >= 2:
            bn, bt = zip(*pts)
            ax.loglog(bn, bt, "o--", color=colour, lw=1.2, ms=3, label=label)
    drawn_n = sorted({n for name in styles for n, _ in curves.get(name, [])} | set(ns))  # the x of every drawn curve
    peak = ((data or {}).get("fma_peak") or {}).get("gflops_all_threads")
    if curves and peak:  # the least time any float32 attention could take here: 4·n²·d flops at the FMA ceiling
        d = data.get("d", 64)
        ax.loglog(drawn_n, [4 * n * n * d / (peak * 1e9) for n in drawn_n], "-", color="black", lw=0.8, alpha=0.6,
                  label=f"FMA ceiling: 4n²d flops at {peak:.0f} GFLOP/s")
    ax.set_xscale("log", base=2)
    ax.set_xticks(drawn_n, [str(n) for n in drawn_n])
    ax.minorticks_off()
    ax.set_xlabel("sequence length n (d = 64, float32, one head)")
    ax.set_ylabel("seconds (mean of the listing's runs)")
    ax.set_title("Measured time against n")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2, fontsize=8)
    if curves:
        bench = " Dashed: bench/compare.py's JSON of this machine." + (
            " Thin black line: the time 4n²d flops take at its measured FMA ceiling." if peak else "")
    else:
        bench = " (No bench/compare.py JSON in this build: only the listing's own timing is drawn.)"
    run = ctx.run or {}
    when = (f" The times are from the audit of {run.get('date', '?')} (commit {run.get('commit', '?')}) on "
            f"{run.get('cpu', 'this machine')}, the run the rest of this page shows.")
    return [ctx.save(fig, "cost-measured",
                     f"The time column {listing['id']} printed in this build's audit, against n, log-log: the "
                     "materialised attention grows like n² (dotted line: slope 2). Times of a few milliseconds "
                     "are rounded to the three decimals the lesson prints." + when + timing_outliers(timed) + bench,
                     ("listing", listing["id"]))]


def timing_outliers(timed) -> str:
    """' The step n = 2048 → 4096 took 15× longer where n² predicts 4×: …' for each doubling whose
    time ratio is off n² by more than 2× either way (both times ≥ 10 ms, so that the three printed
    decimals do not decide it); '' when none is."""
    notes = []
    for (n1, t1), (n2, t2) in zip(timed, timed[1:]):
        if t1 >= 0.01 and t2 >= 0.01:
            predicted = (n2 / n1) ** 2
            ratio = t2 / t1
            if ratio > 2 * predicted:
                notes.append(f"n = {n1} → {n2} took {ratio:.1f}× longer where n² predicts {predicted:.0f}×")
            elif ratio < predicted / 2:
                notes.append(f"n = {n1} → {n2} took only {ratio:.1f}× as long where n² predicts {predicted:.0f}×")
    if not notes:
        return ""
    return (" A timing outlier: " + "; ".join(notes) + ". One run of one machine (a busy one, a cache "
            "boundary); the counted work, attention.table1-costs, is exact and grows like n².")


# ---------------------------------------------------------------------------------------------
# attention: score std against sqrt(d_k), softmax Jacobian norms with and without the scale.
# Recognised by a listing that prints a table whose header names d_k, std and sqrt(d_k), with
# rows "d_k std sqrt | max_w |J| | max_w |J|" (seed article 001, the scaling listing).
# Asks the engine for: the listing's table as columns in the JSON.

SCALE_ROW = re.compile(rf"^\s*(\d+)\s+({NUM})\s+({NUM})\s*\|\s*({NUM})\s+({NUM})\s*\|\s*({NUM})\s+({NUM})\s*$")


def scale_table(lines):
    rows = [tuple(float(x) for x in m.groups()) for m in map(SCALE_ROW.match, lines) if m]
    return np.array(rows) if len(rows) >= 2 else None


@hook
def attention_scale(ctx: Context):
    figs = []
    for li in ctx.listings():
        produced = li.get("produced", [])
        if not any("d_k" in l and "std" in l and "sqrt" in l for l in produced):
            continue
        t = scale_table(produced)
        if t is None:
            continue
        doc = scale_table([v.get("documented", "") for v in li.get("lines", [])])
        dk = t[:, 0]
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(8.4, 3.4))
        a1.loglog(dk, t[:, 2], "-", color=GREY, lw=1, base=2, label=r"$\sqrt{d_k}$")
        a1.loglog(dk, t[:, 1], "o", color=BLUE, ms=5, base=2, label=r"std$(q\cdot k)$, this build")
        if doc is not None and len(doc) == len(t):
            a1.loglog(doc[:, 0], doc[:, 1], "o", mfc="none", mec=RED, ms=9, base=2, label="documented")
        a1.set_xlabel(r"$d_k$")
        a1.set_title(r"Raw scores grow like $\sqrt{d_k}$")
        a1.legend()
        a2.semilogx(dk, t[:, 4], "o-", color=RED, lw=2, base=2, label=r"without $1/\sqrt{d_k}$")
        a2.semilogx(dk, t[:, 6], "o-", color=BLUE, lw=2, base=2, label=r"with $1/\sqrt{d_k}$")
        if doc is not None and len(doc) == len(t):
            a2.semilogx(doc[:, 0], doc[:, 4], "o", mfc="none", mec=GREY, ms=9, base=2, label="documented")
            a2.semilogx(doc[:, 0], doc[:, 6], "o", mfc="none", mec=GREY, ms=9, base=2)
        a2.set_xlabel(r"$d_k$")
        a2.set_ylim(bottom=0)
        a2.set_title(r"Softmax Jacobian $\Vert\mathrm{diag}(p) - pp^\top\Vert_F$")
        a2.legend()
        for a in (a1, a2):
            a.set_xticks(dk, [str(int(x)) for x in dk])
            a.minorticks_off()
        a1.set_yticks(t[:, 2], [f"{y:g}" for y in t[:, 2]])
        fig.tight_layout()
        figs.append(ctx.save(fig, f"scale-{li['id'].split('.')[-1]}",
                             f"This build's {li['id']}: left, the standard deviation of raw dot products against "
                             "√d_k; right, the mean Frobenius norm of the softmax Jacobian, without and with the "
                             "1/√d_k scale. Without it the softmax saturates and the gradient vanishes as d_k grows.",
                             ("listing", li["id"])))
    return figs


# ---------------------------------------------------------------------------------------------
# Figure text in English: a label the lesson prints in its own language is drawn in our English
# (docs/gloss.json, the glosses the pages show under the listings), and the caption quotes the
# lesson's words.

GLOSS = json.loads((Path(__file__).resolve().parent / "gloss.json").read_text(encoding="utf-8"))["phrases"]


def english(label: str) -> str:
    """The gloss of a label the lesson prints (the label itself when it has none)."""
    return GLOSS.get(label.strip(), label.strip())


def lesson_words(labels) -> str:
    """' The lesson prints them as «…», «…».' for the labels drawn in translation (else '')."""
    quoted = [f"«{x.strip()}»" for x in labels if english(x) != x.strip()]
    return f" The lesson prints them as {', '.join(quoted)}." if quoted else ""


# The weight arrays' names, as a reader says them.
ARRAY_TITLES = {"W_unmasked": "weights, no mask", "W_causal": "weights, causal mask",
                "weights": "weights, no mask", "weights_causal": "weights, causal mask"}


# ---------------------------------------------------------------------------------------------
# masking: per-position change of the output when the later tokens change, with and without the
# causal mask. Recognised by printed lines "<label>: ... [ '2.3e-01', '3.4e-01', ... ]".
# Asks the engine for: the listing's arrays (the per-position differences) in the JSON.

LIST_LINE = re.compile(r"^\s*(.+?):[^\[]*\[(.*)\]\s*$")


@hook
def masking_influence(ctx: Context):
    figs = []
    for li in ctx.listings():
        series = []
        for line in li.get("produced", []):
            m = LIST_LINE.match(line)
            if not m:
                continue
            values = [float(x) for x in re.findall(NUM, m.group(2).replace("'", " "))]
            if len(values) >= 2:
                series.append((m.group(1).strip(), values))
        lengths = {len(v) for _, v in series}
        if len(series) < 2 or len(lengths) != 1 or not any("mask" in s.lower() or "masch" in s.lower() for s, _ in series):
            continue
        n = lengths.pop()
        fig, ax = plt.subplots(figsize=(6.4, 3.2))
        width = 0.8 / len(series)
        for k, (label, values) in enumerate(series):
            x = np.arange(n) + (k - (len(series) - 1) / 2) * width
            ax.bar(x, values, width=width, label=english(label), color=[BLUE, RED, GREEN][k % 3])
            for xi, v in zip(x, values):
                if v == 0:
                    ax.text(xi, 0, "0", ha="center", va="bottom", fontsize=7, color="#444")
        ax.set_xticks(range(n))
        ax.set_xlabel("position")
        ax.set_ylabel("max |change of output|")
        ax.set_title("Which outputs move when the later tokens change")
        ax.legend()
        figs.append(ctx.save(fig, f"influence-{li['id'].split('.')[-1]}",
                             f"This build's {li['id']}: for each position, the largest change of its output when "
                             "the later tokens are replaced. With the causal mask, the positions before the change "
                             "stay exactly at zero." + lesson_words(label for label, _ in series), ("listing", li["id"])))
    return figs


# ---------------------------------------------------------------------------------------------
# encoder-decoder: the three roles of the attention as influence heat maps. Recognised by a
# listing that prints tables as a title line ending in ":" followed by rows "  i: v v v ..."
# (row i = output position, column j = the input position replaced); drawn when there are three.

TABLE_ROW = re.compile(r"^\s+(\d+):((?:\s+" + NUM + r")+)\s*$")


def printed_tables(lines):
    tables, title, rows = [], None, []
    for line in lines + [""]:
        m = TABLE_ROW.match(line)
        if m and title is not None:
            rows.append([float(x) for x in m.group(2).split()])
            continue
        if title is not None and rows and len({len(r) for r in rows}) == 1:
            tables.append((title, np.array(rows)))
        title, rows = (line.strip()[:-1], []) if line.rstrip().endswith(":") else (None, [])
    return tables


@hook
def role_heatmaps(ctx: Context):
    figs = []
    for li in ctx.listings():
        tables = printed_tables(li.get("produced", []))
        if len(tables) != 3:
            continue
        # Constrained layout and titles wrapped at ~26 characters, in English (the lesson's own,
        # quoted in the caption, are long enough to run into each other over three panels).
        fig, axes = plt.subplots(1, 3, figsize=(9.6, 3.8), layout="constrained")
        vmax = max(float(t.max()) for _, t in tables) or 1.0
        for k, (ax, (title, t)) in enumerate(zip(axes, tables)):
            # aspect auto: the three panels share one height whatever their shapes (the encoder-decoder
            # table is 5 × 6), so that they stand in line.
            im = ax.imshow(t, cmap="Blues", vmin=0, vmax=vmax, interpolation="nearest", aspect="auto")
            for (i, j), v in np.ndenumerate(t):
                if v == 0:
                    ax.text(j, i, "0", ha="center", va="center", fontsize=7, color=RED)
            ax.set_title(textwrap.fill(english(title.split("(")[0]), 26, break_on_hyphens=False), fontsize=9)
            ax.set_xlabel("input position replaced")
            if k == 0:
                ax.set_ylabel("output position")
            ax.grid(False)
        fig.colorbar(im, ax=list(axes), fraction=0.02, pad=0.02, label="how far output i moves")
        figs.append(ctx.save(fig, f"roles-{li['id'].split('.')[-1]}",
                             f"This build's {li['id']}: for each role of the attention, how much output position i "
                             "moves when input position j alone is replaced. Full for the encoder and for the "
                             "encoder-decoder attention; lower-triangular, with exact zeros (red), for the masked "
                             "decoder self-attention." + lesson_words(title.split("(")[0] for title, _ in tables),
                             ("listing", li["id"])))
    return figs


# ---------------------------------------------------------------------------------------------
# positions: the sinusoidal encoding as a heat map, from the table the listing computed (an
# exported 2-D array whose name starts with "pe", e.g. positions.main's pe40 = PE for 40
# positions), the one the audit compares with NumPy's.

@hook
def positional_heatmap(ctx: Context):
    figs = []
    for li in ctx.listings():
        for name, pe in sorted(ctx.listing_arrays(li["id"]).items()):
            if not name.lower().startswith("pe") or pe.ndim != 2:
                continue
            n, d = pe.shape
            fig, ax = plt.subplots(figsize=(6.4, 3.4))
            im = ax.imshow(pe.T, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest", origin="lower")
            ax.set_xlabel("position pos")
            ax.set_ylabel("dimension (2i: sin, 2i+1: cos)")
            ax.set_title(f"{li['id']}: {name}, {n} positions × d = {d}")
            ax.grid(False)
            fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02)
            figs.append(ctx.save(fig, f"pe-{name}",
                                 f"The positional-encoding table {name} as this build's {li['id']} computed it "
                                 f"({n} positions, d = {d}; the array the audit compares with NumPy's): "
                                 "PE(pos, 2i) = sin(pos·ωᵢ) and PE(pos, 2i+1) = cos(pos·ωᵢ), with the frequencies ωᵢ of "
                                 "the formula above. The low dimensions turn fast, the high ones slowly.", ("listing", li["id"])))
    return figs


# ---------------------------------------------------------------------------------------------
# masking, heads: the attention weights of every head, as heat maps, from the arrays the listing
# computed: a 3-D array (heads, queries, keys) named W… or weights…; W_unmasked and W_causal
# side by side as two rows.

def weight_arrays(arrays):
    return {k: v for k, v in arrays.items() if v.ndim == 3 and v.shape[1] == v.shape[2]
            and (k.startswith("W") or k.startswith("weights"))}


@hook
def attention_heatmaps(ctx: Context):
    figs = []
    for li in ctx.listings():
        ws = weight_arrays(ctx.listing_arrays(li["id"]))
        if not ws:
            continue
        order = sorted(ws, key=lambda k: (("causal" in k), k))
        h = max(w.shape[0] for w in ws.values())
        fig, axes = plt.subplots(len(order), h, figsize=(1.9 * h + 0.8, 2.0 * len(order) + 0.4), squeeze=False)
        for r, name in enumerate(order):
            w = ws[name]
            for c in range(h):
                ax = axes[r][c]
                ax.grid(False)
                if c >= w.shape[0]:
                    ax.axis("off")
                    continue
                im = ax.imshow(w[c], cmap="viridis", vmin=0, vmax=1, interpolation="nearest")
                if r == 0:
                    ax.set_title(f"head {c}", fontsize=8.5)
                ax.set_xticks(range(w.shape[2]))
                ax.set_yticks(range(w.shape[1]))
                ax.tick_params(labelsize=7)  # 7 pt, the smallest text of any figure: 9.3 px at its drawn size
                if c == 0:  # the row's array, as a reader says it, beside its first panel
                    ax.set_ylabel(f"{ARRAY_TITLES.get(name, name)}\nquery i", fontsize=8)
                if r == len(order) - 1:
                    ax.set_xlabel("key j", fontsize=8)
        fig.colorbar(im, ax=axes, fraction=0.02, pad=0.02, label="weight")
        rows = ("one row per array: " + ", then ".join("with the causal mask" if "causal" in k else "without a mask"
                                                        for k in order) + "; ") if len(order) > 1 else ""
        figs.append(ctx.save(fig, f"weights-{li['id'].split('.')[-1]}",
                             f"The attention weights of every head ({rows}one column per head), as this build's "
                             f"{li['id']} computed them "
                             "(the arrays the audit compares with torch's): row i is query i's softmax over the keys."
                             + (" With the causal mask everything right of the diagonal is exactly 0, and row 0 is "
                                "[1, 0, …]." if any("causal" in k for k in order) else ""),
                             ("listing", li["id"])))
    return figs


if __name__ == "__main__":  # a quick look: plots.py audit.json OUTDIR
    import json
    audit = json.loads(Path(sys.argv[1]).read_text())
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    warns = []
    for lesson in audit["lessons"]:
        for f in figures_for(lesson, None, out, warns, {}):
            print(f.file, f.anchor)
    print("\n".join(warns))


# ---------------------------------------------------------------------------------------------
# linear-family: the largest gap between the forms against n, per update rule, from an identity
# claim's check series ("n", then "largest gap between forms, <rule>" per rule).

@hook
def form_gaps_against_n(ctx: Context):
    figs = []
    for claim in ctx.claims():
        for check in claim.get("checks", []):
            parsed = measured_series(check)
            if not parsed or parsed[0] != "n" or not all(k.startswith("largest gap between forms") for k in parsed[2]):
                continue
            _, ns, series, _ = parsed
            fig, ax = plt.subplots(figsize=(7.6, 3.6))
            colours = [BLUE, RED, GREEN, "#8e6bb8"]
            # A gap of exactly 0 has no place on a log axis: it is drawn as an open triangle on a
            # floor a decade below the smallest non-zero gap, and the caption says so.
            positive = [g for gaps in series.values() for g in gaps if g > 0]
            floor = 10.0 ** (np.floor(np.log10(min(positive))) - 1) if positive else 1e-17
            zeros = False
            for k, (name, gaps) in enumerate(series.items()):
                colour = colours[k % len(colours)]
                ax.semilogy(ns, [g if g > 0 else np.nan for g in gaps], "o-", color=colour, lw=2, ms=5,
                            label=name.split(", ")[-1])
                zero_ns = [n for n, g in zip(ns, gaps) if g == 0]
                if zero_ns:
                    zeros = True
                    ax.semilogy(zero_ns, [floor] * len(zero_ns), "v", color=colour, mfc="none", ms=7, clip_on=False)
            ax.set_ylim(floor, 1e-11)  # the tolerance line in view
            ax.axhline(1e-12, color=GREY, ls="--", lw=1, label="tolerance 1e-12")
            ax.set_xlabel("sequence length n")
            ax.set_ylabel("largest relative gap")
            ax.set_title("The three forms against ONNX's recurrence, float64, this build", pad=24)
            ax.legend(fontsize=8.5, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
            figs.append(ctx.save(fig, f"gaps-{claim['id'].split('.')[-1]}",
                                 f"Largest relative gap of any form (recurrent, parallel, chunked at every chunk size) "
                                 f"from ONNX's recurrence at each n of {claim['id']}'s sweep, per update rule."
                                 + (" An open triangle on the bottom axis is a gap of exactly 0 (the forms agreed to "
                                    "the last bit), which a log axis cannot show." if zeros else ""),
                                 ("claim", claim["id"])))
            break
    return figs
