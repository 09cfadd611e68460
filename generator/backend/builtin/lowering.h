// Lowering of composite ops that no builtin family anchors yet into the ops they are made of, so
// the planner can implement them with the families it has: scaled_dot_product_attention becomes
// matmul(q, k^T) * scale, its mask, softmax and matmul with v (the math PyTorch's reference path
// computes); a reduction over dims that are not adjacent (sum over dims 0 and 2) becomes a permute
// that moves them to the end, the reduction over the last dims and, for keepdim, a reshape; an
// exclusive scan written as cat([full(identity), cumsum(y, d)], d) becomes cumsum(cat([full, y]),
// d), the same values in one kernel; a pool whose one window covers its whole input plane
// (adaptive pooling to size 1, a window the input's size without padding) becomes the mean (amax
// for max pooling; a sum and a division for a divisor_override) over the pooled dims with keepdim,
// a row per plane for the reduction family; the indices of a cummax/cummin become the running
// maximum of the positions where the input equals its running value (or is NaN), cast to int64;
// a convolution of one input position by a 1-wide kernel (a squeeze-excitation's convolutions of
// a pooled [N, C, 1, 1]) becomes linear(x [N, C], W [K, C], bias) between reshapes, so the GEMM
// family's skinny kernel runs it with its epilogue; a depthwise convolution of one position, x
// times each channel's one weight tap that position reads, plus the bias.
// The attention family anchors scaled_dot_product_attention itself: `keep_attention` leaves it
// whole for that plan.
#pragma once

#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every scaled_dot_product_attention node, scattered-dims reduction, exclusive scan,
// global pool, scan's indices and convolution of one position replaced by its decomposition (new
// nodes named `<node>__<part>`, the last one keeping the node's name, all at the node's line).
// Throws a UserError naming the op for what the decomposition does not cover (dropout,
// grouped-query heads, batch dims that broadcast).
spec::Spec lower_composites(const spec::Spec& s, bool keep_attention = false);

}  // namespace egg::backend::builtin
