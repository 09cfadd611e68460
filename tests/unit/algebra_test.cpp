// Algebraic restructuring: sums and means over a linear map's output features rewritten as a
// product with the summed weight (with the bias and an affine chain between), what is left alone,
// and the plan the backend measures beside the product. FileCheck style on the rewritten graph.
#include "backend/builtin/algebra.h"

#include <gtest/gtest.h>

#include "spec_fixtures.h"

#include "backend/builtin/builtin_backend.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

std::string ops_of(const spec::Spec& s) {
  std::string out;
  for (const auto& n : s.nodes) out += (out.empty() ? "" : " ") + n.op;
  return out;
}

json scalar(double v) { return {{"scalar", v}}; }

// torch.matmul(x, W.T) / 2, summed over the features with keepdim, times 1.5 (no bias).
json matmul_sum(const std::string& dtype = "float32") {
  return spec_around(
      {tensor("x", {64, 256}, dtype)}, {tensor("w", {512, 256}, dtype, "parameter")},
      {node("t", "permute", {ref("w")}, {{"dims", {1, 0}}}, {256, 512}, 5, dtype),
       node("y", "matmul", {ref("x"), ref("t")}, json::object(), {64, 512}, 5, dtype),
       node("d", "div", {ref("y"), scalar(2)}, {{"rounding_mode", nullptr}}, {64, 512}, 6, dtype),
       node("s", "sum", {ref("d")}, {{"dim", {1}}, {"keepdim", true}, {"dtype", nullptr}}, {64, 1},
            7, dtype),
       node("o", "mul", {ref("s"), scalar(1.5)}, json::object(), {64, 1}, 8, dtype)});
}

// linear(x, W, b) - v, averaged over the features (keepdim).
json linear_mean() {
  return spec_around(
      {tensor("x", {32, 128}), tensor("v", {256})},
      {tensor("w", {256, 128}, "float32", "parameter"), tensor("b", {256}, "float32", "parameter")},
      {node("y", "linear", {ref("x"), ref("w"), ref("b")}, json::object(), {32, 256}, 5),
       node("z", "sub", {ref("y"), ref("v")}, {{"alpha", 1}}, {32, 256}, 6),
       node("m", "mean", {ref("z")}, {{"dim", {1}}, {"keepdim", true}, {"dtype", nullptr}}, {32, 1},
            7)});
}

// linear(x, W, b) * 2, unsqueezed, average-pooled over groups of 16 features, squeezed.
json linear_pool(int kernel = 16, int stride = 16, int padding = 0) {
  const int pooled = (512 + 2 * padding - kernel) / stride + 1;
  return spec_around(
      {tensor("x", {64, 256})},
      {tensor("w", {512, 256}, "float32", "parameter"), tensor("b", {512}, "float32", "parameter")},
      {node("y", "linear", {ref("x"), ref("w"), ref("b")}, json::object(), {64, 512}, 5),
       node("z", "mul", {ref("y"), scalar(2)}, json::object(), {64, 512}, 6),
       node("u", "unsqueeze", {ref("z")}, {{"dim", 1}}, {64, 1, 512}, 7),
       node("p", "avg_pool1d", {ref("u")},
            {{"kernel_size", {kernel}},
             {"stride", {stride}},
             {"padding", {padding}},
             {"ceil_mode", false},
             {"count_include_pad", true}},
            {64, 1, pooled}, 7),
       node("q", "squeeze", {ref("p")}, {{"dim", 1}}, {64, pooled}, 7)});
}

TEST(Algebra, AFeatureSumIsADotWithTheSummedWeight) {
  const auto r = reduce_linear_features(spec::parse_spec(matmul_sum()));
  ASSERT_TRUE(r.has_value());
  // W's column sums, x times them, the row sum, the chain's scaling; the transpose is gone.
  EXPECT_EQ(ops_of(*r), "sum mul sum div mul");
  EXPECT_EQ(r->nodes[0].name, "s__wsum");
  EXPECT_EQ(r->nodes[0].attrs["dim"], json::array({0}));
  EXPECT_EQ(r->nodes[0].shape, (spec::Shape{1, 256}));
  EXPECT_EQ(r->nodes[2].shape, (spec::Shape{64, 1}));
  EXPECT_EQ(r->nodes[3].name, "s");  // the reduction keeps its name, shape and line
  EXPECT_EQ(r->nodes[3].args[1].scalar, 2.0);
  EXPECT_EQ(r->nodes[3].where.line, 6);
  EXPECT_EQ(r->nodes[4].args[0].node, "s");
}

