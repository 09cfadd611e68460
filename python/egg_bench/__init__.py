"""egg_bench: times the PyTorch baselines of an op.py (eager and torch.compile) on the GPU the same
way egg-harness times a candidate: CUDA events, warm-ups, L2 flushed between trials, at least 100
trials and 0.5 s, median with p10/p90.

    PYTHONPATH=python python3 -m egg_bench baseline --op op.py --out times.json
"""
from .timing import bench  # noqa: F401
