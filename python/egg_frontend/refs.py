"""Reference outputs: the user's eager model (the ground truth) run on a copy of each input set
under ``torch.manual_seed(k)``.  Every returned tensor is contiguous and stays on the device the
model ran on (the reference server serves them from the GPU; nothing goes through the disk).
"""

import contextlib

import torch

from .errors import UserError, describe, user_frame


def run_eager(op, inputs, seed, n_outputs, user_files, rng_state=None):
    """Outputs of ``op.model(*inputs)`` as a list of contiguous tensors; with ``rng_state`` (the
    set's egg_rng, [seed, offset]) its dropout draws what EGG's kernels draw (rng.py)."""
    from . import rng
    from .loader import reset_state
    reset_state(op)
    args = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
    torch.manual_seed(seed)
    try:
        with torch.no_grad(), (rng.drawing(rng_state) if rng_state is not None
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
