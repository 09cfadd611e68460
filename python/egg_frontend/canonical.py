"""Canonical op names and attributes for traced fx nodes (docs/SPEC.md, "Canonical ops").

Every spelling of an op (``torch.relu``, ``F.relu``, ``x.relu()``, ``x.relu_()``,
``nn.ReLU()``, ``inplace=True``) maps to one canonical op with its operands as
``args`` and its options, PyTorch defaults filled in, as ``attrs``.  Unknown ops
keep ``op`` = the qualified target name.  This module knows nothing of files or JSON
output; it only classifies nodes.
"""

import ast
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.node import Node
from torch.fx.passes.shape_prop import TensorMetadata

_REQ = object()
DROPPED = frozenset({"inplace", "out", "_stacklevel", "size_average", "reduce"})


class Sig:
    """One spelling: its Python parameters and how they map to the canonical op."""

    __slots__ = ("op", "params", "varargs", "operands", "fixed", "prefix", "suffix",
                 "inplace", "swap")

    def __init__(self, op, params, operands=("input",), fixed=None, prefix=(), suffix=(),
                 inplace=False, swap=False):
        self.op = op
        self.params, self.varargs = _parse_params(params)
        self.operands = tuple(operands)
        self.fixed = dict(fixed or {})
        self.prefix = tuple(prefix)
        self.suffix = tuple(suffix)
        self.inplace = inplace
        self.swap = swap

    def bind(self, args, kwargs):
        """{param: value} with defaults filled in, or None when the call does not fit."""
        bound = {}
        args = list(args)
        if len(args) > len(self.params):
            if not self.varargs:
                return None
            extra = args[len(self.params):]
            if len(extra) == 1 and isinstance(extra[0], (list, tuple)):
                extra = list(extra[0])
            bound[self.varargs] = list(extra)
            args = args[:len(self.params)]
        for (name, _), value in zip(self.params, args):
            bound[name] = value
        for name, value in kwargs.items():
            if name in bound:
                return None
            if name in DROPPED or name in dict(self.params) or name == self.varargs:
                bound[name] = value
            elif value is not None:  # an option this table does not know: keep the op unknown
                return None
        for name, default in self.params:
            if name not in bound:
                if default is _REQ:
                    if self.varargs == name:
                        continue
                    return None
                bound[name] = default
        if self.varargs and self.varargs not in bound:
            # single list given by keyword or positionally in the last param slot
            bound[self.varargs] = []
        return bound


def _parse_params(text):
    params, varargs = [], None
    for part in [p.strip() for p in text.split(",") if p.strip()]:
        if part.startswith("*"):
            varargs = part[1:]
            continue
        if "=" in part:
            name, default = part.split("=", 1)
            params.append((name.strip(), ast.literal_eval(default.strip())))
        else:
            params.append((part, _REQ))
    return params, varargs


class Canon:
    """The canonical form of one node."""

    __slots__ = ("op", "args", "attrs", "inplace", "known")

    def __init__(self, op, args, attrs, inplace=False, known=True):
        self.op, self.args, self.attrs, self.inplace, self.known = op, args, attrs, inplace, known


# --------------------------------------------------------------------------------------
# tables: call_function targets (by object), call_method names, module classes

FUNCS = {}
METHODS = {}
SPECIAL_FUNCS = {}
SPECIAL_METHODS = {}


def _reg(op, params, funcs=(), methods=(), **kw):
    for f in funcs:
        if f is not None:
            FUNCS[f] = Sig(op, params, inplace=kw.get("inplace", False) or
                           getattr(f, "__name__", "").endswith("_"), **{
                               k: v for k, v in kw.items() if k != "inplace"})
    for m in methods:
        METHODS[m] = Sig(op, params, inplace=m.endswith("_") and not m.endswith("__"),
                         **{k: v for k, v in kw.items() if k != "inplace"})


def _t(name):
    return getattr(torch, name, None)


def _f(name):
    return getattr(F, name, None)


def _with_inplace(name):
    return (name, name + "_")


