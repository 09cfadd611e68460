"""The reference server: the op's reference outputs, computed by PyTorch and kept on the GPU.

``python3 -m egg_frontend serve --op op.py --spec spec.json --socket S --ready R`` builds the
model as the frontend traced it, computes the declared input set and the seeded ones with
PyTorch (the user's default backend flags) on the GPU (``--ref-device cpu``: on the CPU, for
accuracy audits; the results are still served from the GPU), and answers egg-harness on the Unix
socket ``S`` with CUDA IPC handles of the inputs, params and reference outputs (docs/ARCHITECTURE.md,
"Verification"). Nothing goes through the disk; only summaries leave the GPU (egg-harness compares
there).

Protocol: one JSON object per line each way.
  {"cmd": "set", "index": k}   -> {"ok": true, "index", "seed", "declared", "inputs": [T],
                                   "params": [T], "outputs": [T], "compute_ms", "wait_ms"}
  {"cmd": "exact", "index": k} -> {"ok": true, "index", "outputs": [T] | null, "why",
                                   "compute_ms", "wait_ms"}
       (set k's outputs computed in float64, for the accuracy rule, base/accuracy.h; null with
       the reason where the model does not run in float64)
  {"cmd": "release", "index": k} -> {"ok": true}
  {"cmd": "info"}              -> {"ok": true, "sets", "device", "compute_device"}
  T = {"name", "dtype", "shape", "bytes", "handle" (hex cudaIpcMemHandle_t), "offset"}
  errors: {"ok": false, "kind": "user" | "spec" | "resource" | "internal", "error": text}

Startup writes ``R`` (JSON, atomically) once the socket listens and every set has been computed
once: {"ok": true, "pid", "sets", "device", "compute_device", "startup_ms", "set_bytes"} or
{"ok": false, "kind", "file", "line", "op", "message", "hint"} (the op's fault, as error.json).
The server ends when its standard input closes (its egg-gen ended, however it ended).
"""

import contextlib
import copy
import json
import os
import socket
import sys
import threading
import time

# Legacy cudaMalloc blocks are the ones CUDA IPC can share.
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:False"

from .errors import FrontendError, UserError, internal_from  # noqa: E402

CACHE_BYTES = int(os.environ.get("EGG_REF_CACHE_MB", "1024")) << 20
MAX_WAIT_S = 3600.0  # for GPU memory other jobs hold


def _is_oom(e):
    """PyTorch's allocator raises OutOfMemoryError; a CUDA call that finds the GPU full (a context,
    a library's workspace) raises an AcceleratorError/RuntimeError saying "out of memory"."""
    return "out of memory" in str(e).lower()


def _retry_oom(torch, fn, waited):
    """fn(), again after a pause while the GPU is out of memory (other jobs hold it)."""
    t0 = time.perf_counter()
    pause = 0.25
    while True:
        try:
            return fn()
        except Exception as e:  # noqa: B902 - only out-of-memory is retried
            if not _is_oom(e) or time.perf_counter() - t0 > MAX_WAIT_S:
                raise
        try:
            torch.cuda.empty_cache()
        except Exception:  # noqa: B902 - the cache may be unreachable in a full GPU
            pass
        time.sleep(pause)
        waited["wait_s"] = waited.get("wait_s", 0.0) + pause
        pause = min(2.0, pause * 2)



def _write_json(path, obj):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f)
        f.write("\n")
    os.replace(tmp, path)


def _nbytes(t):
    return t.numel() * t.element_size()


