"""EGG's core op vocabulary: the decomposition table from exported ATen ops to spec nodes.

``RULES`` is the table (docs/SPEC.md, "Canonical ops"): one row per ATen op (``aten::name`` for
every overload, ``aten::name.overload`` for one) that EGG keeps as a single spec node, saying
which canonical op it becomes, which of its schema arguments are the node's operands (in order)
and which become attrs under which name.  Every ATen op named here is kept out of torch's
decompositions (``decompositions()``); any other op is broken up by torch's default table into
ops this table knows (pointwise, reduction, view ops) where it can be, and what is left keeps
``op`` = its ATen name (``aten.index.Tensor``) so the backend can name it in an error.  This
module knows nothing of files or JSON; it only classifies ATen calls.
"""

import contextlib

import torch
import torch.nn.functional as F

# ATen ``reduction`` enum of the losses -> the PyTorch spelling the spec uses.
_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


class Lit:
    """A literal operand the ATen call does not spell (``reciprocal(x)`` is ``div(1.0, x)``)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Rule:
    """How one ATen op becomes a spec node.

    ``operands``: schema argument names (or ``Lit``) in the order the spec node lists them.
    ``attrs``: spec attr -> schema argument name, or (name, converter of the bound value).
    ``fixed``: attrs with a constant value.  ``first``: the ATen op returns a tuple whose first
    element is the spec node's value (``max_pool2d_with_indices``, ``adaptive_max_pool2d``, the
    functional batch norm); it is collapsed when nothing else of the tuple is read."""

    __slots__ = ("op", "operands", "attrs", "fixed", "first")

    def __init__(self, op, operands=("self",), attrs=None, fixed=None, first=False):
        self.op = op
        self.operands = tuple(operands)
        self.attrs = dict(attrs or {})
        self.fixed = dict(fixed or {})
        self.first = first


def _reduction(v):
    return _REDUCTION.get(v, v)


def _bag_mode(v):
    """ATen's embedding-bag mode enum -> F.embedding_bag's spelling."""
    return {0: "sum", 1: "mean", 2: "max"}.get(v, v)


def _bag_padding(v):
    """ATen's padding_idx (-1: none, else the row, already made non-negative) -> the spec's."""
    return None if v is None or v < 0 else v


def _stride(v):
    """Pooling's ``stride=[]`` means the kernel size, which the spec writes as None."""
    return None if v in ([], ()) else v


def _end(v):
    """A slice to the end (``x[1:]``) has end INT64_MAX in ATen; the spec writes None."""
    return None if isinstance(v, int) and v >= 2 ** 62 else v


def _dim_list(v):
    """An empty ``dim`` list reduces over everything: None, as PyTorch's Python API writes it."""
    return None if v in ([], ()) else v


_BIN = ("self", "other")
_UNARY = ["relu", "sigmoid", "tanh", "silu", "mish", "selu", "hardsigmoid", "hardswish", "abs",
          "neg", "exp", "log", "sqrt", "rsqrt", "clone", "softsign", "log1p", "expm1", "log2",
          "log10", "exp2", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "erf",
          "erfc", "floor", "ceil", "trunc", "round", "sign", "isnan", "isinf", "isposinf",
          "isneginf", "isfinite"]
_CMP = ["gt", "lt", "ge", "le", "eq", "ne"]
_LOSS = {"reduction": ("reduction", _reduction)}

RULES = {}
RULES.update({"aten::" + op: Rule(op) for op in _UNARY})
RULES.update({"aten::" + op: Rule(op, _BIN)
              for op in _CMP + ["minimum", "maximum", "remainder", "fmod", "atan2", "hypot",
                                "logaddexp", "logaddexp2", "logical_and", "logical_or",
                                "logical_xor"]})
# Bitwise ops of integers (of bools: the logical ops, decompositions()).
RULES.update({"aten::" + op: Rule(op, _BIN) for op in ("bitwise_and", "bitwise_or", "bitwise_xor",
                                                        "bitwise_left_shift",
                                                        "bitwise_right_shift")})
RULES.update({"aten::__lshift__": Rule("bitwise_left_shift", _BIN),
              "aten::__rshift__": Rule("bitwise_right_shift", _BIN)})
RULES.update({"aten::xlogy." + o: Rule("xlogy", _BIN) for o in ("Tensor", "Scalar_Self",
                                                                 "Scalar_Other")})
