"""Assemble spec.json (schema 2, docs/SPEC.md) from a captured, normalized ExportedProgram.

Arguments become ``{"node"|"scalar"|"bool"|"none"|"list"|...}`` objects; attrs stay plain JSON
values.  Placeholders of parameters, buffers and constants are referred to by their dotted
names (``norm.weight``); ops that only alias or assert disappear (their users read their input);
0-d constants (``scalar_tensor``, and ``torch.tensor(0.5)`` written in forward) become scalar
operands; nodes no user output reads (the
running-stat updates of a batch norm in training mode) are left out.
"""

import math
import operator
import sys

import torch

from . import SCHEMA, canonical, rng, tracer
from .errors import UserError


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _finite(x):
    """JSON has no inf/nan: infinities become +-DBL_MAX (same effect in clamp/min/max)."""
    if isinstance(x, float) and math.isinf(x):
        return math.copysign(sys.float_info.max, x)
    if isinstance(x, float) and math.isnan(x):
        raise UserError("", 0, "nan", "a NaN constant cannot be written to the spec",
                        "replace float('nan') in forward by a tensor input or a finite value")
    return x


class _Encoder:
    """Encodes fx arguments, resolving placeholders, aliases and inlined constants."""

    def __init__(self):
        self.ref = {}  # fx node name -> encoded argument

    def arg(self, v):
        if v is _RNG:
            return {"node": rng.INPUT}
        if isinstance(v, torch.fx.Node):
            return self.ref.get(v.name, {"node": v.name})
        if isinstance(v, bool):
            return {"bool": v}
        if isinstance(v, (int, float)):
            return {"scalar": _finite(v)}
        if v is None:
            return {"none": True}
        if isinstance(v, (list, tuple, torch.Size)):
            return {"list": [self.arg(x) for x in v]}
        if isinstance(v, str):
            return {"string": v}
        if isinstance(v, torch.dtype):
            return {"dtype": dtype_name(v)}
        if isinstance(v, dict):
            return {"dict": {str(k): self.arg(x) for k, x in v.items()}}
        return {"string": str(v)}

    def attr(self, v):
        if isinstance(v, torch.fx.Node):
            return self.arg(v)
        if isinstance(v, (bool, int, str)) or v is None:
            return v
        if isinstance(v, float):
            return _finite(v)
        if isinstance(v, (list, tuple, torch.Size)):
            return [self.attr(x) for x in v]
        if isinstance(v, torch.dtype):
            return dtype_name(v)
        if isinstance(v, dict):
            return {str(k): self.attr(x) for k, x in v.items()}
        return str(v)


DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int8", "uint8", "bool")


def _meta(val):
    return {"shape": list(val.shape), "dtype": dtype_name(val.dtype)}


def _result(val):
    """How a node's value is described: (result kind, shape, dtype, extra fields).

    Every node gets a shape (list of ints) and a dtype from DTYPES so the generator can read
    it; ``result`` says what the value really is: ``tensor`` or ``tuple`` (several values, e.g.
    ``torch.max(x, dim)``: shape and dtype of the first tensor, all of them in ``tuple``)."""
    if isinstance(val, torch.Tensor):
        return "tensor", list(val.shape), dtype_name(val.dtype), {}
    if isinstance(val, (tuple, list)):
        elems = [_meta(v) if isinstance(v, torch.Tensor) else None for v in val]
        first = next((e for e in elems if e), {"shape": [], "dtype": "float32"})
        return "tuple", first["shape"], first["dtype"], {"tuple": elems}
    return "other", [], "float32", {}


def _check_dtype(dtype, file, line, op, what):
    if dtype not in DTYPES:
        raise UserError(file, line, op, "%s has dtype %s, which EGG does not support" % (
            what, dtype), "use one of: " + " ".join(DTYPES))


def _lookup(model, dotted):
    obj = model
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, torch.Tensor) else None