# ---- element-wise, unary without options
for _op, _funcs, _methods, _params in [
    ("relu", [_t("relu"), _t("relu_"), _f("relu"), _f("relu_")], _with_inplace("relu"),
     "input, inplace=False"),
    ("sigmoid", [_t("sigmoid"), _t("sigmoid_"), _f("sigmoid"), torch.special.expit],
     _with_inplace("sigmoid"), "input"),
    ("tanh", [_t("tanh"), _t("tanh_"), _f("tanh")], _with_inplace("tanh"), "input"),
    ("silu", [_f("silu")], (), "input, inplace=False"),
    ("mish", [_f("mish")], (), "input, inplace=False"),
    ("selu", [_t("selu"), _t("selu_"), _f("selu"), _f("selu_")], (), "input, inplace=False"),
    ("softsign", [_f("softsign")], (), "input"),
    ("hardsigmoid", [_f("hardsigmoid")], (), "input, inplace=False"),
    ("hardswish", [_f("hardswish")], (), "input, inplace=False"),
    ("abs", [_t("abs"), _t("abs_"), _t("absolute"), operator.abs],
     _with_inplace("abs") + ("absolute",), "input"),
    ("neg", [_t("neg"), _t("neg_"), _t("negative"), operator.neg],
     _with_inplace("neg") + ("negative",), "input"),
    ("exp", [_t("exp"), _t("exp_")], _with_inplace("exp"), "input"),
    ("log", [_t("log"), _t("log_")], _with_inplace("log"), "input"),
    ("sqrt", [_t("sqrt"), _t("sqrt_")], _with_inplace("sqrt"), "input"),
    ("rsqrt", [_t("rsqrt"), _t("rsqrt_")], _with_inplace("rsqrt"), "input"),
]:
    _reg(_op, _params, _funcs, _methods)

# ---- element-wise with options
_reg("leaky_relu", "input, negative_slope=0.01, inplace=False",
     [_f("leaky_relu"), _f("leaky_relu_")])
_reg("gelu", "input, approximate='none'", [_f("gelu")])
_reg("elu", "input, alpha=1.0, inplace=False", [_f("elu"), _f("elu_")])
_reg("softplus", "input, beta=1.0, threshold=20.0", [_f("softplus")])
_reg("hardtanh", "input, min_val=-1.0, max_val=1.0, inplace=False",
     [_f("hardtanh"), _f("hardtanh_")])
_reg("hardtanh", "input, inplace=False", [_f("relu6")], fixed={"min_val": 0.0, "max_val": 6.0})
_reg("clamp", "input, min=None, max=None", [_t("clamp"), _t("clamp_"), _t("clip"), _t("clip_")],
     _with_inplace("clamp") + _with_inplace("clip"))
_reg("clamp", "input, min", [_t("clamp_min"), _t("clamp_min_")], _with_inplace("clamp_min"),
     fixed={"max": None})
_reg("clamp", "input, max", [_t("clamp_max"), _t("clamp_max_")], _with_inplace("clamp_max"),
     fixed={"min": None})
_reg("pow", "input, exponent", [_t("pow"), operator.pow, operator.ipow], _with_inplace("pow"),
     operands=("input", "exponent"))
_reg("pow", "input", [_t("square"), _t("square_")], _with_inplace("square"), suffix=(2,))
_reg("div", "input", [_t("reciprocal"), _t("reciprocal_")], _with_inplace("reciprocal"),
     prefix=(1.0,), fixed={"rounding_mode": None})

_BIN = ("input", "other")
_reg("add", "input, other, alpha=1", [_t("add"), operator.add, operator.iadd],
     _with_inplace("add"), operands=_BIN)
_reg("sub", "input, other, alpha=1", [_t("sub"), _t("subtract"), operator.sub, operator.isub],
     _with_inplace("sub") + _with_inplace("subtract"), operands=_BIN)
_reg("sub", "input, other, alpha=1", [_t("rsub")], operands=_BIN, swap=True)
_reg("mul", "input, other", [_t("mul"), _t("multiply"), operator.mul, operator.imul],
     _with_inplace("mul") + _with_inplace("multiply"), operands=_BIN)
