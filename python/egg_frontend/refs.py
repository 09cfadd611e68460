"""Reference outputs: the user's eager model (the ground truth) run on a copy of each input set
under ``torch.manual_seed(k)``, equal values of topk and sort in index order (``StableOrder``).
Every returned tensor is contiguous and stays on the device the model ran on (the reference server
serves them from the GPU; nothing goes through the disk).
"""

import contextlib

import torch

from .errors import UserError, describe, user_frame


class StableOrder(torch.overrides.TorchFunctionMode):
    """torch.topk, sort, argsort, msort, kthvalue and median with equal values in index order (a
    stable sort; topk as its first k, kthvalue and median as one of its positions), the order
    EGG's sort kernels give. PyTorch leaves the order of equal values to each implementation (its
    CPU and CUDA topk differ), so any order is a correct topk: the reference fixes one, and values
    that tie are compared with their indices in it."""

    _TOPK = (torch.topk, torch.Tensor.topk)
    _SORTS = (torch.sort, torch.Tensor.sort, torch.argsort, torch.Tensor.argsort)
    _KTH = (torch.kthvalue, torch.Tensor.kthvalue)
    _MEDIAN = (torch.median, torch.Tensor.median)

    @staticmethod
    def _pick(x, dim, keepdim, pos):
        """(values, indices) at sorted position ``pos`` (a tensor of x's rows' shape) of x's
        ascending stable sort along dim."""
        values, indices = torch.sort(x, dim=dim, stable=True)
        at = pos.unsqueeze(dim)
        v, i = values.gather(dim, at), indices.gather(dim, at)
        return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in self._KTH:
            bound = dict(zip(("input", "k", "dim", "keepdim"), args), **kwargs)
            x, dim = bound["input"], bound.get("dim", -1)
            pos = torch.full_like(x.select(dim, 0), bound["k"] - 1, dtype=torch.int64)
            return torch.return_types.kthvalue(self._pick(x, dim, bound.get("keepdim", False), pos))
        if func in self._MEDIAN and (len(args) > 1 or "dim" in kwargs):
            # The lower middle element, or the row's first NaN (NaN sorts last: after the numbers).
            bound = dict(zip(("input", "dim", "keepdim"), args), **kwargs)
            x, dim = bound["input"], bound["dim"]
            numbers = (~torch.isnan(x)).sum(dim)
            pos = torch.where(numbers < x.shape[dim], numbers, (x.shape[dim] - 1) // 2)
            return torch.return_types.median(self._pick(x, dim, bound.get("keepdim", False), pos))
        if func in self._TOPK:
            names = ("input", "k", "dim", "largest", "sorted")
            bound = dict(zip(names, args), **kwargs)
            dim = bound.get("dim", -1)
            values, indices = torch.sort(bound["input"], dim=dim,
                                         descending=bound.get("largest", True), stable=True)
            k = bound["k"]
            return torch.return_types.topk((values.narrow(dim, 0, k), indices.narrow(dim, 0, k)))
        if func in self._SORTS:
            bound = dict(zip(("input", "dim", "descending"), args), **kwargs)
            bound.pop("stable", None)
            sort = torch.sort if func in self._SORTS[:2] else torch.argsort
            return sort(bound.pop("input"), stable=True, **bound)
        if func in (torch.msort, torch.Tensor.msort):
            return torch.sort(args[0], dim=0, stable=True).values
        return func(*args, **kwargs)


def run_eager(op, inputs, seed, n_outputs, user_files, rng_state=None):
    """Outputs of ``op.model(*inputs)`` as a list of contiguous tensors; with ``rng_state`` (the
    set's egg_rng, [seed, offset]) its dropout draws what EGG's kernels draw (rng.py)."""
    from . import rng
    from .loader import reset_state
    reset_state(op)
    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    torch.manual_seed(seed)
    try:
        with torch.no_grad(), StableOrder(), (rng.drawing(rng_state) if rng_state is not None
                                              else contextlib.nullcontext()):
            result = op.model(*args)
    except Exception as e:
        file, line = user_frame(e, user_files)
        raise UserError(file or op.path, line, "forward",
                        "forward failed on input set %d: %s" % (seed, describe(e)),
                        "get_inputs() must give inputs forward accepts under every seed")
    items = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(items) != n_outputs or not all(isinstance(t, torch.Tensor) for t in items):
        raise UserError(op.path, op.forward_return_line(), "output",
                        "forward's outputs on input set %d differ from the traced ones" % seed,
                        "forward must return the same number of tensors for every input set")
    return [t.detach().contiguous().clone() for t in items]