def collect_params(model, names=()):
    """[(name, tensor, kind)]: the model's parameters and buffers, then the tensor attributes
    named in ``names`` that are neither (constants the forward reads, kept as buffers)."""
    out, seen = [], set()
    for name, p in model.named_parameters():
        out.append((name, p, "parameter"))
        seen.add(name)
    for name, b in model.named_buffers():
        if name not in seen:
            out.append((name, b, "buffer"))
            seen.add(name)
    for name in names:
        t = _lookup(model, name)
        if name not in seen and t is not None:
            out.append((name, t, "buffer"))
            seen.add(name)
    return out


def inline_constant(ep, op, spec):
    """The Python number a 0-d tensor constant that forward creates (``torch.tensor(0.5)``, no
    attribute of the model) stands for, or None: such a constant becomes a scalar operand."""
    from torch.export.graph_signature import InputKind
    if spec.kind != InputKind.CONSTANT_TENSOR or _lookup(op.model, spec.target) is not None:
        return None
    value = ep.constants.get(spec.target)
    if not isinstance(value, torch.Tensor) or value.dim() != 0 or value.device.type == "meta":
        return None
    if value.dtype.is_complex:
        return None
    return value.item()


def constant_names(ep, op, user_files):
    """Dotted names of the tensor constants the exported forward reads; a constant that is no
    attribute of the model (``torch.tensor([...])`` written in forward) is a UserError, unless it
    is 0-d (inline_constant: a scalar operand)."""
    from torch.export.graph_signature import InputKind
    names = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind != InputKind.CONSTANT_TENSOR or inline_constant(ep, op, spec) is not None:
            continue
        if _lookup(op.model, spec.target) is None:
            users = [n for n in ep.graph.nodes if n.name == spec.arg.name]
            user = next(iter(users[0].users), None) if users else None
            file, line, code = tracer.location(user, user_files) if user else ("", 0, "")
            raise UserError(file or op.path, line, "constant",
                            "forward creates a tensor constant%s; EGG keeps constants as "
                            "parameters or buffers of the model" % (
                                " (`%s`)" % code if code else ""),
                            "create it once in __init__ with self.register_buffer(name, "
                            "tensor) and read self.<name> in forward")
        names.append(spec.target)
    return names


def _live(ep, user_outputs):
    """Names of the nodes the user outputs depend on."""
    nodes = {n.name: n for n in ep.graph.nodes}
    live, todo = set(), [nodes[a.name] for a in user_outputs if a.name in nodes]
    while todo:
        n = todo.pop()
        if n.name in live:
            continue
        live.add(n.name)
        todo.extend(n.all_input_nodes)
    return live


def _module_path(node):
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return ""
    path = list(stack.values())[-1][0]
    return path if isinstance(path, str) else ""


def _collapses(node, live):
    """True when only element 0 of a tuple-valued node is read."""
    for user in node.users:
        if user.name not in live:
            continue
        if user.target is not operator.getitem or user.args[1] != 0:
            return False
    return True