_reg("div", "input, other, rounding_mode=None",
     [_t("div"), _t("divide"), _t("true_divide"), operator.truediv, operator.itruediv],
     _with_inplace("div") + _with_inplace("divide") + _with_inplace("true_divide"),
     operands=_BIN)
_reg("div", "input, other", [operator.floordiv, operator.ifloordiv], operands=_BIN,
     fixed={"rounding_mode": "floor"})
_reg("minimum", "input, other", [_t("minimum")], ("minimum",), operands=_BIN)
_reg("maximum", "input, other", [_t("maximum")], ("maximum",), operands=_BIN)
_reg("where", "condition, input, other", [_t("where")], operands=("condition", "input", "other"))
METHODS["where"] = Sig("where", "input, condition, other",
                       operands=("condition", "input", "other"))
for _op, _names, _opfn in [("gt", ("gt", "greater"), operator.gt), ("lt", ("lt", "less"), operator.lt),
                           ("ge", ("ge", "greater_equal"), operator.ge),
                           ("le", ("le", "less_equal"), operator.le),
                           ("eq", ("eq",), operator.eq), ("ne", ("ne", "not_equal"), operator.ne)]:
    _reg(_op, "input, other", [_t(n) for n in _names] + [_opfn], _names, operands=_BIN)

# ---- anchors: GEMM, convolution, normalization, softmax, reductions, pooling, losses
_reg("linear", "input, weight, bias=None", [_f("linear")], operands=("input", "weight", "bias"))
_reg("matmul", "input, other", [_t("matmul"), operator.matmul], ("matmul",), operands=_BIN)
_reg("matmul", "input, mat2", [_t("mm")], ("mm",), operands=("input", "mat2"))
_reg("bmm", "input, mat2", [_t("bmm")], ("bmm",), operands=("input", "mat2"))
_reg("addmm", "input, mat1, mat2, beta=1, alpha=1", [_t("addmm")], ("addmm",),
     operands=("input", "mat1", "mat2"))
_reg("baddbmm", "input, batch1, batch2, beta=1, alpha=1", [_t("baddbmm")], ("baddbmm",),
     operands=("input", "batch1", "batch2"))
_reg("einsum", "equation, *operands", [_t("einsum")], operands=("operands",))
for _d in (1, 2, 3):
    _reg("conv%dd" % _d, "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
         [_f("conv%dd" % _d), _t("conv%dd" % _d)], operands=("input", "weight", "bias"))
    _reg("conv_transpose%dd" % _d, "input, weight, bias=None, stride=1, padding=0, "
         "output_padding=0, groups=1, dilation=1",
         [_f("conv_transpose%dd" % _d), _t("conv_transpose%dd" % _d)],
         operands=("input", "weight", "bias"))
    _reg("max_pool%dd" % _d, "input, kernel_size, stride=None, padding=0, dilation=1, "
         "ceil_mode=False, return_indices=False", [_f("max_pool%dd" % _d), _t("max_pool%dd" % _d)])
    _reg("avg_pool%dd" % _d, "input, kernel_size, stride=None, padding=0, ceil_mode=False, "
         "count_include_pad=True" + (", divisor_override=None" if _d > 1 else ""),
         [_f("avg_pool%dd" % _d)])
    _reg("adaptive_avg_pool%dd" % _d, "input, output_size", [_f("adaptive_avg_pool%dd" % _d)])
    _reg("adaptive_max_pool%dd" % _d, "input, output_size, return_indices=False",
         [_f("adaptive_max_pool%dd" % _d)])
_reg("layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05",
     [_f("layer_norm"), _t("layer_norm")], operands=("input", "weight", "bias"))
_reg("rms_norm", "input, normalized_shape, weight=None, eps=None",
     [_f("rms_norm"), _t("rms_norm")], operands=("input", "weight"))
_reg("group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05",
     [_f("group_norm"), _t("group_norm")], operands=("input", "weight", "bias"))
_reg("batch_norm", "input, running_mean, running_var, weight=None, bias=None, training=False, "
     "momentum=0.1, eps=1e-05", [_f("batch_norm")],
     operands=("input", "running_mean", "running_var", "weight", "bias"))
