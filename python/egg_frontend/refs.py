"""Reference tensors: refs/params.pt and refs/set<k>.pt, written atomically with torch.save.

Outputs come from running the user's eager model (the ground truth) on a copy of
each input set under ``torch.manual_seed(k)``; every saved tensor is contiguous
and on the CPU.
"""

import os

import torch

from .errors import UserError, describe, user_frame


def cpu(t):
    return t.detach().to("cpu").contiguous().clone()


def save(obj, path, written):
    """torch.save to a temp name, then rename; records ``path`` in ``written``."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = "%s.tmp.%d" % (path, os.getpid())
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    written.append(path)


def run_eager(op, inputs, seed, n_outputs, user_files):
    """Outputs of ``op.model(*inputs)`` as a list of CPU tensors."""
    from .loader import reset_state
    reset_state(op)
    args = [t.clone() for t in inputs]
    torch.manual_seed(seed)
    try:
        with torch.no_grad():
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
    return [cpu(t) for t in items]


def write_set(out_dir, k, inputs, outputs, written):
    rel = "refs/set%d.pt" % k
    save({"inputs": [cpu(t) for t in inputs], "outputs": outputs},
         os.path.join(out_dir, rel), written)
    return rel


def write_params(out_dir, params, written, initial_state=None):
    """params.pt from the state as built (``initial_state``), not as left by a forward."""
    initial_state = initial_state or {}
    rel = "refs/params.pt"
    save({name: cpu(initial_state.get(name, t)) for name, t, _ in params},
         os.path.join(out_dir, rel), written)
    return rel
