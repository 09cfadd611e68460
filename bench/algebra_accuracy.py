"""Accuracy of algebra.h's feature-reduction rewrites on the CPU (no GPU needed), each as PyTorch
computes it in fp32 and as the rewrite does, against an fp64 reference:
  mean: the mean over the output features of linear(x, W, b) - v, rewritten as
        (x . colsum(W) + sum(b - v)) / N;
  pool: avg_pool1d(linear(x, W, b) * s, g) over the features, rewritten as
        linear(x, s * mean_g(W), mean_g(s * b)).

usage: python bench/algebra_accuracy.py [M K N [G]]
"""
import sys

import torch
import torch.nn.functional as F


def main():
    args = [int(a) for a in sys.argv[1:]]
    m, k, n = args[:3] if len(args) >= 3 else (256, 4096, 4096)
    g = args[3] if len(args) >= 4 else 16
    torch.manual_seed(0)
    x, w = torch.randn(m, k), torch.randn(n, k) / k ** 0.5
    b, v = torch.randn(n), torch.randn(n)
    s = 2.0

    cases = {
        "mean": (lambda x, w, b: ((x @ w.T + b) - v.to(x.dtype)).mean(1, keepdim=True),
                 lambda x, w, b: ((x * w.sum(0, keepdim=True)).sum(-1, keepdim=True)
                                  + (b - v).sum()) / n),
        "pool": (lambda x, w, b: F.avg_pool1d(((x @ w.T + b) * s).unsqueeze(1), g).squeeze(1),
                 lambda x, w, b: F.linear(x, w.view(n // g, g, k).mean(1) * s,
                                          (b * s).view(n // g, g).mean(1))),
    }
    for case, (written, rewritten) in cases.items():
        exact = written(x.double(), w.double(), b.double())
        for name, f in (("pytorch fp32", written), ("rewrite fp32", rewritten)):
            err = (f(x, w, b).double() - exact).abs().max().item()
            print("%s, %s: max error %.3g (values up to %.3g)"
                  % (case, name, err, exact.abs().max().item()))


if __name__ == "__main__":
    main()