_reg("instance_norm", "input, running_mean=None, running_var=None, weight=None, bias=None, "
     "use_input_stats=True, momentum=0.1, eps=1e-05", [_f("instance_norm")],
     operands=("input", "running_mean", "running_var", "weight", "bias"))
_reg("normalize", "input, p=2.0, dim=1, eps=1e-12", [_f("normalize")])
for _op in ("softmax", "log_softmax"):
    _reg(_op, "input, dim=None, _stacklevel=3, dtype=None", [_f(_op)])
    _reg(_op, "input, dim=None, dtype=None", [_t(_op), getattr(torch.special, _op, None)], (_op,))
for _op in ("sum", "mean", "prod", "nansum"):
    _reg(_op, "input, dim=None, keepdim=False, dtype=None", [_t(_op)], (_op,))
for _op in ("amax", "amin"):
    _reg(_op, "input, dim=[], keepdim=False", [_t(_op)], (_op,))
for _op in ("argmax", "argmin"):
    _reg(_op, "input, dim=None, keepdim=False", [_t(_op)], (_op,))
for _op in ("cumsum", "cumprod"):
    _reg(_op, "input, dim, dtype=None", [_t(_op)], _with_inplace(_op))
_reg("logsumexp", "input, dim, keepdim=False", [_t("logsumexp")], ("logsumexp",))
# Vector norms: torch.norm / Tensor.norm (p: a number or 'fro') and torch.linalg.vector_norm (ord).
_reg("norm", "input, p='fro', dim=None, keepdim=False, dtype=None", [_t("norm")], ("norm",))
_reg("vector_norm", "input, ord=2, dim=None, keepdim=False, dtype=None",
     [getattr(torch.linalg, "vector_norm", None)])
_reg("mse_loss", "input, target, size_average=None, reduce=None, reduction='mean', "
     "weight=None", [_f("mse_loss")], operands=("input", "target"))
_reg("l1_loss", "input, target, size_average=None, reduce=None, reduction='mean'",
     [_f("l1_loss")], operands=("input", "target"))
_reg("smooth_l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', "
     "beta=1.0", [_f("smooth_l1_loss")], operands=("input", "target"))
_reg("huber_loss", "input, target, reduction='mean', delta=1.0", [_f("huber_loss")],
     operands=("input", "target"))
_reg("cross_entropy", "input, target, weight=None, size_average=None, ignore_index=-100, "
     "reduce=None, reduction='mean', label_smoothing=0.0", [_f("cross_entropy")],
     operands=("input", "target", "weight"))
_reg("nll_loss", "input, target, weight=None, size_average=None, ignore_index=-100, "
     "reduce=None, reduction='mean'", [_f("nll_loss")], operands=("input", "target", "weight"))
_reg("kl_div", "input, target, size_average=None, reduce=None, reduction='mean', "
     "log_target=False", [_f("kl_div")], operands=("input", "target"))
_reg("hinge_embedding_loss", "input, target, margin=1.0, size_average=None, reduce=None, "
     "reduction='mean'", [_f("hinge_embedding_loss")], operands=("input", "target"))
_reg("triplet_margin_loss", "anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False, "
     "size_average=None, reduce=None, reduction='mean'", [_f("triplet_margin_loss")],
     operands=("anchor", "positive", "negative"))
_reg("cosine_similarity", "x1, x2, dim=1, eps=1e-08", [_f("cosine_similarity"),
     _t("cosine_similarity")], operands=("x1", "x2"))
_reg("scaled_dot_product_attention", "query, key, value, attn_mask=None, dropout_p=0.0, "
     "is_causal=False, scale=None", [_f("scaled_dot_product_attention")],
     operands=("query", "key", "value", "attn_mask"))
_reg("dropout", "input, p=0.5, training=True, inplace=False", [_f("dropout")])
# ---- layout ops (no math, but common around anchors)
_reg("flatten", "input, start_dim=0, end_dim=-1", [_t("flatten")], ("flatten",))
_reg("reshape", "input, *shape", [_t("reshape")], ("reshape", "view"))
_reg("permute", "input, *dims", [_t("permute")], ("permute",))
_reg("transpose", "input, dim0, dim1", [_t("transpose"), _t("swapaxes")],
     ("transpose", "swapaxes"))
