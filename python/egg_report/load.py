"""What a report shows, read from disk: bench rows and summary, and each kernel's manifest."""
import json
import os


class ReportInputError(Exception):
    """The folder holds nothing a report can show (exit 1, with what to do)."""

    def __init__(self, message, hint):
        super().__init__(message)
        self.message = message
        self.hint = hint


class Kernel:
    def __init__(self, name, folder, manifest):
        self.name = name
        self.folder = folder
        self.manifest = manifest


class Bench:
    def __init__(self, rows, summary, gpu, source):
        self.rows = rows
        self.summary = summary
        self.gpu = gpu
        self.source = source


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise ReportInputError("cannot read %s: %s" % (path, e),
                               "regenerate it (egg-gen generate or egg-gen bench)") from None


def _read_rows(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as e:
                raise ReportInputError("%s:%d is not a JSON row: %s" % (path, n, e),
                                       "pass the rows file egg-gen bench --rows wrote") from None
    return rows


def _manifests(folder):
    """Every kernel below `folder` (its own manifest.json first), in name order."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if "manifest.json" in files:
            m = _read_json(os.path.join(root, "manifest.json"))
            if isinstance(m, dict) and "stages" in m:
                found.append(Kernel(m.get("name") or os.path.basename(root), root, m))
    return sorted(found, key=lambda k: k.name)


def load(source):
    """(bench or None, kernels) for a folder or a rows .jsonl file."""
    if not os.path.exists(source):
        raise ReportInputError("%s does not exist" % source,
                               "pass a kernel's output folder (with manifest.json) or an "
                               "egg-gen bench --out folder")
    bench = None
    folder = source
    if os.path.isfile(source):
        if not source.endswith(".jsonl"):
            raise ReportInputError("%s is a file, not a folder" % source,
                                   "pass the folder egg-gen generate or bench wrote into (or a "
                                   "bench --rows .jsonl file)")
        bench = Bench(_read_rows(source), {}, "", source)
        folder = os.path.dirname(os.path.abspath(source))
    elif os.path.isfile(os.path.join(source, "bench.json")):
        b = _read_json(os.path.join(source, "bench.json"))
        bench = Bench(b.get("rows", []), b.get("summary", {}), b.get("gpu", ""),
                      os.path.join(source, "bench.json"))
    kernels = _manifests(folder)
    if bench is not None:
        ops = {r.get("op") for r in bench.rows}
        kernels = [k for k in kernels if k.name in ops]
    if bench is None and not kernels:
        raise ReportInputError("%s holds no manifest.json and no bench.json" % source,
                               "pass a kernel's output folder (egg-gen generate --out, or "
                               "<build>/egg/<name> of egg_kernel()) or an egg-gen bench --out "
                               "folder")
    return bench, kernels
