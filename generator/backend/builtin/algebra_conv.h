// Algebraic restructuring of a convolution's global sum: the sum (or mean) of a convolution's
// output over all its spatial dims is a product with the input's window sums,
//   sum_o conv(x)[n, co, o] = O b[co] + sum_{ci, k} W[co, ci, k] S[n, ci, k],
// where S[n, ci, k] sums x[n, ci, i] over the input positions i that kernel offset k connects to an
// output position inside the output (forward: i = o s + k d - p for some output o; transposed:
// o = i s + k d - p inside the output). Per spatial axis these positions are a 0/1 mask M[k, i]
// (arange, integer arithmetic and comparisons: no constants baked in), so S is x contracted with
// each axis's mask in turn (two small reductions for a 2-d convolution); along an axis where the
// offsets miss only a few border positions, the axis's sum less those positions instead (x read
// once along it rather than once per offset). The result is one
// [N, C_in K] x [C_in K, C_out] product: the input is read once, the convolution's
// O C_out C_in K flops per batch entry and its full-size output are gone. A chain of scalar
// multiplies, divides, adds and subtracts between the convolution and the reduction commutes with
// the mean (and the sum is O times the mean). Groups, padding modes given by name, half types, or
// other readers of the convolution leave the graph as it is. The rewritten graph is another plan
// beside the original; measurement and verification decide.
#pragma once

#include <optional>

#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every such spatial reduction of a convolution rewritten, or nullopt when there is
// none. The reduction keeps its name, shape and line; the new nodes are named
// `<reduction>__<part>`.
std::optional<spec::Spec> reduce_conv_spatial(const spec::Spec& s);

}  // namespace egg::backend::builtin