_reg("unsqueeze", "input, dim", [_t("unsqueeze")], ("unsqueeze",))
_reg("squeeze", "input, dim=None", [_t("squeeze")], ("squeeze",))
_reg("contiguous", "input, memory_format=None", (), ("contiguous",))
# torch.flip(x, dims) / x.flip(*dims): ``dims`` as a list of ints as written (may be negative).
# The builtin reduction family fuses a flip along the scanned dim around cumsum/cumprod (reverse
# scans); elsewhere the backend names it as unsupported.
_reg("flip", "input, *dims", [_t("flip")], ("flip",))
_reg("cat", "tensors, dim=0", [_t("cat"), _t("concat"), _t("concatenate")],
     operands=("tensors",))
_reg("stack", "tensors, dim=0", [_t("stack")], operands=("tensors",))


def _is_tensor(a):
    if isinstance(a, torch.Tensor):
        return True
    if isinstance(a, Node):
        return a.op == "get_attr" or isinstance(a.meta.get("tensor_meta"), TensorMetadata)
    return False


def _minmax(which):
    def pick(args, kwargs):
        if "other" in kwargs or (len(args) >= 2 and _is_tensor(args[1])):
            return Sig("maximum" if which == "max" else "minimum", "input, other", operands=_BIN)
        return Sig(which, "input, dim=None, keepdim=False")
    return pick


SPECIAL_FUNCS[torch.max] = _minmax("max")
SPECIAL_FUNCS[torch.min] = _minmax("min")
SPECIAL_METHODS["max"] = _minmax("max")
SPECIAL_METHODS["min"] = _minmax("min")


# ---- modules -------------------------------------------------------------------------

def _ref(mod, path, attr):
    """A param/buffer reference, or None when the module's attribute is None."""
    value = getattr(mod, attr, None)
    if value is None:
        return None
    return ParamRef(path + "." + attr if path else attr)


