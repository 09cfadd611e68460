"""Assemble spec.json (schema 1, docs/SPEC.md) from a traced, shape-propagated graph.

Arguments become ``{"node"|"scalar"|"bool"|"none"|"list"|...}`` objects; attrs stay
plain JSON values.  In-place ops (``x.relu_()``, ``inplace=True``) are functionalized:
later uses of the mutated value refer to the in-place node.
"""

import math
import sys

import torch
from torch.fx.node import Node
from torch.fx.passes.shape_prop import TensorMetadata

from . import SCHEMA, canonical, tracer
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
    """Encodes fx arguments, resolving in-place aliases and constant placeholders."""

    def __init__(self):
        self.ref = {}     # fx node name -> encoded argument
        self.consts = {}  # fx node name -> Python constant (forward defaults)

    def arg(self, v):
        if isinstance(v, Node):
            return self.ref.get(v.name, {"node": v.name})
        if isinstance(v, canonical.ParamRef):
            return {"node": v.name}
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
        if isinstance(v, slice):
            return {"slice": [self.arg(v.start), self.arg(v.stop), self.arg(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if isinstance(v, dict):
            return {"dict": {str(k): self.arg(x) for k, x in v.items()}}
        return {"string": str(v)}

    def attr(self, v):
        if isinstance(v, Node) and v.name in self.consts:
            return self.attr(self.consts[v.name])
        if isinstance(v, (Node, canonical.ParamRef)):
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
_SCALAR_DTYPE = {bool: "bool", int: "int64", float: "float64"}


def _shape_dtype(node):
    meta = node.meta.get("tensor_meta")
    if isinstance(meta, TensorMetadata):
        return list(meta.shape), dtype_name(meta.dtype)
    return None, None


def _result(node):
    """How a node's value is described: (result kind, shape, dtype, extra fields).

    Every node gets a shape (list of ints) and a dtype from DTYPES so the generator can
    read it; ``result`` says what the value really is: ``tensor``, ``tuple`` (several
    values, e.g. ``torch.max(x, dim)``: shape and dtype of the first tensor, all of them
    in ``tuple``), ``scalar`` (a Python number: shape [], ``value``), ``size`` (a
    ``torch.Size``: shape [rank], ``value``) or ``other``.
    """
    shape, dtype = _shape_dtype(node)
    if shape is not None:
        return "tensor", shape, dtype, {}
    meta = node.meta.get("tensor_meta")
    if isinstance(meta, (tuple, list)):
        elems = [{"shape": list(m.shape), "dtype": dtype_name(m.dtype)}
                 if isinstance(m, TensorMetadata) else None for m in meta]
        first = next((e for e in elems if e), {"shape": [], "dtype": "float32"})
        return "tuple", first["shape"], first["dtype"], {"tuple": elems}
    if "egg_value" in node.meta:
        value = node.meta["egg_value"]
        if isinstance(value, list):
            return "size", [len(value)], "int64", {"value": value}
        if type(value) in _SCALAR_DTYPE:
            return "scalar", [], _SCALAR_DTYPE[type(value)], {"value": _finite(value)}
    return "other", [], "float32", {}


def _check_dtype(dtype, file, line, op, what):
    if dtype not in DTYPES:
        raise UserError(file, line, op, "%s has dtype %s, which EGG does not support" % (
            what, dtype), "use one of: " + " ".join(DTYPES))


def collect_params(model, gm):
    """[(name, tensor, kind)] for parameters, buffers and tensor constants of the graph."""
    out, seen = [], set()
    for name, p in model.named_parameters():
        out.append((name, p, "parameter"))
        seen.add(name)
    for name, b in model.named_buffers():
        if name not in seen:
            out.append((name, b, "buffer"))
            seen.add(name)
    for node in gm.graph.nodes:
        if node.op == "get_attr" and node.target not in seen:
            obj = gm
            for part in node.target.split("."):
                obj = getattr(obj, part, None)
            if isinstance(obj, torch.Tensor):
                out.append((node.target, obj, "buffer"))
                seen.add(node.target)
    return out


def build(op, gm, inputs, params, user_files):
    """The spec dict minus ``deps`` and ``reference``; raises UserError for bad outputs."""
    enc = _Encoder()
    modules = dict(gm.named_modules())
    spec_inputs, nodes, outputs = [], [], []
    n_in = 0
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            name = str(node.target).lstrip("*")
            if n_in < len(inputs):
                t = inputs[n_in]
                _check_dtype(dtype_name(t.dtype), op.path, op.def_line("get_inputs"),
                             "get_inputs", "forward input %d (%s)" % (n_in, name))
                spec_inputs.append({"name": name, "shape": list(t.shape),
                                    "dtype": dtype_name(t.dtype)})
                enc.ref[node.name] = {"node": name}
            else:  # a forward parameter left at its default: a constant
                enc.consts[node.name] = node.args[0] if node.args else None
                enc.ref[node.name] = enc.arg(enc.consts[node.name])
            n_in += 1
        elif node.op == "get_attr":
            enc.ref[node.name] = {"node": node.target}
        elif node.op in ("call_function", "call_method", "call_module"):
            module = modules.get(node.target) if node.op == "call_module" else None
            canon = canonical.canonicalize(node, module, node.target if module else "")
            file, line, code = tracer.location(node, user_files)
            kind, shape, dtype, extra = _result(node)
            _check_dtype(dtype, file or op.path, line, canon.op, "the result of " + canon.op)
            entry = {"name": node.name, "op": canon.op,
                     "target": canonical.qualified_target(node, module),
                     "args": [enc.arg(a) for a in canon.args],
                     "attrs": {k: enc.attr(v) for k, v in canon.attrs.items()},
                     "shape": shape, "dtype": dtype, "result": kind}
            entry.update(extra)
            if module is not None:
                entry["module"] = node.target
            entry.update({"file": file or op.path, "line": line, "code": code})
            nodes.append(entry)
            if canon.inplace and node.args and isinstance(node.args[0], Node):
                enc.ref[node.args[0].name] = {"node": node.name}
            enc.ref.setdefault(node.name, {"node": node.name})
        elif node.op == "output":
            outputs = _outputs(op, node, enc)
    for name, t, _ in params:
        _check_dtype(dtype_name(t.dtype), op.path, op.def_line("Model"), "Model",
                     "parameter/buffer %s" % name)
    return {
        "schema": SCHEMA,
        "op_file": op.path,
        "model_class": "Model",
        "init_inputs": [enc.attr(v) for v in op.init_inputs],
        "inputs": spec_inputs,
        "params": [{"name": n, "shape": list(t.shape), "dtype": dtype_name(t.dtype), "kind": k}
                   for n, t, k in params],
        "nodes": nodes,
        "outputs": outputs,
    }


def _outputs(op, node, enc):
    value = node.args[0]
    items = list(value) if isinstance(value, (tuple, list)) else [value]
    line = op.forward_return_line()
    if not items:
        raise UserError(op.path, line, "output", "forward returns an empty %s"
                        % type(value).__name__, "return a tensor or a tuple of tensors")
    outputs = []
    for i, item in enumerate(items):
        what = "forward's output" if len(items) == 1 and not isinstance(value, (tuple, list)) \
            else "forward's output %d" % i
        if not isinstance(item, Node):
            raise UserError(op.path, line, "output", "%s is %s, not a tensor"
                            % (what, type(item).__name__ if item is not None else "None"),
                            "return a tensor (or a tuple/list of tensors) from forward")
        shape, dtype = _shape_dtype(item)
        if shape is None:
            kind = item.meta.get("type")
            raise UserError(op.path, line, "output", "%s is %s, not a tensor" % (
                what, kind.__name__ if isinstance(kind, type) else "not a tensor"),
                "return a tensor (or a tuple/list of tensors) from forward")
        ref = enc.arg(item)
        outputs.append({"name": "out%d" % i, "node": ref["node"], "shape": shape,
                        "dtype": dtype})
    return outputs
