"""Capture ``Model.forward`` with torch.export at the declared shapes and normalize it.

``capture`` exports the model non-strictly (the forward runs as Python on fake tensors made
from the declared inputs: no memory, no arithmetic, whatever the op's size) and runs torch's
decompositions without the ops EGG keeps (``canonical.decompositions()``), which also
functionalizes in-place ops.  Each node keeps the user's file and line (``stack_trace``).
A capture that fails is a UserError naming the user's file, line and op; a forward that draws
random numbers is refused, one that changes its input in place is warned about.
"""

import contextlib
import inspect
import io
import logging
import os
import re
import sys
import warnings

import torch

from . import canonical
from .errors import UserError, describe, one_line, user_frame

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in [^\n]*\n([^\n]*)')


@contextlib.contextmanager
def _quiet():
    """torch.export logs failed meta kernels and guards at ERROR/WARNING, prints the partial graph
    of a failed export on stderr and warns about its own deprecations; the frontend reports a
    failure itself, once."""
    logging.disable(logging.CRITICAL)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logging.disable(logging.NOTSET)


@contextlib.contextmanager
def _full_stacks():
    """Node stack traces from the first ``forward`` frame on: torch.export keeps only the
    ``forward`` frames by default, which loses the line in a helper function forward calls
    (``_filter_traceback_frames`` is fx's hook for this filtering)."""
    base = torch.fx.proxy.TracerBase
    saved = base._filter_traceback_frames

    def from_forward(self, summary):
        only = self._record_forward_stack_traces_only
        self._record_forward_stack_traces_only = False
        try:
            return saved(self, summary)
        finally:
            self._record_forward_stack_traces_only = only

    base._filter_traceback_frames = from_forward
    try:
        yield
    finally:
        base._filter_traceback_frames = saved