class ParamRef:
    """A reference to a parameter or buffer by dotted name."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _conv(d, transpose):
    def build(m, p):
        attrs = {"stride": m.stride, "padding": m.padding, "dilation": m.dilation,
                 "groups": m.groups}
        if transpose:
            attrs = {"stride": m.stride, "padding": m.padding,
                     "output_padding": m.output_padding, "groups": m.groups,
                     "dilation": m.dilation}
        else:
            attrs["padding_mode"] = m.padding_mode
        return ("conv_transpose%dd" % d if transpose else "conv%dd" % d,
                [_ref(m, p, "weight"), _ref(m, p, "bias")], attrs)
    return build


def _bn(m, p):
    training = m.training or (m.running_mean is None and m.running_var is None)
    use_stats = not m.training or m.track_running_stats
    return ("batch_norm",
            [_ref(m, p, "running_mean") if use_stats else None,
             _ref(m, p, "running_var") if use_stats else None,
             _ref(m, p, "weight"), _ref(m, p, "bias")],
            {"training": training, "momentum": m.momentum if m.momentum is not None else 0.0,
             "eps": m.eps})


def _in(m, p):
    use_input_stats = m.training or not m.track_running_stats
    return ("instance_norm",
            [_ref(m, p, "running_mean"), _ref(m, p, "running_var"),
             _ref(m, p, "weight"), _ref(m, p, "bias")],
            {"use_input_stats": use_input_stats,
             "momentum": m.momentum if m.momentum is not None else 0.1, "eps": m.eps})


def _pool(kind, d):
    def build(m, p):
        if kind == "max":
            return ("max_pool%dd" % d, [], {
                "kernel_size": m.kernel_size, "stride": m.stride, "padding": m.padding,
                "dilation": m.dilation, "ceil_mode": m.ceil_mode,
                "return_indices": m.return_indices})
        if kind == "avg":
            attrs = {"kernel_size": m.kernel_size, "stride": m.stride, "padding": m.padding,
                     "ceil_mode": m.ceil_mode, "count_include_pad": m.count_include_pad}
            if d > 1:
                attrs["divisor_override"] = m.divisor_override
            return ("avg_pool%dd" % d, [], attrs)
        if kind == "adaptive_avg":
            return ("adaptive_avg_pool%dd" % d, [], {"output_size": m.output_size})
        return ("adaptive_max_pool%dd" % d, [], {"output_size": m.output_size,
                                                  "return_indices": m.return_indices})
    return build


def _nothing(op):
    return lambda m, p: (op, [], {})


MODULES = {
    nn.ReLU: _nothing("relu"),
    nn.Sigmoid: _nothing("sigmoid"),
    nn.Tanh: _nothing("tanh"),
    nn.SiLU: _nothing("silu"),
    nn.Mish: _nothing("mish"),
    nn.SELU: _nothing("selu"),
    nn.Softsign: _nothing("softsign"),
    nn.Hardsigmoid: _nothing("hardsigmoid"),
    nn.Hardswish: _nothing("hardswish"),
    nn.LeakyReLU: lambda m, p: ("leaky_relu", [], {"negative_slope": m.negative_slope}),
    nn.GELU: lambda m, p: ("gelu", [], {"approximate": m.approximate}),
    nn.ELU: lambda m, p: ("elu", [], {"alpha": m.alpha}),
    nn.Softplus: lambda m, p: ("softplus", [], {"beta": m.beta, "threshold": m.threshold}),
    nn.Hardtanh: lambda m, p: ("hardtanh", [], {"min_val": m.min_val, "max_val": m.max_val}),
    nn.Linear: lambda m, p: ("linear", [_ref(m, p, "weight"), _ref(m, p, "bias")], {}),
    nn.LayerNorm: lambda m, p: ("layer_norm", [_ref(m, p, "weight"), _ref(m, p, "bias")],
                                {"normalized_shape": m.normalized_shape, "eps": m.eps}),
    nn.GroupNorm: lambda m, p: ("group_norm", [_ref(m, p, "weight"), _ref(m, p, "bias")],
                                {"num_groups": m.num_groups, "eps": m.eps}),
    nn.Softmax: lambda m, p: ("softmax", [], {"dim": m.dim, "dtype": None}),
    nn.LogSoftmax: lambda m, p: ("log_softmax", [], {"dim": m.dim, "dtype": None}),
    nn.Dropout: lambda m, p: ("dropout", [], {"p": m.p, "training": m.training}),
    nn.Flatten: lambda m, p: ("flatten", [], {"start_dim": m.start_dim, "end_dim": m.end_dim}),
    nn.MSELoss: lambda m, p: ("mse_loss", [], {"reduction": m.reduction}),
    nn.L1Loss: lambda m, p: ("l1_loss", [], {"reduction": m.reduction}),
    nn.HuberLoss: lambda m, p: ("huber_loss", [], {"reduction": m.reduction, "delta": m.delta}),
    nn.SmoothL1Loss: lambda m, p: ("smooth_l1_loss", [], {"reduction": m.reduction, "beta": m.beta}),
    nn.KLDivLoss: lambda m, p: ("kl_div", [], {"reduction": m.reduction,
                                               "log_target": m.log_target}),
    nn.HingeEmbeddingLoss: lambda m, p: ("hinge_embedding_loss", [], {
        "margin": m.margin, "reduction": m.reduction}),
    nn.TripletMarginLoss: lambda m, p: ("triplet_margin_loss", [], {
        "margin": m.margin, "p": m.p, "eps": m.eps, "swap": m.swap, "reduction": m.reduction}),
    nn.CrossEntropyLoss: lambda m, p: ("cross_entropy", [_ref(m, p, "weight")], {
        "ignore_index": m.ignore_index, "reduction": m.reduction,
        "label_smoothing": m.label_smoothing}),
}
if hasattr(nn, "RMSNorm"):
    MODULES[nn.RMSNorm] = lambda m, p: ("rms_norm", [_ref(m, p, "weight")],
                                        {"normalized_shape": m.normalized_shape, "eps": m.eps})
MODULES[nn.ReLU6] = lambda m, p: ("hardtanh", [], {"min_val": 0.0, "max_val": 6.0})
for _d in (1, 2, 3):
    MODULES[getattr(nn, "Conv%dd" % _d)] = _conv(_d, False)
    MODULES[getattr(nn, "ConvTranspose%dd" % _d)] = _conv(_d, True)
    MODULES[getattr(nn, "BatchNorm%dd" % _d)] = _bn
    MODULES[getattr(nn, "InstanceNorm%dd" % _d)] = _in
    MODULES[getattr(nn, "MaxPool%dd" % _d)] = _pool("max", _d)
    MODULES[getattr(nn, "AvgPool%dd" % _d)] = _pool("avg", _d)
    MODULES[getattr(nn, "AdaptiveAvgPool%dd" % _d)] = _pool("adaptive_avg", _d)
    MODULES[getattr(nn, "AdaptiveMaxPool%dd" % _d)] = _pool("adaptive_max", _d)


def module_builder(module):
    """The canonicalizer for a module's exact type, or None."""
    return MODULES.get(type(module))