def build(op, ep, inputs, params, user_files):
    """The spec dict minus ``deps`` and ``reference``; raises UserError for bad outputs."""
    from torch.export.graph_signature import InputKind, OutputKind
    sig = ep.graph_signature
    outs = [o for o in sig.output_specs if o.kind == OutputKind.USER_OUTPUT]
    user_args = [o.arg for o in outs if hasattr(o.arg, "name") and o.arg.name]
    live = _live(ep, user_args)
    enc = _Encoder()
    spec_inputs, nodes = [], []
    n_in = 0
    for s in sig.input_specs:
        if s.kind == InputKind.USER_INPUT and not isinstance(inputs[n_in], torch.Tensor):
            # A Python number: export specialized the graph to its value (no kernel operand).
            n_in += 1
        elif s.kind == InputKind.USER_INPUT:
            t = inputs[n_in]
            name = s.arg.name
            _check_dtype(dtype_name(t.dtype), op.path, op.def_line("get_inputs"),
                         "get_inputs", "forward input %d (%s)" % (n_in, name))
            spec_inputs.append({"name": name, "shape": list(t.shape),
                                "dtype": dtype_name(t.dtype)})
            enc.ref[s.arg.name] = {"node": name}
            n_in += 1
        elif (value := inline_constant(ep, op, s)) is not None:
            enc.ref[s.arg.name] = enc.arg(value)
        elif s.target is not None:
            enc.ref[s.arg.name] = {"node": s.target}
    collapsed = set()
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.name not in live:
            continue
        file, line, code = tracer.location(node, user_files)
        if canonical.is_transparent(node.target):
            enc.ref[node.name] = enc.arg(node.args[0])
            continue
        if node.target is operator.getitem and node.args[0].name in collapsed:
            enc.ref[node.name] = enc.arg(node.args[0])
            continue
        canon = canonical.canonicalize(node.target, node.args, node.kwargs)
        val = node.meta.get("val")
        if canon.op == "full" and canon.attrs.get("size") == [] and \
                not any(node.name == a.name for a in user_args):
            enc.ref[node.name] = enc.arg(canon.attrs.get("fill_value"))  # a 0-d constant
            continue
        if canon.op == "clone" and node.args and "scalar" in enc.arg(node.args[0]) and \
                not any(node.name == a.name for a in user_args):
            enc.ref[node.name] = enc.arg(node.args[0])  # export's copy of an inlined constant
            continue
        if _identity_view(canon, node) and not any(node.name == a.name for a in user_args):
            enc.ref[node.name] = enc.arg(node.args[0])  # permute(0, 1, ..): x as it is
            continue
        if canon.first and _collapses(node, live):
            collapsed.add(node.name)
            val = val[0]
        elif canon.first and "return_indices" in canon.attrs:
            canon.attrs["return_indices"] = True
        op_name = "getitem" if node.target is operator.getitem else canon.op
        if op_name == "dropout":
            canon.args.append(_rng_input(spec_inputs, op))
        kind, shape, dtype, extra = _result(val)
        _check_dtype(dtype, file or op.path, line, op_name, "the result of " + op_name)
        entry = {"name": node.name, "op": op_name,
                 "target": canonical.qualified_target(node.target),
                 "args": [enc.arg(a) for a in canon.args],
                 "attrs": {k: enc.attr(v) for k, v in canon.attrs.items()},
                 "shape": shape, "dtype": dtype, "result": kind}
        entry.update(extra)
        module = _module_path(node)
        if module:
            entry["module"] = module
        entry.update({"file": file or op.path, "line": line, "code": code})
        nodes.append(entry)
    for name, t, _ in params:
        _check_dtype(dtype_name(t.dtype), op.path, op.def_line("Model"), "Model",
                     "parameter/buffer %s" % name)
    outputs = _outputs(op, ep, outs, enc)
    return {
        "schema": SCHEMA,
        "op_file": op.path,
        "model_class": "Model",
        "init_inputs": [enc.attr(v) for v in op.init_inputs],
        "inputs": spec_inputs,
        "params": [{"name": n, "shape": list(t.shape), "dtype": dtype_name(t.dtype), "kind": k}
                   for n, t, k in params],
        "nodes": _read_by_outputs(_cross_entropy(nodes, outputs), outputs),
        "outputs": outputs,
    }


def _identity_view(canon, node):
    """A permute that keeps every dim in place, or a transpose of a dim with itself (what
    torch.tensordot and einsum write around a contraction): no view at all."""
    val = node.meta.get("val")
    rank = len(val.shape) if isinstance(val, torch.Tensor) else -1
    if canon.op == "permute":
        dims = [d % rank if rank > 0 else d for d in (canon.attrs.get("dims") or [])]
        return rank >= 0 and dims == list(range(rank))
    if canon.op == "transpose" and rank > 0:
        return canon.attrs.get("dim0") % rank == canon.attrs.get("dim1") % rank
    return False