TEST(Algebra, TheBiasAndTheChainsTermsAreSummedOnce) {
  const auto r = reduce_linear_features(spec::parse_spec(linear_mean()));
  ASSERT_TRUE(r.has_value());
  // dot = sum(x * colsum(W)); bias term = sum(b - v); mean = (dot + term) / N.
  EXPECT_EQ(ops_of(*r), "sum mul sum sub sum add div");
  EXPECT_EQ(r->nodes[3].args[0].node, "b");
  EXPECT_EQ(r->nodes[3].args[1].node, "v");
  EXPECT_TRUE(r->nodes[4].shape.empty());  // the whole bias term: one value
  EXPECT_EQ(r->nodes[6].name, "m");
  EXPECT_EQ(r->nodes[6].args[1].scalar, 256.0);
}

TEST(Algebra, LeavesWhatIsNotAffineOrIsReadElsewhere) {
  // A non-linear op between (sigmoid), a half product, a second reader of the product, a sum over
  // another dim: nothing to rewrite.
  json j = matmul_sum();
  j["nodes"][2]["op"] = "sigmoid";
  j["nodes"][2]["args"] = json::array({ref("y")});
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(j)).has_value());
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(matmul_sum("float16"))).has_value());
  j = matmul_sum();
  j["outputs"].push_back(
      {{"name", "out1"}, {"node", "y"}, {"shape", {64, 512}}, {"dtype", "float32"}});
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(j)).has_value());
  j = matmul_sum();
  j["nodes"][3]["attrs"]["dim"] = json::array({0});
  j["nodes"][3]["shape"] = json({1, 512});
  j["nodes"][4]["shape"] = json({1, 512});
  j["outputs"][0]["shape"] = json({1, 512});
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(j)).has_value());
}

TEST(Algebra, AFeaturePoolIsAProductWithThePooledWeight) {
  const auto r = reduce_linear_features(spec::parse_spec(linear_pool()));
  ASSERT_TRUE(r.has_value());
  // W's rows averaged in groups of 16 and scaled by the chain, the chained bias averaged the same
  // way, a product with 32 features, reshaped to the pool's [64, 1, 32].
  EXPECT_EQ(ops_of(*r), "reshape mean mul mul reshape mean linear reshape squeeze");
  EXPECT_EQ(r->nodes[0].shape, (spec::Shape{32, 16, 256}));
  EXPECT_EQ(r->nodes[1].attrs["dim"], json::array({1}));
  EXPECT_EQ(r->nodes[2].args[0].node, "p__wpool");
  EXPECT_EQ(r->nodes[3].args[0].node, "b");
  EXPECT_EQ(r->nodes[5].shape, (spec::Shape{32}));
  EXPECT_EQ(r->nodes[6].args[1].node, "p__wscale0");
  EXPECT_EQ(r->nodes[6].args[2].node, "p__bpool");
  EXPECT_EQ(r->nodes[6].shape, (spec::Shape{64, 32}));
  EXPECT_EQ(r->nodes[7].name, "p");
  EXPECT_EQ(r->nodes[7].shape, (spec::Shape{64, 1, 32}));
  EXPECT_EQ(r->nodes[8].args[0].node, "p");
}

TEST(Algebra, LeavesPoolsThatOverlapPadOrLeaveFeaturesOut) {
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(linear_pool(16, 8))).has_value());
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(linear_pool(16, 16, 4))).has_value());
  EXPECT_FALSE(reduce_linear_features(spec::parse_spec(linear_pool(24, 24))).has_value());
}

TEST(Algebra, TheBackendMeasuresThePooledProductBesideTheProduct) {
  BuiltinBackend backend(kData);
  const auto all = backend.plans(spec::parse_spec(linear_pool()));
  ASSERT_GE(all.size(), 2u);
  std::string last;
  for (const auto& seg : all.back().segments) last += seg.family->name() + " ";
  EXPECT_NE(last.find("gemm"), std::string::npos) << last;
  EXPECT_EQ(last.find("pool"), std::string::npos) << last;
}

TEST(Algebra, TheBackendMeasuresTheRewriteBesideTheProduct) {
  BuiltinBackend backend(kData);
  const auto all = backend.plans(spec::parse_spec(matmul_sum()));
  ASSERT_GE(all.size(), 2u);
  std::string first, last;
  for (const auto& seg : all.front().segments) first += seg.family->name() + " ";
  for (const auto& seg : all.back().segments) last += seg.family->name() + " ";
  EXPECT_EQ(first, "gemm reduction ");
  EXPECT_EQ(last, "reduction reduction ");  // W's column sums, then x's dot products
}

}  // namespace
}  // namespace egg::backend::builtin