# --------------------------------------------------------------------------------------

def qualified_target(node, module=None):
    """Qualified name of what a node calls (``torch.relu``, ``torch.Tensor.add``, ...)."""
    if node.op == "call_function":
        try:
            from torch.fx.node import _get_qualified_name
            name = _get_qualified_name(node.target)
        except Exception:  # pragma: no cover - exotic callables
            return getattr(node.target, "__name__", str(node.target))
        if name.startswith("_operator."):
            return name[1:]
        short = name.rsplit(".", 1)[-1]
        if name.startswith("torch._C.") and getattr(F, short, None) is node.target:
            return "torch.nn.functional." + short
        return name
    if node.op == "call_method":
        return "torch.Tensor." + str(node.target)
    if node.op == "call_module" and module is not None:
        cls = type(module)
        mod = cls.__module__
        if mod.startswith("torch.nn.modules"):
            mod = "torch.nn"
        return "%s.%s" % (mod, cls.__name__)
    return str(node.target)


def canonicalize(node, module=None, module_path=""):
    """The Canon of a call node (``module`` for call_module nodes)."""
    args, kwargs = list(node.args), dict(node.kwargs)
    if node.op == "call_module":
        build = module_builder(module) if module is not None else None
        if build is None:
            extra = [ParamRef(module_path + "." + n if module_path else n)
                     for n, _ in list(module.named_parameters()) +
                     list(module.named_buffers())] if module is not None else []
            attrs = dict(kwargs)
            attrs["module"] = module_path
            return Canon(qualified_target(node, module), args + extra, attrs, known=False)
        op, extra, attrs = build(module, module_path)
        inplace = bool(getattr(module, "inplace", False))
        attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in attrs.items()}
        return Canon(op, args + extra, attrs, inplace=inplace)

    sig = None
    if node.op == "call_function":
        try:
            pick = SPECIAL_FUNCS.get(node.target)
            sig = pick(args, kwargs) if pick else FUNCS.get(node.target)
        except TypeError:  # unhashable target
            sig = None
    elif node.op == "call_method":
        pick = SPECIAL_METHODS.get(node.target)
        sig = pick(args, kwargs) if pick else METHODS.get(node.target)
    bound = sig.bind(args, kwargs) if sig is not None else None
    if bound is None:
        inplace = node.op == "call_method" and str(node.target).endswith("_") \
            and not str(node.target).endswith("__")
        return Canon(qualified_target(node), args, kwargs, inplace=inplace, known=False)
    operands = [bound[name] for name in sig.operands]
    if sig.swap:
        operands[0], operands[1] = operands[1], operands[0]
    operands = list(sig.prefix) + operands + list(sig.suffix)
    attrs = {}
    for name, _ in sig.params:
        if name not in sig.operands and name not in DROPPED:
            attrs[name] = bound[name]
    if sig.varargs and sig.varargs not in sig.operands:
        attrs[sig.varargs] = bound[sig.varargs]
    attrs.update(sig.fixed)
    inplace = sig.inplace or bool(bound.get("inplace", False))
    return Canon(sig.op, operands, attrs, inplace=inplace)
