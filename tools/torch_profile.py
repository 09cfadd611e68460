"""Which CUDA kernels eager PyTorch and torch.compile run for KernelBench-style op.py files.

    python3 tools/torch_profile.py kb/level2/25_Conv2d_Min_Tanh_Tanh.py [more op.py ...]

For each file: the model and inputs exactly as `egg_bench baseline` builds them
(python/egg_bench/baseline.py: load_op, build_model, make_inputs), three warm-up calls, then
torch.profiler over five calls under inference mode, eager and torch.compile (default mode);
prints the six kernels with the most CUDA time. A diagnostic for reading what a baseline does
(docs/PERFORMANCE.md), not a timing: use egg-gen bench for figures.
"""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from egg_bench.baseline import build_model, load_op, make_inputs  # noqa: E402


def main(paths):
    if not paths:
        sys.exit("usage: torch_profile.py <op.py> [op.py ...]")
    if not torch.cuda.is_available():
        sys.exit("torch_profile.py: no CUDA device; run it on the GPU machine")
    for path in paths:
        mod = load_op(path)
        model = build_model(mod).cuda()
        xs = make_inputs(mod)
        with torch.inference_mode():
            for name, f in (("eager", model), ("compile", torch.compile(model))):
                for _ in range(3):
                    f(*xs)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as p:
                    for _ in range(5):
                        f(*xs)
                    torch.cuda.synchronize()
                print("==", os.path.basename(path), name)
                print(p.key_averages().table(sort_by="cuda_time_total", row_limit=6,
                                             max_name_column_width=90))


if __name__ == "__main__":
    main(sys.argv[1:])
