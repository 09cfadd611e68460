// Raising, the inverse of lowering: attention written out as PyTorch code writes it,
//   softmax(matmul(q, k.transpose(-2, -1)) [* c | / c] [masked_fill(m, -inf) | where | + bias], -1)
//   @ v,
// becomes one scaled_dot_product_attention node (its scale c or 1/c, a bool mask that keeps
// what masked_fill drops, or the additive bias), named as the final matmul, so that the attention
// family's flash kernel can take it. The written-out graph stays the other plan (the backend
// measures both); a chain whose intermediates something else reads is left alone.
#pragma once

#include <optional>

#include "spec/spec.h"

namespace egg::backend::builtin {

// `s` with every written-out attention raised, or nullopt when there is none.
std::optional<spec::Spec> raise_attention(const spec::Spec& s);

// `s` with each attention's query, key and value that are strided views of one value in memory
// (the heads split off a fused QKV projection: reshape, permute or transpose, a slice or a split's
// piece) read through their strides: the operand becomes that value and the attention's
// `layouts` attribute holds, per operand, its view's shape, element strides and offset (null for
// an operand read as it is); view nodes nothing else reads are dropped. The flash kernel's loads
// need 16-byte rows: the last dim contiguous, the offset and the other strides multiples of 8.
spec::Spec fold_attention_views(const spec::Spec& s);

}  // namespace egg::backend::builtin
