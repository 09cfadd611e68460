"""python3 -m egg_bench baseline --op op.py --out times.json [--no-compile] [--no-max-autotune]
[--spec spec.json] [--min-trials N] [--min-time S]"""
import argparse
import sys


def main(argv=None):
    p = argparse.ArgumentParser(prog="egg_bench", description="Times PyTorch baselines of an op.py on the GPU.")
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("baseline", help="time PyTorch eager and torch.compile (default mode and "
                                        "max-autotune-no-cudagraphs)")
    b.add_argument("--op", required=True, help="KernelBench-style op.py")
    b.add_argument("--out", required=True, help="times.json to write")
    b.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    b.add_argument("--no-max-autotune", action="store_true",
                   help="skip torch.compile's max-autotune-no-cudagraphs mode (its autotuning takes "
                        "minutes per GEMM or convolution)")
    b.add_argument("--spec", help="the op's traced spec.json: sizes the GPU memory admission "
                                  "(egg_frontend/gpu_memory.py) when other EGG jobs share the GPU")
    b.add_argument("--min-trials", type=int, default=100)
    b.add_argument("--min-time", type=float, default=0.5, help="seconds")
    args = p.parse_args(argv)
    if args.cmd == "baseline":
        # Importing torch and the op is CPU-heavy work: never during another job's timed span
        # (egg-gen starts the baselines beside the stages, gpu_lock.py).
        from .gpu_lock import cpu_work_lock
        with cpu_work_lock():
            from . import baseline
        return baseline.main(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
