"""Trace ``Model.forward`` with torch.fx and propagate shapes with the declared inputs.

Modules that canonical.py knows (nn.ReLU, nn.Linear, ...) stay leaves so they can
be turned into their functional form; everything else is traced through.  Each
node keeps the user's file and line (``record_stack_traces``).
"""

import operator
import os
import re
import sys
import traceback

import torch
import torch.fx as fx
from torch.fx.node import map_aggregate
from torch.fx.passes.shape_prop import ShapeProp, _extract_tensor_metadata
from torch.utils._python_dispatch import TorchDispatchMode

from . import canonical
from .errors import UserError, describe, one_line, user_frame

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


class RandomOpGuard(TorchDispatchMode):
    """Refuses ATen ops that draw random numbers (PyTorch tags them ``nondeterministic_seeded``:
    torch.rand*, randn*, randint*, randperm, bernoulli, dropout in training mode, normal_, ...).

    A random forward has no single reference output, and a draw made while tracing would be
    frozen into the kernel as a constant.  ``where()`` gives the (file, line) to blame."""

    def __init__(self, op_path, where):
        super().__init__()
        self.op_path = op_path
        self.where = where

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
            name = getattr(getattr(func, "overloadpacket", func), "__name__", str(func))
            file, line = self.where()
            dropout = name in ("bernoulli", "bernoulli_", "native_dropout", "dropout")
            raise UserError(
                file or self.op_path, line, name,
                "forward draws random numbers (%s): its output differs on every call, so there "
                "is no reference to verify a kernel against" % name,
                "dropout is random in training mode: remove it, use p=0, or call self.eval() in "
                "__init__" if dropout else
                "create random tensors in get_inputs() (or as parameters in __init__) and pass "
                "them to forward")
        return func(*args, **(kwargs or {}))


def _stack_location(user_files):
    """(file, line) of the innermost frame of the running stack in a user file."""
    files = {os.path.realpath(f) for f in user_files}
    found = (None, 0)
    for frame in traceback.extract_stack():
        if os.path.realpath(frame.filename) in files:
            found = (os.path.realpath(frame.filename), frame.lineno)
    return found


def trace(op, user_files):
    """GraphModule of ``op.model``; UserError (op ``forward``) when it cannot be traced."""
    tracer = EggTracer()
    try:
        with RandomOpGuard(op.path, lambda: _stack_location(user_files)):
            graph = tracer.trace(op.model)
    except UserError:
        raise
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
    gm = fx.GraphModule(tracer.root, graph, "Model")
    gm.meta["egg_op_path"] = op.path
    gm.meta["egg_user_files"] = list(user_files)
    return gm


class NodeFailure(Exception):
    """A node raised while propagating shapes."""

    def __init__(self, node, exc):
        super().__init__(str(exc))
        self.node = node
        self.exc = exc


class EggShapeProp(ShapeProp):
    """ShapeProp that records every node's value kind and reports the failing node."""

    def run_node(self, n):
        self.current = n
        try:
            result = fx.Interpreter.run_node(self, n)
        except UserError:
            raise
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
    """Run the graph on ``inputs`` (no grad, seed 0) recording shapes; raises NodeFailure, or a
    UserError for a random op.  A forward that changes an input in place is warned about."""
    torch.manual_seed(0)
    with torch.no_grad():
        return _checked_run(gm, inputs)


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
            return _checked_run(gm, fake)


def _checked_run(gm, inputs):
    """EggShapeProp over ``inputs`` under the random-op guard; warns about inputs written in place
    (an in-place node on the input, or its version counter moved)."""
    user_files = gm.meta.get("egg_user_files", [])
    op_path = gm.meta.get("egg_op_path", "")
    versions = [t._version for t in inputs]
    prop = EggShapeProp(gm)
    prop.current = None

    def where():
        if prop.current is None:
            return (None, 0)
        file, line, _ = location(prop.current, user_files)
        return (file, line)

    with RandomOpGuard(op_path, where):
        result = prop.propagate(*inputs)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, (before, t) in enumerate(zip(versions, inputs)):
        written = i < len(placeholders) and any(
            _in_place(user) and user.args and user.args[0] is placeholders[i]
            for user in placeholders[i].users)
        if written or t._version != before:
            _warn_mutation(gm, i, op_path, user_files)
    return result


def _in_place(node):
    """True for a node that writes into its first argument (x.add_(1), x[i] = v, x += 1)."""
    if node.op == "call_function" and node.target in (operator.setitem, operator.iadd,
                                                      operator.isub, operator.imul,
                                                      operator.itruediv):
        return True
    name = node.target if node.op == "call_method" else getattr(node.target, "__name__", "")
    return isinstance(name, str) and name.endswith("_") and not name.startswith("_")


def _warn_mutation(gm, index, op_path, user_files):
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    arg = placeholders[index] if index < len(placeholders) else None
    file, line, what = op_path, 0, "an in-place operation"
    for node in gm.graph.nodes:
        if arg is not None and node.args and node.args[0] is arg and _in_place(node):
            f, line, code = location(node, user_files)
            file, what = f or op_path, code or str(node.target)
            break
    name = arg.target if arg is not None else "#%d" % index
    sys.stderr.write("egg: warning: %s:%d: forward: forward changes its input %s in place (%s); "
                     "the generated kernel leaves its inputs unchanged, so code that relies on "
                     "the change differs from it\n" % (file, line, name, one_line(what)))
    sys.stderr.write("egg: hint: compute a new tensor instead (x = x + 1, not x += 1 or "
                     "x.add_(1))\n")


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
