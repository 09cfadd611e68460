"""Accuracy of algebra.h's feature-sum rewrite on the CPU (no GPU needed): the mean over the
output features of linear(x, W, b) - v, as PyTorch computes it in fp32 and as the rewrite does
(x . colsum(W) + sum(b - v)) / N, each against an fp64 reference.

usage: python bench/algebra_accuracy.py [M K N]
"""
import sys

import torch


def main():
    m, k, n = (int(a) for a in sys.argv[1:4]) if len(sys.argv) >= 4 else (256, 4096, 4096)
    torch.manual_seed(0)
    x, w = torch.randn(m, k), torch.randn(n, k) / k ** 0.5
    b, v = torch.randn(n), torch.randn(n)

    def written(x, w, b, v):
        return ((x @ w.T + b) - v).mean(1, keepdim=True)

    def rewritten(x, w, b, v):
        return ((x * w.sum(0, keepdim=True)).sum(-1, keepdim=True) + (b - v).sum()) / n

    exact = written(x.double(), w.double(), b.double(), v.double())
    for name, f in (("pytorch fp32", written), ("rewrite fp32", rewritten)):
        err = (f(x, w, b, v).double() - exact).abs().max().item()
        print("%s: max error %.3g (values up to %.3g)" % (name, err, exact.abs().max().item()))


if __name__ == "__main__":
    main()