def _rng_input(spec_inputs, op):
    """The operand a dropout node draws from: the input ``egg_rng`` ([seed, offset], kind "rng",
    after the forward's own inputs), added on first use."""
    if not any(i["name"] == rng.INPUT for i in spec_inputs):
        spec_inputs.append({"name": rng.INPUT, "shape": [2], "dtype": "int64", "kind": "rng"})
    elif spec_inputs[-1].get("kind") != "rng":
        raise UserError(op.path, op.def_line("Model"), "forward",
                        "forward has an input named %s, the name of the random state EGG adds "
                        "for dropout" % rng.INPUT, "rename that forward argument")
    return _RNG


class _RngOperand:
    """The operand ``egg_rng`` in a canonical call's arguments (encoded as that input)."""


_RNG = _RngOperand()


def _node_refs(arg, out):
    """Adds the node names an encoded argument reads (lists included) to ``out``."""
    if isinstance(arg, dict):
        if "node" in arg:
            out.add(arg["node"])
        for item in arg.get("list", []):
            _node_refs(item, out)
    return out


def _cross_entropy(nodes, outputs):
    """``nll_loss(log_softmax(x, 1), t)`` without class weights is ``cross_entropy(x, t)``, as
    F.cross_entropy computes it: one pass over x instead of writing and reading its log_softmax
    (dropped after, unless something else reads it)."""
    by_name = {n["name"]: n for n in nodes}
    readers = {}
    for n in nodes:
        for name in _node_refs({"list": n["args"]}, set()):
            readers[name] = readers.get(name, 0) + 1
    for o in outputs:
        readers[o["node"]] = readers.get(o["node"], 0) + 1
    for n in nodes:
        src = by_name.get(n["args"][0].get("node")) if n["op"] == "nll_loss" and n["args"] else None
        if (src is None or src["op"] != "log_softmax" or len(src["shape"]) != 2 or
                src["attrs"].get("dim") not in (1, -1) or src["attrs"].get("dtype") is not None or
                readers.get(src["name"]) != 1 or n["args"][2:3] not in ([], [{"none": True}])):
            continue
        n["op"] = "cross_entropy"
        n["args"] = [src["args"][0], n["args"][1], {"none": True}]
        n["attrs"] = dict(n["attrs"], label_smoothing=0.0)
    return nodes


def _read_by_outputs(nodes, outputs):
    """The nodes the outputs read through the spec's own arguments: an operand a canonical op does
    not keep (the tensor ``zeros_like(t)`` takes only its shape from) leaves its producers dead."""
    needed = {o["node"] for o in outputs}
    for n in reversed(nodes):
        if n["name"] in needed:
            for a in n["args"]:
                _node_refs(a, needed)
    return [n for n in nodes if n["name"] in needed]


def _outputs(op, ep, outs, enc):
    line = op.forward_return_line()
    if not outs:
        raise UserError(op.path, line, "output", "forward returns no tensor",
                        "return a tensor or a tuple of tensors")
    vals = {n.name: n.meta.get("val") for n in ep.graph.nodes}
    outputs = []
    for i, out in enumerate(outs):
        what = "forward's output" if len(outs) == 1 else "forward's output %d" % i
        name = getattr(out.arg, "name", "")
        val = vals.get(name) if name else None
        if not isinstance(val, torch.Tensor):
            value = getattr(out.arg, "value", val)
            raise UserError(op.path, line, "output", "%s is %s, not a tensor"
                            % (what, type(value).__name__ if value is not None else "None"),
                            "return a tensor (or a tuple/list of tensors) from forward")
        ref = enc.arg(next(n for n in ep.graph.nodes if n.name == name))
        if "node" not in ref:
            raise UserError(op.path, line, "output", "%s is a constant, not a computed tensor"
                            % what, "return a tensor computed from the inputs")
        outputs.append({"name": "out%d" % i, "node": ref["node"], "shape": list(val.shape),
                        "dtype": dtype_name(val.dtype)})
    return outputs
