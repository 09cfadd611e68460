"""EGG's op frontend: loads a KernelBench-format op.py, traces it and writes the spec.

Run as ``python3 -m egg_frontend trace --op <abs op.py> --out <dir> [--seeds N]``;
docs/SPEC.md is the contract.  Importing this package does not import torch.
"""

SCHEMA = 2


def main(argv=None):
    """Entry point, also used in-process by the tests; returns the exit status."""
    from .__main__ import main as _main
    return _main(argv)