def _fake(inputs):
    """Fake CPU tensors of the inputs' shapes, strides and dtypes (meta or real inputs)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode(allow_non_fake_inputs=True):
        return tuple(torch.empty_strided(tuple(t.shape), tuple(t.stride()), dtype=t.dtype,
                                         device="cpu") if isinstance(t, torch.Tensor) else t
                     for t in inputs)


def capture(op, inputs, user_files):
    """The normalized ExportedProgram of ``op.model`` at the shapes of ``inputs``; random ops
    are refused as exported (``bernoulli``, a dropout not called as F.dropout: rng.py), before
    decompositions rename them."""
    try:
        with _quiet(), _full_stacks(), canonical.python_ops():
            torch.manual_seed(0)
            ep = torch.export.export(op.model, _fake(inputs), strict=False)
    except Exception as e:  # noqa: B902 - every capture failure is the op's, named by its line
        raise _capture_error(op, e, user_files) from None
    refuse_random(ep, op, user_files)
    try:
        with _quiet():
            return ep.run_decompositions(canonical.decompositions())
    except Exception as e:  # noqa: B902
        raise _capture_error(op, e, user_files) from None


def _failing_op(exc):
    """The innermost ATen op being run when ``exc`` was raised (a meta kernel's check), or None."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        func = tb.tb_frame.f_locals.get("func")
        if isinstance(func, torch._ops.OpOverload):
            found = func
        tb = tb.tb_next
    return found


def _data_dependent(exc):
    from torch._subclasses.fake_tensor import (DataDependentOutputException,
                                               DynamicOutputShapeException)
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
    return isinstance(exc, (GuardOnDataDependentSymNode, DataDependentOutputException,
                            DynamicOutputShapeException)) or "data-dependent" in str(exc)


def _capture_error(op, exc, user_files):
    file, line = user_frame(exc, user_files)
    file, line = file or op.path, line or op.def_line("Model")
    if _data_dependent(exc):
        return UserError(file, line, "forward",
                         "data-dependent control flow: forward branches or loops on a tensor's "
                         "value, which tracing cannot follow (%s)" % describe(exc),
                         "compute both branches and select with torch.where, or decide from "
                         "constants fixed in __init__ / shapes")
    import torch._dynamo.exc as dynamo_exc
    if isinstance(exc, (dynamo_exc.Unsupported, dynamo_exc.UserError)):
        return UserError(file, line, "forward", "forward cannot be traced: %s" % describe(exc),
                         "forward must be a tensor program torch.export can capture "
                         "(torch.export non-strict mode)")
    failing = _failing_op(exc)
    return UserError(file, line, canonical.canonical_name(failing) if failing else "forward",
                     "forward failed on the declared inputs: %s" % describe(exc),
                     "check the shapes and dtypes get_inputs() gives this op")


def check_arity(op, inputs):
    """UserError unless ``inputs`` fit the parameters of ``Model.forward``."""
    params = list(inspect.signature(op.model.forward).parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
    if (len(inputs) > len(positional) and not varargs) or len(inputs) < len(required):
        raise UserError(op.path, op.def_line("get_inputs"), "get_inputs",
                        "get_inputs() returns %d tensors but forward takes %d inputs (%s)"
                        % (len(inputs), len(positional), ", ".join(p.name for p in positional)),
                        "return exactly one tensor per forward argument, in order")


def refuse_random(ep, op, user_files):
    """Refuses ATen ops that draw random numbers (PyTorch tags them ``nondeterministic_seeded``:
    torch.rand*, randn*, randint*, randperm, bernoulli, normal_, ...; F.dropout in training mode
    is captured as egg::dropout instead, rng.py).

    A random forward has no single reference output, and a draw made while tracing would be
    frozen into the kernel as a constant."""
    for node in ep.graph.nodes:
        if node.op != "call_function" or \
                not canonical.draws_random(node.target, node.args, node.kwargs):
            continue
        name = node.target._schema.name.split("::")[-1]
        file, line, _ = location(node, user_files)
        dropout = "dropout" in name or name.startswith("bernoulli")
        raise UserError(
            file or op.path, line, name,
            "forward draws random numbers (%s) from PyTorch's generator, which EGG's kernels "
            "cannot reproduce, so there is no reference to verify a kernel against" % name,
            "EGG generates dropout written as F.dropout, nn.Dropout or attention's dropout_p "
            "(each element kept or zeroed, from the kernel's egg_rng input); for other dropout "
            "use p=0 or call "
            "self.eval() in __init__" if dropout else
            "create random tensors in get_inputs() (or as parameters in __init__) and pass "
            "them to forward")


def warn_mutations(ep, op, user_files):
    """A warning per forward input that forward changes in place, and one for the buffers (model
    state) it changes (export records each new value as a ``USER_INPUT_MUTATION`` or
    ``BUFFER_MUTATION`` output): a model in training mode with hundreds of BatchNorm layers gets
    one line naming the first few, not three per layer."""
    from torch.export.graph_signature import OutputKind
    nodes = {n.name: n for n in ep.graph.nodes}
    state = []
    for out in ep.graph_signature.output_specs:
        if out.kind not in (OutputKind.USER_INPUT_MUTATION, OutputKind.BUFFER_MUTATION):
            continue
        node = nodes.get(getattr(out.arg, "name", ""))
        file, line, code = location(node, user_files) if node is not None else ("", 0, "")
        if out.kind == OutputKind.BUFFER_MUTATION:
            state.append((out.target, file, line, code))
            continue
        sys.stderr.write("egg: warning: %s:%d: forward: forward changes its input %s in place "
                         "(%s); the generated kernel leaves its inputs unchanged, so code that "
                         "relies on the change differs from it\n"
                         % (file or op.path, line, out.target,
                            one_line(code or "an in-place operation")))
        sys.stderr.write("egg: hint: compute a new tensor instead (x = x + 1, not x += 1 or "
                         "x.add_(1))\n")
    if not state:
        return
    target, file, line, code = state[0]
    shown = ", ".join("self." + t for t, _, _, _ in state[:3])
    more = " and %d more" % (len(state) - 3) if len(state) > 3 else ""
    sys.stderr.write("egg: warning: %s:%d: forward: forward changes the model's state %s%s (%s); "
                     "the generated kernel computes the outputs from its inputs and keeps no "
                     "state between calls\n"
                     % (file or op.path, line, shown, more,
                        one_line(code or "an in-place operation")))
    sys.stderr.write("egg: hint: pass the state in as an input and return the new one (a "
                     "BatchNorm in training mode updates its running statistics; the kernel "
                     "normalizes with the batch's, as forward does)\n")


def location(node, user_files):
    """(file, line, code) of a node: innermost stack frame in a user file, else the last one."""
    text = node.meta.get("stack_trace") or ""
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

