"""Trace ``Model.forward`` with torch.fx and propagate shapes with the declared inputs.

Modules that canonical.py knows (nn.ReLU, nn.Linear, ...) stay leaves so they can
be turned into their functional form; everything else is traced through.  Each
node keeps the user's file and line (``record_stack_traces``).
"""

import os
import re

import torch
import torch.fx as fx
from torch.fx.node import map_aggregate
from torch.fx.passes.shape_prop import ShapeProp, _extract_tensor_metadata

from . import canonical
from .errors import UserError, describe, user_frame

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n([^\n]*)')


class EggTracer(fx.Tracer):
    """fx tracer keeping stack traces; canonicalizable modules are leaves."""

    def __init__(self):
        super().__init__()
        self.record_stack_traces = True

    def is_leaf_module(self, m, module_qualified_name):
        if canonical.module_builder(m) is not None:
            return True
        return super().is_leaf_module(m, module_qualified_name)


def trace(op, user_files):
    """GraphModule of ``op.model``; UserError (op ``forward``) when it cannot be traced."""
    tracer = EggTracer()
    try:
        graph = tracer.trace(op.model)
    except Exception as e:
        file, line = user_frame(e, user_files)
        text = str(e)
        if "control flow" in text or "iterat" in text or "bool" in text.lower() and \
                "Proxy" in text:
            message = ("data-dependent control flow: forward branches or loops on a tensor's "
                       "value, which tracing cannot follow (%s)" % describe(e))
            hint = ("compute both branches and select with torch.where, or decide from "
                    "constants fixed in __init__ / shapes")
        else:
            message = "forward cannot be traced: %s" % describe(e)
            hint = "forward must be a traceable tensor program (see torch.fx limitations)"
        raise UserError(file or op.path, line or op.def_line("Model"), "forward", message, hint)
    return fx.GraphModule(tracer.root, graph, "Model")


class NodeFailure(Exception):
    """A node raised while propagating shapes."""

    def __init__(self, node, exc):
        super().__init__(str(exc))
        self.node = node
        self.exc = exc


class EggShapeProp(ShapeProp):
    """ShapeProp that records every node's value kind and reports the failing node."""

    def run_node(self, n):
        try:
            result = fx.Interpreter.run_node(self, n)
        except Exception as e:
            raise NodeFailure(n, e) from e
        found = [False]

        def extract(obj):
            if isinstance(obj, torch.Tensor):
                found[0] = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        if isinstance(result, (bool, int, float)) or result is None:
            n.meta["egg_value"] = result
        elif isinstance(result, torch.Size):
            n.meta["egg_value"] = list(result)
        return result


def propagate(gm, inputs):
    """Run the graph on ``inputs`` (no grad, seed 0) recording shapes; raises NodeFailure."""
    torch.manual_seed(0)
    with torch.no_grad():
        return EggShapeProp(gm).propagate(*inputs)


def propagate_fake(gm, inputs):
    """``propagate`` on fake tensors made from ``inputs`` (meta or real): shapes and dtypes
    without memory or arithmetic. Raises whatever an op without a fake implementation raises."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    with mode:
        fake = [torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                                    device="cpu") for t in inputs]
        torch.manual_seed(0)
        with torch.no_grad():
            return EggShapeProp(gm).propagate(*fake)


def location(node, user_files):
    """(file, line, code) of a node: innermost stack frame in a user file, else the last one."""
    text = node.stack_trace or ""
    frames = _FRAME.findall(text)
    if not frames:
        return ("", 0, "")
    files = {os.path.realpath(f) for f in user_files}
    chosen = None
    for fn, line, code in frames:
        if os.path.realpath(fn) in files:
            chosen = (os.path.realpath(fn), int(line), code.strip())
    if chosen is None:
        fn, line, code = frames[-1]
        chosen = (fn, int(line), code.strip())
    return chosen
