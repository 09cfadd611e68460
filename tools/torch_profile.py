"""Which CUDA kernels eager PyTorch and torch.compile run for KernelBench-style op.py files.

    python3 tools/torch_profile.py kb/level2/25_Conv2d_Min_Tanh_Tanh.py [more op.py ...]

For each file: Model(*get_init_inputs()) on the GPU in eval mode, get_inputs() on the GPU, three
warm-up calls, then torch.profiler over five calls under inference mode, eager and
torch.compile (default mode); prints the six kernels with the most CUDA time. A diagnostic for
reading what a baseline does (docs/PERFORMANCE.md), not a timing: use egg-gen bench for figures.
"""
import importlib.util
import sys

import torch
from torch.profiler import ProfilerActivity, profile


def load(path):
    spec = importlib.util.spec_from_file_location("op", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(paths):
    if not paths:
        sys.exit("usage: torch_profile.py <op.py> [op.py ...]")
    if not torch.cuda.is_available():
        sys.exit("torch_profile.py: no CUDA device; run it on the GPU machine")
    for path in paths:
        m = load(path)
        torch.manual_seed(0)
        model = m.Model(*m.get_init_inputs()).cuda().eval()
        xs = [x.cuda() if torch.is_tensor(x) else x for x in m.get_inputs()]
        with torch.inference_mode():
            for name, f in (("eager", model), ("compile", torch.compile(model))):
                for _ in range(3):
                    f(*xs)
                torch.cuda.synchronize()
                with profile(activities=[ProfilerActivity.CUDA]) as p:
                    for _ in range(5):
                        f(*xs)
                    torch.cuda.synchronize()
                print("==", path.split("/")[-1], name)
                print(p.key_averages().table(sort_by="cuda_time_total", row_limit=6,
                                             max_name_column_width=90))


if __name__ == "__main__":
    main(sys.argv[1:])
