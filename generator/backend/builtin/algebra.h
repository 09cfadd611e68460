// Algebraic restructuring, stage 1's algorithmic structure beyond fusion: a sum (or mean) over
// the output features of a linear map is a product with the summed weight,
//   sum_n (x W^T + b)_n = x . (sum_n W_n) + sum_n b_n,
// through any chain of element-wise ops between them that is affine in each feature (a scalar
// multiply or divide, adding or subtracting a scalar or a per-feature vector). The [M, N] product
// (2 M N K flops) becomes a column sum of W (N K reads) and a dot product per row of x (M K reads);
// the bias and the chain's additive terms are applied to the bias vector and summed once. Other
// readers of the product, a float16/bfloat16 product (whose rounding PyTorch applies per
// feature) or a chain that is not affine leave the graph as it is. The rewritten graph is another
// plan beside the original; measurement and verification decide.
#pragma once

#include <optional>

#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every such feature sum rewritten, or nullopt when there is none. The reduction keeps
// its name, shape and line; the new nodes are named `<reduction>__<part>`.
std::optional<spec::Spec> sum_linear_features(const spec::Spec& s);

}  // namespace egg::backend::builtin