class References:
    """The model, its params on the GPU, and the sets (computed on demand, kept when small)."""

    def __init__(self, op_path, spec_doc, seeds, ref_device, serve_device="cuda", exporter=None):
        """``serve_device`` and ``exporter`` (tensor -> {"handle", "offset"}; default: CUDA IPC)
        are for tests on a machine without a GPU."""
        import torch
        from . import ipc
        from . import gpu_memory, loader, spec
        self.torch = torch
        self.spec = spec_doc
        self.n_sets = seeds + 1
        self.op = loader.load(op_path)
        loader.build_model(self.op)
        self.user_files = [self.op.path] + self.op.local_files()
        # the spec's params by name (the model's parameters and buffers, then the tensor
        # attributes the traced forward read): no second capture
        params = spec.collect_params(self.op.model,
                                     [p["name"] for p in spec_doc.get("params", [])])
        self._check_decls("parameter", spec_doc.get("params", []),
                          [(n, t) for n, t, _ in params])
        self.serve_device = torch.device(serve_device)
        self.exporter = exporter or ipc.export
        self.compute_device = torch.device(ref_device)
        # GPU memory one set needs while it is computed (from the spec, before anything is
        # computed; the baselines admit themselves the same way).
        self.need_bytes = gpu_memory.set_need_bytes(spec_doc)
        ins = sum(gpu_memory.decl_bytes(d) for d in spec_doc["inputs"])
        outs = sum(gpu_memory.decl_bytes(d) for d in spec_doc["outputs"])
        # All sets stay resident when they fit together; else each is computed when asked and
        # freed after, so a waiting server never holds memory another job waits for.
        self.set_bytes = ins + outs
        self.keep = self.set_bytes * self.n_sets <= CACHE_BYTES
        state = self.op.initial_state
        waited = {}

        def place():
            self.params = [state.get(n, t).detach().to(self.serve_device).contiguous().clone()
                           for n, t, _ in params]
            self._place_model(self.compute_device)
        _retry_oom(torch, place, waited)
        self.cache = {}
        self.exact_cache = {}
        self.pinned = {}

    def _place_model(self, device):
        from . import loader
        loader.reset_state(self.op)  # a forward that failed on the GPU may have updated buffers
        self.compute_device = device
        self.op.model.to(device)
        loader.snapshot_state(self.op)  # the buffers' copies on the device, the new versions

    def _check_decls(self, kind, decls, tensors):
        from .spec import dtype_name
        if len(decls) != len(tensors):
            raise UserError(self.op.path, self.op.def_line("Model"), "Model",
                            "the model has %d %ss but the traced spec %d"
                            % (len(tensors), kind, len(decls)),
                            "the op changed while EGG ran: build again")
        for d, (name, t) in zip(decls, tensors):
            if list(t.shape) != d["shape"] or dtype_name(t.dtype) != d["dtype"]:
                raise UserError(self.op.path, self.op.def_line("get_inputs"), kind,
                                "%s %s is %s %s, the traced spec says %s %s"
                                % (kind, name, dtype_name(t.dtype), list(t.shape), d["dtype"],
                                   d["shape"]),
                                "get_inputs() must give the same shapes and dtypes for every seed")

    def _compute(self, k):
        torch = self.torch
        from . import loader, refs
        dev = self.compute_device
        inputs = loader.get_inputs(self.op, k, dev.type)
        numbers = [[i, v] for i, v in loader.numbers(inputs)]
        traced = self.spec.get("reference", {}).get("numbers", [])
        if numbers != traced:
            raise UserError(self.op.path, self.op.def_line("get_inputs"), "get_inputs",
                            "get_inputs() gives the forward numbers %s for input set %d, but the "
                            "kernel was traced, and is generated, for %s"
                            % (numbers, k, traced),
                            "return the same Python numbers for every seed (or make them "
                            "tensors)")
        state = self._rng_state(k, dev)
        tensors = loader.tensors(inputs) + ([state] if state is not None else [])
        self._check_decls("forward input", self.spec["inputs"],
                          [(d["name"], t) for d, t in zip(self.spec["inputs"], tensors)])
        outs = refs.run_eager(self.op, inputs, k, len(self.spec["outputs"]), self.user_files,
                              state)
        self._check_decls("output", self.spec["outputs"],
                          [(d["name"], t) for d, t in zip(self.spec["outputs"], outs)])
        to = self.serve_device
        inputs = [t.to(to).contiguous() for t in tensors]
        outs = [t.to(to).contiguous() for t in outs]
        if to.type == "cuda":
            torch.cuda.synchronize()
        return {"inputs": inputs, "outputs": outs}

    def _rng_state(self, k, device):
        """Set k's egg_rng ([seed, offset]) when the spec's dropout draws from one, else None."""
        from . import rng
        if not any(d.get("kind") == "rng" for d in self.spec["inputs"]):
            return None
        return rng.state(k, device)

    def _on_gpu(self, fn, need_bytes):
        """fn() run as GPU work, waiting for GPU memory when the GPU is full: (its result, compute
        ms, wait ms)."""
        torch = self.torch
        from egg_bench.gpu_lock import gpu_work_lock

        from . import gpu_memory
        waited = {}
        t0 = time.perf_counter()

        def attempt():
            if self.serve_device.type != "cuda":
                return fn()
            # Memory first, then the quiet lock shared (computing on the GPU is never done during
            # another job's timed span; nothing is awaited while it is held).
            with gpu_memory.admission(torch, need_bytes, waited), gpu_work_lock(waited):
                return fn()
        result = _retry_oom(torch, attempt, waited)
        total_ms = (time.perf_counter() - t0) * 1e3
        wait_ms = waited.get("wait_s", 0.0) * 1e3
        return result, total_ms - wait_ms, wait_ms

    def compute(self, k):
        """Set k, computed (waiting for GPU memory when the GPU is full) or from the cache."""
        if k in self.cache:
            return self.cache[k], 0.0, 0.0
        s, compute_ms, wait_ms = self._on_gpu(lambda: self._compute(k), self.need_bytes)
        if self.keep:
            self.cache[k] = s
        return s, compute_ms, wait_ms

    def _compute_exact(self, k):
        """Set k's outputs in float64: a float64 copy of the model (floating parameters and
        buffers converted) run on the floating inputs converted, with float64 the default dtype
        (tensors forward creates). (outputs, "") or (None, why not)."""
        torch = self.torch
        from . import loader, refs, rng
        from .errors import describe
        dev = self.compute_device
        loader.reset_state(self.op)
        try:
            model64 = copy.deepcopy(self.op.model).double()
        except Exception as e:  # noqa: B902 - a model that cannot be copied has no float64 twin
            return None, "the model cannot be copied to float64: %s" % describe(e)
        inputs = [t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                  for t in loader.get_inputs(self.op, k, dev.type)]
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        state = self._rng_state(k, "cpu")
        try:
            torch.manual_seed(k)
            with torch.no_grad(), refs.StableOrder(), (rng.drawing(state) if state is not None
                                                       else contextlib.nullcontext()):
                result = model64(*inputs)
        except Exception as e:  # noqa: B902 - any failure only means: no float64 reference
            if _is_oom(e):
                raise
            return None, "forward fails in float64: %s" % describe(e)
        finally:
            torch.set_default_dtype(previous)
            del model64
        items = list(result) if isinstance(result, (tuple, list)) else [result]
        decls = self.spec["outputs"]
        if len(items) != len(decls) or not all(isinstance(t, torch.Tensor) for t in items):
            return None, "forward in float64 returns other outputs than in float32"
        outs = []
        for d, t in zip(decls, items):
            if list(t.shape) != d["shape"]:
                return None, "output %s has shape %s in float64" % (d["name"], list(t.shape))
            if d["dtype"] in ("float32", "float16", "bfloat16") and t.dtype != torch.float64:
                return None, "output %s stays %s when the model runs in float64" % (
                    d["name"], str(t.dtype).replace("torch.", ""))
            outs.append(t.detach().to(self.serve_device).contiguous())
        if self.serve_device.type == "cuda":
            torch.cuda.synchronize()
        return outs, ""

    def exact(self, k):
        """compute(k)'s float64 twin: (outputs or None, why not, compute ms, wait ms)."""
        if k in self.exact_cache:
            return self.exact_cache[k] + (0.0, 0.0)
        # float64 doubles the set's bytes and the model's
        (outs, why), compute_ms, wait_ms = self._on_gpu(lambda: self._compute_exact(k),
                                                        2 * self.need_bytes)
        if self.keep:
            self.exact_cache[k] = (outs, why)
        return outs, why, compute_ms, wait_ms

    def warm_up(self):
        """Computes every set once (a forward failing on a seed is the op's fault, found here),
        falling back to the CPU when the model does not run on the GPU."""
        try:
            self.compute(0)
        except UserError as e:
            if self.compute_device.type == "cpu":
                raise
            print("egg: note: the model does not run on the GPU (%s); computing references on "
                  "the CPU" % e.message, file=sys.stderr)
            self.cache.clear()
            self._place_model(self.torch.device("cpu"))
            self.compute(0)
        self._empty_cache()
        for k in range(1, self.n_sets):
            self.compute(k)
            self._empty_cache()

    def _empty_cache(self):
        if not self.keep and self.serve_device.type == "cuda":
            self.torch.cuda.empty_cache()

    def describe(self, tensors, decls):
        out = []
        for d, t in zip(decls, tensors):
            entry = {"name": d["name"], "dtype": d["dtype"], "shape": d["shape"],
                     "bytes": _nbytes(t)}
            if _nbytes(t) > 0:
                entry.update(self.exporter(t))
            out.append(entry)
        return out

    def answer(self, req, pinned):
        cmd = req.get("cmd")
        if cmd == "info":
            return {"ok": True, "sets": self.n_sets, "device": str(self.serve_device),
                    "compute_device": self.compute_device.type,
                    "need_bytes": 0 if self.keep else self.need_bytes}
        k = req.get("index")
        if not isinstance(k, int) or not 0 <= k < self.n_sets:
            return {"ok": False, "kind": "internal", "error": "no reference set %r" % (k,)}
        if cmd == "release":
            pinned.pop(k, None)
            pinned.pop(("exact", k), None)
            self._empty_cache()
            return {"ok": True}
        if cmd == "exact":
            outs, why, compute_ms, wait_ms = self.exact(k)
            pinned[("exact", k)] = outs
            decls = [dict(d, dtype="float64" if t.dtype == self.torch.float64 else d["dtype"])
                     for d, t in zip(self.spec["outputs"], outs or [])]
            return {"ok": True, "index": k,
                    "outputs": self.describe(outs, decls) if outs is not None else None,
                    "why": why, "compute_ms": compute_ms, "wait_ms": wait_ms}
        if cmd != "set":
            return {"ok": False, "kind": "internal", "error": "unknown command %r" % (cmd,)}
        s, compute_ms, wait_ms = self.compute(k)
        pinned[k] = s
        return {"ok": True, "index": k, "seed": k, "declared": k == 0,
                "inputs": self.describe(s["inputs"], self.spec["inputs"]),
                "params": self.describe(self.params, self.spec.get("params", [])),
                "outputs": self.describe(s["outputs"], self.spec["outputs"]),
                "compute_ms": compute_ms, "wait_ms": wait_ms}