RULES.update({
    # ---- element-wise with options
    "aten::leaky_relu": Rule("leaky_relu", attrs={"negative_slope": "negative_slope"}),
    "aten::gelu": Rule("gelu", attrs={"approximate": "approximate"}),
    "aten::elu": Rule("elu", attrs={"alpha": "alpha"}),
    "aten::softplus": Rule("softplus", attrs={"beta": "beta", "threshold": "threshold"}),
    "aten::hardtanh": Rule("hardtanh", attrs={"min_val": "min_val", "max_val": "max_val"}),
    "aten::relu6": Rule("hardtanh", fixed={"min_val": 0.0, "max_val": 6.0}),
    "aten::clamp.default": Rule("clamp", attrs={"min": "min", "max": "max"}),
    "aten::clamp_min.default": Rule("clamp", attrs={"min": "min"}, fixed={"max": None}),
    "aten::clamp_max.default": Rule("clamp", attrs={"max": "max"}, fixed={"min": None}),
    # Tensor bounds: element-wise maximum/minimum (clamp.Tensor with both: decompositions()).
    "aten::clamp_min.Tensor": Rule("maximum", ("self", "min")),
    "aten::clamp_max.Tensor": Rule("minimum", ("self", "max")),
    "aten::pow.Tensor_Scalar": Rule("pow", ("self", "exponent")),
    "aten::pow.Tensor_Tensor": Rule("pow", ("self", "exponent")),
    "aten::pow.Scalar": Rule("pow", ("self", "exponent")),
    "aten::square": Rule("pow", ("self", Lit(2))),
    "aten::reciprocal": Rule("div", (Lit(1.0), "self"), fixed={"rounding_mode": None}),
    "aten::add.Tensor": Rule("add", _BIN, {"alpha": "alpha"}),
    "aten::add.Scalar": Rule("add", _BIN, {"alpha": "alpha"}),
    "aten::sub.Tensor": Rule("sub", _BIN, {"alpha": "alpha"}),
    "aten::sub.Scalar": Rule("sub", _BIN, {"alpha": "alpha"}),
    "aten::rsub": Rule("sub", ("other", "self"), {"alpha": "alpha"}),
    "aten::mul.Tensor": Rule("mul", _BIN),
    "aten::mul.Scalar": Rule("mul", _BIN),
    "aten::div.Tensor": Rule("div", _BIN, fixed={"rounding_mode": None}),
    "aten::div.Scalar": Rule("div", _BIN, fixed={"rounding_mode": None}),
    "aten::div.Tensor_mode": Rule("div", _BIN, {"rounding_mode": "rounding_mode"}),
    "aten::div.Scalar_mode": Rule("div", _BIN, {"rounding_mode": "rounding_mode"}),
    "aten::floor_divide": Rule("div", _BIN, fixed={"rounding_mode": "floor"}),
    "aten::where.self": Rule("where", ("condition", "self", "other")),
    "aten::where.ScalarSelf": Rule("where", ("condition", "self", "other")),
    "aten::where.ScalarOther": Rule("where", ("condition", "self", "other")),
    "aten::where.Scalar": Rule("where", ("condition", "self", "other")),
    # masked_fill(x, mask, v) is where(mask, v, x)
    "aten::masked_fill": Rule("where", ("mask", "value", "self")),
    "aten::_to_copy": Rule("cast", attrs={"dtype": "dtype"}),
    "aten::nan_to_num": Rule("nan_to_num", attrs={"nan": "nan", "posinf": "posinf",
                                                  "neginf": "neginf"}),
    # ---- anchors: GEMM, convolution, normalization, softmax, reductions, pooling, losses
    "aten::linear": Rule("linear", ("input", "weight", "bias")),
    "aten::matmul": Rule("matmul", _BIN),
    "aten::mm": Rule("matmul", ("self", "mat2")),
    "aten::bmm": Rule("bmm", ("self", "mat2")),
    "aten::addmm": Rule("addmm", ("self", "mat1", "mat2"), {"beta": "beta", "alpha": "alpha"}),
    # baddbmm and einsum are not kept: torch's decompositions write them as bmm with permutes,
    # views and element-wise ops (a pairwise contraction per operand), which the families take.
    "aten::layer_norm": Rule("layer_norm", ("input", "weight", "bias"),
                             {"normalized_shape": "normalized_shape", "eps": "eps"}),
    "aten::rms_norm": Rule("rms_norm", ("input", "weight"),
                           {"normalized_shape": "normalized_shape", "eps": "eps"}),
    "aten::group_norm": Rule("group_norm", ("input", "weight", "bias"),
                             {"num_groups": "num_groups", "eps": "eps"}),
    "aten::batch_norm": Rule("batch_norm", ("input", "running_mean", "running_var", "weight",
                                            "bias"),
                             {"training": "training", "momentum": "momentum", "eps": "eps"}),
    "aten::_native_batch_norm_legit_functional": Rule(
        "batch_norm", ("input", "running_mean", "running_var", "weight", "bias"),
        {"training": "training", "momentum": "momentum", "eps": "eps"}, first=True),
    "aten::_native_batch_norm_legit_no_training": Rule(
        "batch_norm", ("input", "running_mean", "running_var", "weight", "bias"),
        {"momentum": "momentum", "eps": "eps"}, {"training": False}, first=True),
    "aten::_native_batch_norm_legit.no_stats": Rule(
        "batch_norm", ("input", Lit(None), Lit(None), "weight", "bias"),
        {"momentum": "momentum", "eps": "eps"}, {"training": True}, first=True),
    "aten::instance_norm": Rule("instance_norm", ("input", "running_mean", "running_var",
                                                  "weight", "bias"),
                                {"use_input_stats": "use_input_stats", "momentum": "momentum",
                                 "eps": "eps"}),
    "aten::softmax.int": Rule("softmax", attrs={"dim": "dim", "dtype": "dtype"}),
    "aten::log_softmax.int": Rule("log_softmax", attrs={"dim": "dim", "dtype": "dtype"}),
    "aten::sum.dim_IntList": Rule("sum", attrs={"dim": ("dim", _dim_list), "keepdim": "keepdim",
                                                "dtype": "dtype"}),
    "aten::sum.default": Rule("sum", attrs={"dtype": "dtype"}, fixed={"dim": None,
                                                                      "keepdim": False}),
    "aten::mean.dim": Rule("mean", attrs={"dim": ("dim", _dim_list), "keepdim": "keepdim",
                                          "dtype": "dtype"}),
    "aten::mean.default": Rule("mean", attrs={"dtype": "dtype"}, fixed={"dim": None,
                                                                        "keepdim": False}),
    "aten::prod.dim_int": Rule("prod", attrs={"dim": "dim", "keepdim": "keepdim",
                                              "dtype": "dtype"}),
    "aten::prod.default": Rule("prod", attrs={"dtype": "dtype"}, fixed={"dim": None,
                                                                        "keepdim": False}),
    "aten::amax": Rule("amax", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::amin": Rule("amin", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::argmax": Rule("argmax", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::argmin": Rule("argmin", attrs={"dim": "dim", "keepdim": "keepdim"}),
    # max/min with a dim: (values, indices), read through getitem nodes
    "aten::max.dim": Rule("max", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::min.dim": Rule("min", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::max.default": Rule("max", fixed={"dim": None, "keepdim": False}),
    "aten::min.default": Rule("min", fixed={"dim": None, "keepdim": False}),
    "aten::max.other": Rule("maximum", _BIN),
    "aten::min.other": Rule("minimum", _BIN),
    # topk and sort: (values, indices), read through getitem nodes (torch.argsort and msort are
    # sort by torch's decompositions).
    "aten::topk": Rule("topk", attrs={"k": "k", "dim": "dim", "largest": "largest",
                                      "sorted": "sorted"}),
    "aten::sort.default": Rule("sort", attrs={"dim": "dim", "descending": "descending"},
                               fixed={"stable": False}),
    "aten::sort.stable": Rule("sort", attrs={"dim": "dim", "descending": "descending",
                                             "stable": "stable"}),
    # kthvalue and median along a dim: (values, indices), the k-th smallest (median: the lower
    # middle one, NaN when the row has one); median of the whole tensor: its value.
    "aten::kthvalue": Rule("kthvalue", attrs={"k": "k", "dim": "dim", "keepdim": "keepdim"}),
    "aten::median.dim": Rule("median", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::median.default": Rule("median", fixed={"dim": None, "keepdim": False}),
    "aten::cumsum": Rule("cumsum", attrs={"dim": "dim", "dtype": "dtype"}),
    "aten::cumprod": Rule("cumprod", attrs={"dim": "dim", "dtype": "dtype"}),
    # cummax/cummin: (values, indices); the values alone (their indices are not computed).
    "aten::cummax": Rule("cummax", attrs={"dim": "dim"}, first=True),
    "aten::cummin": Rule("cummin", attrs={"dim": "dim"}, first=True),
    "aten::logcumsumexp": Rule("logcumsumexp", attrs={"dim": "dim"}),
    "aten::logsumexp": Rule("logsumexp", attrs={"dim": "dim", "keepdim": "keepdim"}),
    "aten::linalg_vector_norm": Rule("vector_norm", attrs={"ord": "ord", "dim": "dim",
                                                           "keepdim": "keepdim",
                                                           "dtype": "dtype"}),
    "aten::scaled_dot_product_attention": Rule(
        "scaled_dot_product_attention", ("query", "key", "value", "attn_mask"),
        {"dropout_p": "dropout_p", "is_causal": "is_causal", "scale": "scale",
         "enable_gqa": "enable_gqa"}),
    "aten::mse_loss": Rule("mse_loss", _BIN[:1] + ("target",), _LOSS),
    "aten::l1_loss": Rule("l1_loss", ("self", "target"), _LOSS),
    "aten::smooth_l1_loss": Rule("smooth_l1_loss", ("self", "target"),
                                 dict(_LOSS, beta="beta")),
    "aten::huber_loss": Rule("huber_loss", ("self", "target"), dict(_LOSS, delta="delta")),
    "aten::kl_div": Rule("kl_div", ("self", "target"), dict(_LOSS, log_target="log_target")),
    "aten::cross_entropy_loss": Rule("cross_entropy", ("self", "target", "weight"),
                                     dict(_LOSS, ignore_index="ignore_index",
                                          label_smoothing="label_smoothing")),
    "aten::nll_loss": Rule("nll_loss", ("self", "target", "weight"),
                           dict(_LOSS, ignore_index="ignore_index")),
    "aten::hinge_embedding_loss": Rule("hinge_embedding_loss", ("self", "target"),
                                       dict(_LOSS, margin="margin")),
    "aten::triplet_margin_loss": Rule("triplet_margin_loss", ("anchor", "positive", "negative"),
                                      dict(_LOSS, margin="margin", p="p", eps="eps",
                                           swap="swap")),
    # ---- layout and view ops
    "aten::view": Rule("reshape", attrs={"shape": "size"}),
    "aten::_unsafe_view": Rule("reshape", attrs={"shape": "size"}),
    "aten::reshape": Rule("reshape", attrs={"shape": "shape"}),
    "aten::flatten.using_ints": Rule("flatten", attrs={"start_dim": "start_dim",
                                                       "end_dim": "end_dim"}),
    "aten::permute": Rule("permute", attrs={"dims": "dims"}),
    "aten::transpose.int": Rule("transpose", attrs={"dim0": "dim0", "dim1": "dim1"}),
    "aten::t": Rule("transpose", fixed={"dim0": 0, "dim1": 1}),
    "aten::unsqueeze": Rule("unsqueeze", attrs={"dim": "dim"}),
    "aten::squeeze.dim": Rule("squeeze", attrs={"dim": "dim"}),
    "aten::squeeze.dims": Rule("squeeze", attrs={"dim": "dim"}),
    "aten::squeeze.default": Rule("squeeze", fixed={"dim": None}),
    "aten::expand": Rule("expand", attrs={"size": "size"}),
    "aten::slice.Tensor": Rule("slice", attrs={"dim": "dim", "start": "start",
                                               "end": ("end", _end),
                                               "step": "step"}),
    "aten::select.int": Rule("select", attrs={"dim": "dim", "index": "index"}),
    "aten::cat": Rule("cat", ("tensors",), {"dim": "dim"}),
    "aten::stack": Rule("stack", ("tensors",), {"dim": "dim"}),
    "aten::flip": Rule("flip", attrs={"dims": "dims"}),
    # Gathers: index_select(x, dim, index), and embedding(weight, indices) (padding_idx and the
    # rest only change gradients).
    "aten::index_select": Rule("index_select", ("self", "index"), attrs={"dim": "dim"}),
    "aten::embedding": Rule("embedding", ("weight", "indices")),
    # Bags of varying length (1-D indices and offsets): one node; PyTorch's 2-D bags of one length
    # are decomposed while capturing (_embedding_bag below). ATen's padding_idx -1 is None.
    "aten::_embedding_bag": Rule(
        "embedding_bag", ("weight", "indices", "offsets", "per_sample_weights"),
        {"mode": ("mode", _bag_mode), "include_last_offset": "include_last_offset",
         "padding_idx": ("padding_idx", _bag_padding)}, first=True),
    "aten::_embedding_bag_forward_only": Rule(
        "embedding_bag", ("weight", "indices", "offsets", "per_sample_weights"),
        {"mode": ("mode", _bag_mode), "include_last_offset": "include_last_offset",
         "padding_idx": ("padding_idx", _bag_padding)}, first=True),
    # torch.gather(x, dim, index): out[..., j, ...] = x[..., index[..., j, ...], ...] along dim.
    "aten::gather": Rule("gather", ("self", "index"), attrs={"dim": "dim"}),
    # x.repeat(r...) / torch.tile: each dim tiled r times (leading new dims for extra repeats).
    "aten::repeat": Rule("repeat", attrs={"repeats": "repeats"}),
    # torch.diagonal / diag of a matrix / trace: the diagonal as the last dim.
    "aten::diagonal": Rule("diagonal", attrs={"offset": "offset", "dim1": "dim1", "dim2": "dim2"}),
    # x[i0, i1, ...] with several integer index tensors (one is index_select: _index_tensor).
    "aten::index.Tensor": Rule("index", ("self", "indices")),
    "aten::unfold": Rule("unfold", attrs={"dim": "dimension", "size": "size", "step": "step"}),
    "aten::constant_pad_nd": Rule("pad", attrs={"pad": "pad", "value": "value"}),
    "aten::_pad_circular": Rule("pad", attrs={"pad": "pad"}, fixed={"mode": "circular",
                                                                  "value": None}),
    "aten::triu": Rule("triu", attrs={"diagonal": "diagonal"}),
    "aten::tril": Rule("tril", attrs={"diagonal": "diagonal"}),
    "aten::split.Tensor": Rule("split", attrs={"split_size": "split_size", "dim": "dim"}),
    "aten::split_with_sizes": Rule("split", attrs={"split_size": "split_sizes", "dim": "dim"}),
    "aten::full": Rule("full", (), {"size": "size", "fill_value": "fill_value",
                                    "dtype": "dtype"}),
    # torch.arange (positional ids, one_hot's classes): start + step * i along its one dim.
    "aten::arange.start_step": Rule("arange", (), {"start": "start", "end": "end", "step": "step",
                                                  "dtype": "dtype"}),
    "aten::arange.start": Rule("arange", (), {"start": "start", "end": "end", "dtype": "dtype"},
                               {"step": 1}),
    "aten::arange.default": Rule("arange", (), {"end": "end", "dtype": "dtype"},
                                 {"start": 0, "step": 1}),
    "aten::scalar_tensor": Rule("full", (), {"fill_value": "s", "dtype": "dtype"},
                                {"size": []}),
    # zeros_like/ones_like/full_like: a constant of the operand's shape (its values unread).
    "aten::full_like": Rule("full", (), {"fill_value": "fill_value", "dtype": "dtype"}),
    # Python-level functions kept whole (PYTHON_OPS, below)
    "egg::normalize": Rule("normalize", ("input",), {"p": "p", "dim": "dim", "eps": "eps"}),
    # F.dropout in training mode with p > 0, numbered by call (rng.py; spec.py adds the operand
    # egg_rng, the [seed, offset] input it draws from).
    "egg::dropout": Rule("dropout", ("input",), {"p": "p", "stream": "stream"}),
})
for _d in (1, 2, 3):
    RULES["aten::conv%dd" % _d] = Rule("conv%dd" % _d, ("input", "weight", "bias"), {
        "stride": "stride", "padding": "padding", "dilation": "dilation", "groups": "groups"})
    RULES["aten::conv_transpose%dd" % _d] = Rule(
        "conv_transpose%dd" % _d, ("input", "weight", "bias"),
        {"stride": "stride", "padding": "padding", "output_padding": "output_padding",
         "groups": "groups", "dilation": "dilation"})
    _pool = {"kernel_size": "kernel_size", "stride": ("stride", _stride), "padding": "padding"}
    RULES["aten::max_pool%dd" % _d] = Rule(
        "max_pool%dd" % _d, attrs=dict(_pool, dilation="dilation", ceil_mode="ceil_mode"),
        fixed={"return_indices": False})
    RULES["aten::max_pool%dd_with_indices" % _d] = Rule(
        "max_pool%dd" % _d, attrs=dict(_pool, dilation="dilation", ceil_mode="ceil_mode"),
        fixed={"return_indices": False}, first=True)
    _avg = dict(_pool, ceil_mode="ceil_mode", count_include_pad="count_include_pad")
    if _d > 1:
        _avg["divisor_override"] = "divisor_override"
    RULES["aten::avg_pool%dd" % _d] = Rule("avg_pool%dd" % _d, attrs=_avg)
    RULES["aten::adaptive_avg_pool%dd" % _d] = Rule("adaptive_avg_pool%dd" % _d,
                                                   attrs={"output_size": "output_size"})
    # F.pad(mode="reflect" / "replicate"): the widths as constant_pad_nd's, (before, after) per
    # dim from the last (mode "circular": aten::_pad_circular, below).
    RULES["aten::reflection_pad%dd" % _d] = Rule("pad", attrs={"pad": "padding"},
                                                 fixed={"mode": "reflect", "value": None})
    RULES["aten::replication_pad%dd" % _d] = Rule("pad", attrs={"pad": "padding"},
                                                  fixed={"mode": "replicate", "value": None})
    RULES["aten::adaptive_max_pool%dd" % _d] = Rule(
        "adaptive_max_pool%dd" % _d, attrs={"output_size": "output_size"},
        fixed={"return_indices": False}, first=True)
    # F.interpolate / nn.Upsample: the output size is the node's shape; scale factors, where the
    # caller gave them, set the source index as in PyTorch (1 / scale, else in / out).
    RULES["aten::upsample_nearest%dd.vec" % _d] = Rule(
        "upsample_nearest", ("input",), {"scales": "scale_factors"}, {"exact": False})
    RULES["aten::_upsample_nearest_exact%dd.vec" % _d] = Rule(
        "upsample_nearest", ("input",), {"scales": "scale_factors"}, {"exact": True})
    if _d == 2:
        RULES["aten::upsample_bicubic2d.vec"] = Rule(
            "upsample_cubic", ("input",), {"scales": "scale_factors",
                                           "align_corners": "align_corners"})
    RULES["aten::upsample_%s.vec" % ("linear1d", "bilinear2d", "trilinear3d")[_d - 1]] = Rule(
        "upsample_linear", ("input",), {"scales": "scale_factors",
                                        "align_corners": "align_corners"})



def _define_normalize():
    @torch.library.custom_op("egg::normalize", mutates_args=())
    def normalize(input: torch.Tensor, p: float, dim: int, eps: float) -> torch.Tensor:
        return _ORIGINAL["normalize"](input, p, dim, eps)

    @normalize.register_fake
    def _(input, p, dim, eps):
        return torch.empty_like(input)

    def call(input, p=2.0, dim=1, eps=1e-12, out=None):
        if out is not None or not isinstance(p, (int, float)) or not isinstance(dim, int):
            return _ORIGINAL["normalize"](input, p, dim, eps, out)
        return torch.ops.egg.normalize(input, float(p), dim, float(eps))
    return call


def _embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0,
                   scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                   include_last_offset=False, padding_idx=None):
    """F.embedding_bag of bags of one length (a 2-D input, no offsets) as the embedding gather and
    a sum, mean or max over the bag, entries equal to padding_idx left out (an empty bag is 0),
    per_sample_weights multiplying each row first (sum); other calls are PyTorch's own (bags of
    varying length, given by offsets, are data-dependent: ATen's _embedding_bag, which RULES keeps
    as one embedding_bag node)."""
    if (not isinstance(input, torch.Tensor) or input.dim() != 2 or offsets is not None or
            max_norm is not None or mode not in ("sum", "mean", "max") or
            (per_sample_weights is not None and mode != "sum")):
        return _ORIGINAL["embedding_bag"](input, weight, offsets, max_norm, norm_type,
                                          scale_grad_by_freq, mode, sparse, per_sample_weights,
                                          include_last_offset, padding_idx)
    rows = F.embedding(input, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(-1)
    if padding_idx is None:
        return {"sum": lambda: rows.sum(1), "mean": lambda: rows.mean(1),
                "max": lambda: rows.amax(1)}[mode]()
    pad = padding_idx if padding_idx >= 0 else weight.shape[0] + padding_idx
    keep = (input != pad).unsqueeze(-1)
    if mode == "max":
        best = rows.masked_fill(~keep, float("-inf")).amax(1)
        return torch.where(keep.any(1), best, torch.zeros_like(best))
    total = (rows * keep.to(rows.dtype)).sum(1)
    return total if mode == "sum" else total / keep.to(rows.dtype).sum(1).clamp_min(1.0)


# Functions of torch.nn.functional that are Python, not an ATen op, yet EGG has a template for:
# while a model is captured, F.<name> calls the egg::<name> custom op (whose eager body is the
# original function), so the graph holds one node instead of its pieces. PYTHON_DECOMPOSITIONS
# are F functions whose ATen op EGG does not take, written while capturing with ops it does.
_ORIGINAL = {"normalize": F.normalize, "embedding_bag": F.embedding_bag}
PYTHON_OPS = {"normalize": _define_normalize()}
PYTHON_DECOMPOSITIONS = {"embedding_bag": _embedding_bag}


@contextlib.contextmanager
def python_ops():
    """F.<name> of PYTHON_OPS calls its egg:: op for the duration, those of PYTHON_DECOMPOSITIONS
    their decomposition, and F.dropout in training mode egg::dropout (rng.capturing)."""
    from . import rng
    for name, call in list(PYTHON_OPS.items()) + list(PYTHON_DECOMPOSITIONS.items()):
        setattr(F, name, call)
    try:
        with rng.capturing():
            yield
    finally:
        for name, original in _ORIGINAL.items():
            setattr(F, name, original)


# Ops PyTorch tags nondeterministic_seeded that draw nothing when one of their arguments has a
# given value: {ATen op: [(schema argument, value that draws nothing), ...]}.
SEEDED_UNLESS = {"aten::scaled_dot_product_attention": [("dropout_p", 0.0)],
                 "aten::dropout": [("train", False), ("p", 0.0)],
                 "aten::native_dropout": [("train", False), ("p", 0.0)],
                 # F.rrelu in eval mode is leaky_relu by the middle slope (decompositions()).
                 "aten::rrelu": [("training", False)],
                 # Recurrent layers draw only for dropout between layers.
                 "aten::lstm": [("train", False), ("dropout", 0.0)],
                 "aten::gru": [("train", False), ("dropout", 0.0)],
                 "aten::rnn_tanh": [("train", False), ("dropout", 0.0)],
                 "aten::rnn_relu": [("train", False), ("dropout", 0.0)]}

# Ops that only assert or alias: their users read their input directly.
TRANSPARENT = frozenset({"aten::alias", "aten::detach", "aten::lift_fresh",
                         "aten::lift_fresh_copy", "aten::_assert_tensor_metadata",
                         "aten::_assert_scalar", "aten::sym_constrain_range_for_size",
                         "aten::_assert_async"})
# Keyword arguments of factory/copy ops that say where a tensor lives, not what it is.
PLACEMENT = frozenset({"device", "layout", "pin_memory", "memory_format", "non_blocking"})


def _qualified(overload):
    """(``aten::name``, ``aten::name.overload``) of an OpOverload."""
    name = overload._schema.name
    return name, name + "." + overload._overloadname


def rule_for(target):
    """The Rule of an ATen OpOverload, or None (an op EGG does not keep)."""
    if not isinstance(target, torch._ops.OpOverload):
        return None
    name, full = _qualified(target)
    return RULES.get(full) or RULES.get(name)


def draws_random(target, args, kwargs):
    """True for a call that draws random numbers (``nondeterministic_seeded``, unless an
    argument says it draws nothing: ``SEEDED_UNLESS``)."""
    if torch.Tag.nondeterministic_seeded not in getattr(target, "tags", ()):
        return False
    bound = bind(target, args, kwargs)
    return not any(bound.get(name) == value
                   for name, value in SEEDED_UNLESS.get(_qualified(target)[0], ()))


def is_transparent(target):
    return isinstance(target, torch._ops.OpOverload) and _qualified(target)[0] in TRANSPARENT


def qualified_target(target):
    """``aten.triu.default`` for an OpOverload, ``getitem`` for operator.getitem."""
    if isinstance(target, torch._ops.OpOverload):
        return _qualified(target)[1].replace("::", ".")
    return getattr(target, "__name__", str(target))


def canonical_name(target):
    """The spec op a target becomes: its Rule's op, else its qualified name."""
    rule = rule_for(target)
    return rule.op if rule is not None else qualified_target(target)


def bind(target, args, kwargs):
    """{schema argument name: value} with defaults filled in."""
    bound = {}
    for i, a in enumerate(target._schema.arguments):
        if i < len(args) and not a.kwarg_only:
            bound[a.name] = args[i]
        elif a.name in kwargs:
            bound[a.name] = kwargs[a.name]
        elif a.has_default_value():
            bound[a.name] = a.default_value
        else:
            bound[a.name] = None
    return bound


class Canon:
    """The canonical form of one ATen call: op, operands (nodes or values), attrs."""

    __slots__ = ("op", "args", "attrs", "known", "first")

    def __init__(self, op, args, attrs, known=True, first=False):
        self.op, self.args, self.attrs, self.known, self.first = op, args, attrs, known, first


def canonicalize(target, args, kwargs):
    """The Canon of a call (fx node target, args, kwargs)."""
    rule = rule_for(target)
    if rule is None:
        attrs = {k: v for k, v in kwargs.items() if k not in PLACEMENT}
        return Canon(qualified_target(target), list(args), attrs, known=False)
    bound = bind(target, args, kwargs)
    operands = [o.value if isinstance(o, Lit) else bound.get(o) for o in rule.operands]
    attrs = {}
    for name, source in rule.attrs.items():
        source, convert = source if isinstance(source, tuple) else (source, None)
        value = bound.get(source)
        attrs[name] = convert(value) if convert else value
    attrs.update(rule.fixed)
    return Canon(rule.op, operands, attrs, first=rule.first)


# Ops kept whole although no rule names them: torch's table would unroll every time step of a
# recurrent layer into tens of thousands of nodes (level-3 GRUs take minutes to decompose). Kept
# as one node, the backend names the op it has no kernel for.
KEEP_WHOLE = frozenset({"aten::lstm", "aten::gru", "aten::rnn_tanh", "aten::rnn_relu"})


def _clamp_tensor(x, min=None, max=None):  # noqa: A002 (ATen's argument names)
    """clamp with tensor bounds (``torch.clamp(x, max=t)``): maximum, then minimum, which
    broadcast and promote as clamp does; torch's table keeps it whole."""
    out = x
    if min is not None:
        out = torch.maximum(out, min)
    if max is not None:
        out = torch.minimum(out, max)
    return out


def _var(x, dim=None, *, correction=None, keepdim=False):
    """Variance as two reductions: the mean, then the sum of squared deviations over N -
    correction (at least 0: N <= correction gives inf or nan, as torch.var does)."""
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else list(dim)
    n = 1
    for d in dims:
        n *= x.shape[d]
    c = 1 if correction is None else correction
    dev = x - torch.mean(x, dims, keepdim=True)
    return torch.sum(dev * dev, dims, keepdim=keepdim) / max(n - c, 0)


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    dims = list(range(x.dim())) if dim is None or len(dim) == 0 else list(dim)
    return (_var(x, dims, correction=correction, keepdim=keepdim),
            torch.mean(x, dims, keepdim=keepdim))


def _std(x, dim=None, *, correction=None, keepdim=False):
    return torch.sqrt(_var(x, dim, correction=correction, keepdim=keepdim))


def _std_mean(x, dim=None, *, correction=None, keepdim=False):
    var, mean = _var_mean(x, dim, correction=correction, keepdim=keepdim)
    return torch.sqrt(var), mean


def _index_tensor(x, indices):
    """``x[..., idx, ...]`` with one integer index tensor (the others ``None``, the leading
    ``:``s): an index_select along that dim, reshaped to torch's result (the index's shape in
    the indexed dim's place). Several index tensors stay ``aten.index.Tensor`` (the spec op
    ``index``), and so does a bool mask (an error naming it: its result's shape is
    data-dependent)."""
    given = [(d, t) for d, t in enumerate(indices) if t is not None]
    if len(given) != 1:
        return NotImplemented
    d, idx = given[0]
    if idx.dtype not in (torch.int64, torch.int32):
        return NotImplemented
    picked = torch.index_select(x, d, idx.reshape(-1))
    return picked.reshape(tuple(x.shape[:d]) + tuple(idx.shape) + tuple(x.shape[d + 1:]))


def _bitwise_not(x):
    """~x: for a bool tensor (a mask) its logical not, x == 0; for integers -x - 1, the same bits
    in two's complement. torch's table keeps it whole."""
    return x == 0 if x.dtype == torch.bool else -x - 1


def _bitwise(logical):
    """bitwise_and/or/xor: of two bools the logical op (a mask); of integers the op itself
    (NotImplemented keeps it, RULES names it)."""
    def op(x, other):
        # A bool with a Python int is an int64 op in PyTorch (type promotion): kept.
        if x.dtype == torch.bool and (isinstance(other, bool) or (
                isinstance(other, torch.Tensor) and other.dtype == torch.bool)):
            return logical(x, other if isinstance(other, torch.Tensor) else
                           torch.full_like(x, other))
        return NotImplemented
    return op


def _logical_not(x):
    """torch.logical_not: x == 0, a bool for every dtype."""
    return x == 0


def _copy(dst, src, non_blocking=False):
    """``aten.copy`` (what export makes of ``dst.copy_(src)``): ``src`` in ``dst``'s dtype,
    broadcast to its shape; nothing of ``dst`` is read."""
    out = src.to(dst.dtype)
    if tuple(out.shape) != tuple(dst.shape):
        out = out.expand(dst.shape)
    return out.clone()


def _roll(x, shifts, dims=()):
    """torch.roll as slices and a cat per rolled dim (torch's own decomposition gathers by an
    arange index, which no kernel family takes); without dims, of the flattened tensor."""
    if len(dims) == 0:
        return _roll(x.reshape(-1), shifts, [0]).reshape(x.shape)
    for shift, dim in zip(shifts, dims):
        size = x.shape[dim]
        s = shift % size if size else 0
        if s:
            x = torch.cat([x.narrow(dim, size - s, s), x.narrow(dim, 0, size - s)], dim)
    return x


def _rrelu(x, lower=1.0 / 8.0, upper=1.0 / 3.0, training=False, generator=None):
    """F.rrelu in eval mode (draws_random refuses training mode): leaky_relu by (lower + upper)/2."""
    return F.leaky_relu(x, (lower + upper) / 2.0)


def _addmv(x, mat, vec, beta=1, alpha=1):
    """torch.addmv: beta * x + alpha * (mat @ vec) (x unread when beta is 0, as ATen's)."""
    prod = torch.mv(mat, vec)
    prod = prod if alpha == 1 else prod * alpha
    return prod if beta == 0 else prod + (x if beta == 1 else x * beta)


def _cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """F.cosine_similarity as ATen computes it: both operands broadcast, each divided by its L2
    norm along dim (clamped below at eps), the products summed along dim."""
    x1, x2 = torch.broadcast_tensors(x1, x2)
    n1 = torch.linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clamp_min(eps)
    n2 = torch.linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _col2im(input, output_size, kernel_size, dilation, padding, stride):
    """F.fold (col2im): each kernel offset's block of patch values spread by the stride (zeros
    between), shifted to its place in the padded output and summed, then the padding cropped: pads,
    views and adds the element-wise kernels compute by index (torch's own decomposition writes it
    as an index_put, a scatter)."""
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    H, W = output_size
    lh = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    lw = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    n, c = x.shape[0], x.shape[1] // (kh * kw)
    x = x.reshape(n, c, kh, kw, lh, lw)
    hp, wp = H + 2 * ph, W + 2 * pw
    th, tw = (lh - 1) * sh + 1, (lw - 1) * sw + 1
    total = None
    for i in range(kh):
        for j in range(kw):
            b = x[:, :, i, j]
            if sh > 1:
                b = F.pad(b.unsqueeze(3), (0, 0, 0, sh - 1)).reshape(n, c, lh * sh, lw)[:, :, :th]
            if sw > 1:
                b = F.pad(b.unsqueeze(4), (0, sw - 1)).reshape(n, c, th, lw * sw)[:, :, :, :tw]
            b = F.pad(b, (j * dw, wp - j * dw - tw, i * dh, hp - i * dh - th))
            total = b if total is None else total + b
    out = total[:, :, ph:ph + H, pw:pw + W]
    return out if batched else out.squeeze(0)


def _truth_reduction(extreme):
    """torch.any (extreme amax) / torch.all (amin): the extreme of x != 0 (as 0/1) is 1, over dim
    (int or list; None: all)."""
    def reduce(x, dim=None, keepdim=False):
        hit = (x != 0).to(torch.float32)
        dims = list(range(x.dim())) if dim is None else dim
        return extreme(hit, dims, keepdim) != 0
    return reduce


def decompositions():
    """torch's default decomposition table without the ops RULES keeps as single nodes (and
    KEEP_WHOLE), with EGG's own rows for ops the table keeps whole (clamp.Tensor; var and std as
    a mean and a sum; indexing by one integer tensor as index_select; roll as slices and a cat;
    copy as its source, cast and broadcast; the nots of a mask as x == 0; cosine_similarity as
    its norms and a sum)."""
    from torch.export import default_decompositions
    table = default_decompositions()
    for op in list(table.keys()):
        if isinstance(op, torch._ops.OpOverload) and (
                rule_for(op) is not None or _qualified(op)[0] in KEEP_WHOLE):
            table.pop(op)
    aten = torch.ops.aten
    table[aten.clamp.Tensor] = _clamp_tensor
    table[aten.index.Tensor] = _index_tensor
    table[aten.roll.default] = _roll
    table[aten.bitwise_not.default] = _bitwise_not
    table[aten.logical_not.default] = _logical_not
    for name, logical in (("bitwise_and", torch.logical_and), ("bitwise_or", torch.logical_or),
                          ("bitwise_xor", torch.logical_xor)):
        for overload in ("Tensor", "Scalar"):
            table[getattr(getattr(aten, name), overload)] = _bitwise(logical)
    table[aten.copy.default] = _copy
    table[aten.rrelu.default] = _rrelu
    table[aten.addmv.default] = _addmv
    table[aten.cosine_similarity.default] = _cosine_similarity
    table[aten.col2im.default] = _col2im
    from torch._decomp import decomposition_table as aten_decompositions
    table[aten.grid_sampler_2d.default] = aten_decompositions[aten.grid_sampler_2d.default]
    for overload in ("dim", "dims", "default"):
        table[getattr(aten.any, overload)] = _truth_reduction(torch.amax)
        table[getattr(aten.all, overload)] = _truth_reduction(torch.amin)
    table[aten.var.correction] = _var
    table[aten.var_mean.correction] = _var_mean
    table[aten.std.correction] = _std
    table[aten.std_mean.correction] = _std_mean
    return table
