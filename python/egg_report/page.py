"""The report page: one self-contained HTML document (inline CSS and SVG, no scripts)."""
import html
import math
import os

from . import plots

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.25em 0.6em; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #1a7f37; } .bad { color: #b42318; } .note { color: #666; }
figure.plot { margin: 1em 0; } figure.plot svg { max-width: 100%; height: auto; }
code { font-size: 0.92em; }
"""


def _e(v):
    return html.escape("" if v is None else str(v))


def _num(v, fmt="%.4g"):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return "-"
    return fmt % v


def _table(headers, rows, numeric=()):
    out = ["<table>"]
    if any(headers):
        out.append("<tr>%s</tr>" % "".join("<th>%s</th>" % _e(h) for h in headers))
    for row in rows:
        cells = []
        for i, cell in enumerate(row):
            cls = ' class="num"' if i in numeric else ""
            cells.append("<td%s>%s</td>" % (cls, cell))
        out.append("<tr>%s</tr>" % "".join(cells))
    out.append("</table>")
    return "\n".join(out)


def _figure(plot_id, svg, caption):
    if svg is None:
        return '<p class="note" id="%s-missing">%s: nothing measured (no GPU timing).</p>' % (
            plot_id, _e(caption))
    return '<figure class="plot" id="%s">%s<figcaption>%s</figcaption></figure>' % (
        plot_id, svg, _e(caption))


def _status_cell(state):
    cls = "ok" if state == "verified" else "bad" if state.startswith("failed") else "note"
    return '<span class="%s">%s</span>' % (cls, _e(state))


def bench_section(bench):
    rows = bench.rows
    s = bench.summary
    parts = ['<section id="bench"><h2>Bench run</h2>',
             '<p>%s%d ops from <code>%s</code>.</p>' % (
                 "GPU: %s. " % _e(bench.gpu) if bench.gpu else "", len(rows), _e(bench.source))]
    labels = [("ops", "ops", "%d"), ("verified", "verified", "%d"),
              ("correct_rate", "correct rate", "%.3f"),
              ("fast_1_vs_eager", "fast_1 vs eager", "%.3f"),
              ("fast_1_vs_compile", "fast_1 vs torch.compile", "%.3f"),
              ("geomean_speedup_vs_eager", "geomean speedup vs eager", "%.3f"),
              ("geomean_speedup_vs_compile", "geomean speedup vs torch.compile", "%.3f"),
              ("fast_1_vs_eager_device", "fast_1 vs eager (device time)", "%.3f"),
              ("fast_1_vs_compile_device", "fast_1 vs torch.compile (device time)", "%.3f"),
              ("geomean_speedup_vs_eager_device", "geomean speedup vs eager (device time)",
               "%.3f"),
              ("geomean_speedup_vs_compile_device",
               "geomean speedup vs torch.compile (device time)", "%.3f")]
    items = [(_e(label), _num(s[key], fmt)) for key, label, fmt in labels
             if _num(s.get(key)) != "-"]
    if items:
        parts.append(_table(["summary", ""], items, numeric=(1,)))
    kind = plots.speedup_kind(rows)
    parts.append(_figure("speedups", plots.speedups(rows),
                         "Speedup of each verified kernel against PyTorch eager and torch.compile "
                         "(%s time; right of the line is faster)" %
                         ("device" if kind == "device" else "caller-view")))
    parts.append(_figure("roofline", plots.roofline(rows),
                         "Each kernel's achieved bandwidth as % of the memory roofline"))
    table_rows = []
    for r in rows:
        name = _e(r.get("op"))
        table_rows.append((
            '<a href="#kernel-%s">%s</a>' % (name, name), _status_cell(r.get("status", "")),
            _num(r.get("kernel_ms")), _num(r.get("eager_ms")), _num(r.get("compile_ms")),
            _num(r.get("speedup_vs_eager"), "%.2f"), _num(r.get("speedup_vs_compile"), "%.2f"),
            _num(r.get("speedup_vs_eager_device"), "%.2f"),
            _num(r.get("speedup_vs_compile_device"), "%.2f"),
            _num(plots.pct_of_roofline(r), "%.1f"), _num(r.get("generate_s"), "%.0f")))
    parts.append(_table(["op", "status", "kernel ms", "eager ms", "compile ms", "x eager",
                         "x compile", "x eager (device)", "x compile (device)", "% roofline",
                         "generate s"], table_rows, numeric=tuple(range(2, 11))))
    parts.append("</section>")
    return "\n".join(parts)


def kernel_section(k):
    m = k.manifest
    name = _e(k.name)
    parts = ['<section class="kernel" id="kernel-%s"><h2>Kernel <code>%s</code></h2>' % (name, name)]
    op = m.get("op", {})
    files = m.get("files", {})
    what = [("op", "<code>%s</code>" % _e(op.get("path"))),
            ("arches", _e(", ".join(m.get("arches", [])))),
            ("backend", _e(m.get("backend")) + (" (%s)" % _e(m["model"]) if m.get("model") else "")),
            ("candidate", "<code>%s</code>" % _e(m.get("candidate"))),
            ("summary", _e(m.get("summary"))),
            ("files", ", ".join("<code>%s</code>" % _e(os.path.join(k.folder, f))
                                for f in (files.get("cu"), files.get("header")) if f)),
            ("generator", _e("%s %s" % (m.get("generator", {}).get("name", ""),
                                        m.get("generator", {}).get("version", "")))),
            ("cache key", "<code>%s</code>" % _e(m.get("cache_key")))]
    parts.append("<h3>What was generated</h3>")
    parts.append(_table(["", ""], what))
    parts.append("<h3>Verification</h3>")
    tol = m.get("tolerance", {})
    ver = [(_e(arch), _status_cell(st.get("state", "")), _e(st.get("reason", "")))
           for arch, st in sorted(m.get("status", {}).items())]
    parts.append(_table(["arch", "state", "reason"], ver))
    parts.append('<p>Tolerance: atol %s, rtol %s%s.</p>' % (
        _num(tol.get("atol"), "%g"), _num(tol.get("rtol"), "%g"),
        " (%s)" % _e(m["tolerance_basis"]) if m.get("tolerance_basis") else ""))
    t = m.get("timing", {})
    if isinstance(t.get("kernel_ms"), (int, float)):
        parts.append(_table(
            ["kernel ms", "eager ms", "torch.compile ms", "x eager", "x compile", "GB/s"],
            [(_num(t.get("kernel_ms")), _num(t.get("eager_ms")), _num(t.get("compile_ms")),
              _num(t.get("speedup_vs_eager"), "%.2f"), _num(t.get("speedup_vs_compile"), "%.2f"),
              _num(t.get("achieved_gbps"), "%.0f"))], numeric=tuple(range(6))))
    parts.append("<h3>Candidates per stage</h3>")
    parts.append(_figure("candidates-" + name, plots.candidates(m),
                         "Each candidate's kernel time in its stage"))
    attempts = []
    for n, stage in enumerate(m.get("stages", []), 1):
        for a in stage.get("attempts", []):
            attempts.append(("%d (%s)" % (n, _e(stage.get("step", ""))),
                             "<code>%s</code>" % _e(a.get("candidate")),
                             _e(a.get("result") or a.get("profile", {}).get("harness", {})
                                .get("status", "")),
                             _num(plots.attempt_ms(a)),
                             "winner" if a.get("candidate") == stage.get("chosen") else ""))
        if "seconds" in stage:
            attempts.append(("%d" % n, '<span class="note">stage time</span>', "",
                             _num(stage.get("seconds"), "%.1f s"), ""))
    parts.append(_table(["stage", "candidate", "result", "ms", ""], attempts, numeric=(3,)))
    parts.append("</section>")
    return "\n".join(parts)


def render(bench, kernels, title):
    body = ["<h1>%s</h1>" % _e(title)]
    if bench is not None:
        body.append(bench_section(bench))
    for k in kernels:
        body.append(kernel_section(k))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>%s</title><style>%s</style></head><body>\n%s\n</body></html>\n"
            % (_e(title), _CSS, "\n".join(body)))