def _error_reply(e):
    if isinstance(e, FrontendError):
        return {"ok": False, "kind": e.kind, "error": e.report_line()}
    return {"ok": False, "kind": "internal", "error": "%s: %s" % (type(e).__name__, e)}


def _serve_connection(refs, conn):
    pinned = {}
    with conn, conn.makefile("rwb") as f:
        for line in f:
            try:
                reply = refs.answer(json.loads(line), pinned)
            except Exception as e:  # noqa: B902 - every failure is an answer, not a dead server
                reply = _error_reply(e)
            f.write((json.dumps(reply) + "\n").encode())
            f.flush()
    pinned.clear()
    refs._empty_cache()


def _exit_with_parent():
    """Ends the process when stdin closes: egg-gen holds its other end for the server's life."""
    def watch():
        try:
            while sys.stdin.buffer.read(1 << 16):
                pass
        except OSError:
            pass
        os._exit(0)
    threading.Thread(target=watch, daemon=True).start()


def serve(op_path, spec_path, socket_path, ready_path, seeds, ref_device, watch_parent=True):
    """Runs the server until stdin closes; returns an exit status only for startup failures."""
    if watch_parent:
        _exit_with_parent()
    t0 = time.perf_counter()
    try:
        import torch
        if not torch.cuda.is_available():
            raise UserError(op_path, 0, "serve", "no CUDA device: the reference server serves "
                            "from the GPU", "verify on a machine with a GPU")
        with open(spec_path, encoding="utf-8") as f:
            doc = json.load(f)
        refs = References(op_path, doc, seeds, ref_device)
        try:
            os.unlink(socket_path)
        except FileNotFoundError:
            pass
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(socket_path)
        srv.listen(16)
        refs.warm_up()
    except FrontendError as e:
        _write_json(ready_path, dict(ok=False, **e.to_json()))
        return e.exit_code
    except Exception as e:  # noqa: B902 - a bug must still say what happened
        err = internal_from(e)
        _write_json(ready_path, dict(ok=False, **err.to_json()))
        return 2
    _write_json(ready_path, {"ok": True, "pid": os.getpid(), "sets": refs.n_sets,
                             "device": str(refs.serve_device),
                             "compute_device": refs.compute_device.type,
                             "set_bytes": refs.set_bytes, "resident": refs.keep,
                             "startup_ms": (time.perf_counter() - t0) * 1e3})
    while True:
        conn, _ = srv.accept()
        _serve_connection(refs, conn)
