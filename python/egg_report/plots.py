"""The report's plots: matplotlib figures rendered to inline SVG (deterministic, text as paths, so
the page needs no fonts and no network)."""
import io
import math
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

# One color per series; the browser test looks for them in the screenshot.
EAGER = "#1f77b4"
COMPILE = "#ff7f0e"
ROOFLINE = "#2ca02c"
CANDIDATE = "#9467bd"
WINNER = "#d62728"

plt.rcParams.update({"svg.hashsalt": "egg-report", "svg.fonttype": "path", "font.size": 9,
                     "axes.spines.top": False, "axes.spines.right": False})


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    # Inline: no XML declaration or DOCTYPE inside HTML.
    text = re.sub(r"^<\?xml[^>]*\?>\s*", "", text)
    text = re.sub(r"<!DOCTYPE[^>]*>\s*", "", text)
    return text


def _height(n):
    return max(1.6, 0.6 + 0.28 * n)


def number(row, key):
    v = row.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def speedup_kind(rows):
    """'device' when the rows carry device-time speedups (the kernel-to-kernel comparison), else
    'caller' (baselines as a Python caller sees them)."""
    return "device" if any(number(r, "speedup_vs_eager_device") for r in rows) else "caller"


def speedups(rows):
    """Grouped horizontal bars: each verified op's speedup against eager and torch.compile (log
    scale, 1x marked). None when no row has a speedup."""
    suffix = "_device" if speedup_kind(rows) == "device" else ""
    data = [(r.get("op", "?"), number(r, "speedup_vs_eager" + suffix),
             number(r, "speedup_vs_compile" + suffix))
            for r in rows if r.get("verified")]
    data = [d for d in data if d[1] or d[2]]
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(8, _height(len(data))))
    ys = list(range(len(data)))[::-1]
    h = 0.4
    ax.barh([y + h / 2 for y in ys], [d[1] or 0 for d in data], h, color=EAGER,
            label="vs PyTorch eager")
    ax.barh([y - h / 2 for y in ys], [d[2] or 0 for d in data], h, color=COMPILE,
            label="vs torch.compile")
    ax.set_xscale("log")
    values = [v for d in data for v in d[1:] if v]
    lo, hi = min(values + [1.0]), max(values + [1.0])
    ax.set_xlim(lo / 1.3, hi * 1.3)
    ticks = [t * 10.0 ** e for e in range(-3, 4) for t in (1, 2, 5)]
    ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if lo / 1.3 <= t <= hi * 1.3]))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%gx" % v))
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([d[0] for d in data])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.set_xlabel("speedup (x, log scale; %s time)" %
                  ("device" if suffix else "caller-view"))
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    return _svg(fig)


def pct_of_roofline(row, copy_gbps=0.0):
    """Achieved bandwidth as % of the memory roofline (the copy bandwidth measured on the GPU)."""
    pct = number(row, "pct_of_copy_bw")
    if pct is not None:
        return pct
    gbps, ceiling = number(row, "achieved_gbps"), copy_gbps or number(row, "copy_gbps")
    return 100.0 * gbps / ceiling if gbps and ceiling else None


def roofline(rows, copy_gbps=0.0):
    """Horizontal bars: each op's % of the memory roofline. None when no row has one."""
    data = [(r.get("op", "?"), pct_of_roofline(r, copy_gbps)) for r in rows]
    data = [d for d in data if d[1] is not None]
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(8, _height(len(data))))
    ys = list(range(len(data)))[::-1]
    ax.barh(ys, [d[1] for d in data], 0.7, color=ROOFLINE)
    ax.axvline(100.0, color="black", linewidth=0.8)
    ax.set_yticks(ys)
    ax.set_yticklabels([d[0] for d in data])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.set_xlabel("% of the memory roofline (achieved GB/s over the measured copy bandwidth)")
    return _svg(fig)


def attempt_ms(attempt):
    t = attempt.get("profile", {}).get("harness", {}).get("timing", {})
    ms = t.get("event_ms", {}).get("median") if isinstance(t.get("event_ms"), dict) else None
    return ms if isinstance(ms, (int, float)) else None


def candidates(manifest):
    """Horizontal bars: every measured candidate's time, per stage, the winner in its own color.
    None when nothing was measured (no GPU)."""
    data = []
    for k, stage in enumerate(manifest.get("stages", []), 1):
        chosen = stage.get("chosen")
        for a in stage.get("attempts", []):
            ms = attempt_ms(a)
            if ms is not None:
                data.append(("stage %d: %s" % (k, a.get("candidate", "?")), ms,
                             a.get("candidate") == chosen))
    if not data:
        return None
    fig, ax = plt.subplots(figsize=(8, _height(len(data))))
    ys = list(range(len(data)))[::-1]
    ax.barh(ys, [d[1] for d in data], 0.7, color=[WINNER if d[2] else CANDIDATE for d in data])
    ax.set_yticks(ys)
    ax.set_yticklabels([d[0] for d in data])
    ax.set_ylim(-0.6, len(data) - 0.4)
    ax.set_xlabel("kernel time (ms, median of event-timed trials); stage winner in red")
    return _svg(fig)
