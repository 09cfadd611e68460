// Algebraic restructuring, stage 1's algorithmic structure beyond fusion: a reduction over groups
// of a linear map's output features is the linear map with its weight reduced first,
//   sum_n (x W^T + b)_n = x . (sum_n W_n) + sum_n b_n,
//   avg_pool(x W^T + b, g)_j = x . mean(W_{jg..jg+g-1}) + mean(b_{jg..jg+g-1}),
// through any chain of element-wise ops between them that is affine in each feature (a scalar
// multiply or divide, adding or subtracting a scalar or a per-feature vector). A sum or mean over
// all N features turns the [M, N] product (2 M N K flops) into a column sum of W (N K reads) and a
// dot product per row of x (M K reads); an average pool of g features (kernel = stride = g, no
// padding) turns it into a product with N / g features on W's rows averaged in groups (g times
// fewer flops). The chain's scaling moves onto the reduced weight; the bias and the chain's
// additive terms are applied to the bias vector and reduced the same way. Other readers of the
// product, a float16/bfloat16 product (whose rounding PyTorch applies per feature) or a chain
// that is not affine leave the graph as it is. The rewritten graph is another plan beside the
// original; measurement and verification decide.
#pragma once

#include <optional>

#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every such feature reduction rewritten, or nullopt when there is none. The reduction
// keeps its name, shape and line; the new nodes are named `<reduction>__<part>`.
std::optional<spec::Spec> reduce_linear_features(const spec::Spec& s);

}  // namespace egg::backend::builtin
