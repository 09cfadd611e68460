// The problem's roofline inputs: GEMMs, convolutions and attention count their multiply-adds, so
// the profile agent calls them compute-bound; element-wise ops count one FLOP an element.
#include "pipeline/roofline.h"

#include <gtest/gtest.h>

#include "spec_fixtures.h"

namespace egg::pipeline {
namespace {

using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;

TEST(Roofline, MatrixOpsCountTheirMultiplyAdds) {
  // x[256, 512] · W[1024, 512]^T + b, then relu: 2·256·1024·512 + 256·1024.
  auto linear = spec::parse_spec(
      spec_around(tensor("x", {256, 512}),
                  {tensor("w", {1024, 512}, "float32", "parameter"),
                   tensor("b", {1024}, "float32", "parameter")},
                  {node("fc", "linear", {ref("x"), ref("w"), ref("b")}, nlohmann::json::object(),
                        {256, 1024}, 3),
                   node("r", "relu", {ref("fc")}, nlohmann::json::object(), {256, 1024}, 4)}));
  const auto r = roofline_inputs(linear);
  EXPECT_DOUBLE_EQ(r.flops, 2.0 * 256 * 1024 * 512 + 256 * 1024);
  EXPECT_DOUBLE_EQ(r.bytes, 4.0 * (256 * 512 + 1024 * 512 + 1024 + 256 * 1024));

  // bmm [8, 64, 32] · [8, 32, 16].
  auto bmm = spec::parse_spec(spec_around(
      {tensor("a", {8, 64, 32}), tensor("b", {8, 32, 16})}, nlohmann::json::array(),
      node("mm", "bmm", {ref("a"), ref("b")}, nlohmann::json::object(), {8, 64, 16}, 3)));
  EXPECT_DOUBLE_EQ(roofline_inputs(bmm).flops, 2.0 * 8 * 64 * 16 * 32);
}

TEST(Roofline, ConvolutionsAndAttentionCountTheirMultiplyAdds) {
  // conv2d: x[2, 16, 32, 32], W[64, 16, 3, 3] → [2, 64, 30, 30]: 2·out·16·9.
  auto conv = spec::parse_spec(spec_around(
      tensor("x", {2, 16, 32, 32}), tensor("w", {64, 16, 3, 3}, "float32", "parameter"),
      node("c", "conv2d", {ref("x"), ref("w")}, nlohmann::json::object(), {2, 64, 30, 30}, 3)));
  EXPECT_DOUBLE_EQ(roofline_inputs(conv).flops, 2.0 * 2 * 64 * 30 * 30 * 16 * 9);
  // conv_transpose2d: x[2, 16, 8, 8], W[16, 4, 3, 3]: each input element scatters 4·9.
  auto tconv = spec::parse_spec(spec_around(tensor("x", {2, 16, 8, 8}),
                                            tensor("w", {16, 4, 3, 3}, "float32", "parameter"),
                                            node("c", "conv_transpose2d", {ref("x"), ref("w")},
                                                 nlohmann::json::object(), {2, 4, 10, 10}, 3)));
  EXPECT_DOUBLE_EQ(roofline_inputs(tconv).flops, 2.0 * 2 * 16 * 8 * 8 * 4 * 9);
  // attention: Q[2, 4, 128, 64], K and V [2, 4, 256, 64]: 2·L·S·(E + Ev) per batch-head.
  auto sdpa = spec::parse_spec(spec_around(
      {tensor("q", {2, 4, 128, 64}), tensor("k", {2, 4, 256, 64}), tensor("v", {2, 4, 256, 64})},
      nlohmann::json::array(),
      node("o", "scaled_dot_product_attention", {ref("q"), ref("k"), ref("v")},
           nlohmann::json::object(), {2, 4, 128, 64}, 3)));
  EXPECT_DOUBLE_EQ(roofline_inputs(sdpa).flops, 2.0 * 8 * 128 * 256 * (64 + 64));
}

TEST(Roofline, ElementwiseOpsCountAnOperationAnElement) {
  auto s = spec::parse_spec(egg::testing::gelu_bias_spec());
  double elements = 0;
  for (const auto& n : s.nodes) elements += double(spec::numel(n.shape));
  EXPECT_DOUBLE_EQ(roofline_inputs(s).flops, elements);
}

}  // namespace
}  // namespace egg::pipeline
