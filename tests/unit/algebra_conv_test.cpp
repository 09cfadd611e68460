// Algebraic restructuring of a convolution's global sum or mean (algebra_conv.h): the rewritten
// graph (each axis's 0/1 mask from aranges, x contracted with the masks, one product with the
// flattened weight, the scalar chain on the mean), what is left alone, and where the backend
// proposes it. FileCheck style on the rewritten graph; bench/algebra_conv_check.py evaluates the
// rewritten graphs numerically against PyTorch.
#include "backend/builtin/algebra_conv.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "toolchain/cudnn.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json scalar(double v) { return {{"scalar", v}}; }

const spec::Node* find(const spec::Spec& s, const std::string& name) { return s.find_node(name); }

// ConvTranspose2d(4 → 6, 3, stride 2, padding 1, output_padding 1) of [2, 4, 8, 8], times 0.5,
// averaged over H and W with keepdim (KernelBench level 2's pattern).
json transposed_mean() {
  return spec_around(
      {tensor("x", {2, 4, 8, 8})},
      {tensor("w", {4, 6, 3, 3}, "float32", "parameter"), tensor("b", {6}, "float32", "parameter")},
      {node("y", "conv_transpose2d", {ref("x"), ref("w"), ref("b")},
            {{"stride", {2, 2}},
             {"padding", {1, 1}},
             {"output_padding", {1, 1}},
             {"groups", 1},
             {"dilation", {1, 1}}},
            {2, 6, 16, 16}, 5),
       node("h", "mul", {ref("y"), scalar(0.5)}, json::object(), {2, 6, 16, 16}, 6),
       node("m", "mean", {ref("h")}, {{"dim", {2, 3}}, {"keepdim", true}, {"dtype", nullptr}},
            {2, 6, 1, 1}, 7)});
}

// Conv2d(4 → 6, 3, stride 2, padding 1) of [2, 4, 9, 9] without a bias, summed over H and W.
json strided_sum(int groups = 1, const json& padding = json({1, 1})) {
  return spec_around(
      {tensor("x", {2, 4, 9, 9})}, {tensor("w", {6, 4 / groups, 3, 3}, "float32", "parameter")},
      {node("y", "conv2d", {ref("x"), ref("w")},
            {{"stride", {2, 2}}, {"padding", padding}, {"groups", groups}, {"dilation", {1, 1}}},
            {2, 6, 5, 5}, 5),
       node("s", "sum", {ref("y")}, {{"dim", {-1, -2}}, {"keepdim", false}, {"dtype", nullptr}},
            {2, 6}, 6)});
}

TEST(AlgebraConv, ATransposedConvolutionsMeanIsAProductWithTheWindowSums) {
  const auto r = reduce_conv_spatial(spec::parse_spec(transposed_mean()));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(find(*r, "y"), nullptr);  // the convolution and its chain are gone
  EXPECT_EQ(find(*r, "h"), nullptr);
  // Offset 0 reaches output -1 from input 0 along each axis (o = 2 i + k - 1), the others every
  // input: each axis is its sum, less input 0 for offset 0, stacked per offset. W first.
  const spec::Node* t1 = find(*r, "m__t1");
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->op, "sum");
  EXPECT_EQ(t1->attrs["dim"], json({3}));
  EXPECT_EQ(t1->shape, (spec::Shape{2, 4, 8}));
  const spec::Node* sel = find(*r, "m__x1i0");
  ASSERT_NE(sel, nullptr);
  EXPECT_EQ(sel->op, "select");
  EXPECT_EQ(sel->attrs["index"], 0);
  EXPECT_EQ(find(*r, "m__t1k0i0")->op, "sub");
  EXPECT_EQ(find(*r, "m__t1k1i0"), nullptr);  // offsets 1 and 2 take the whole sum
  const spec::Node* s1 = find(*r, "m__s1");
  ASSERT_NE(s1, nullptr);
  EXPECT_EQ(s1->op, "stack");
  ASSERT_EQ(s1->args.size(), 1u);
  ASSERT_EQ(s1->args[0].items.size(), 3u);
  EXPECT_EQ(s1->args[0].items[1].node, "m__t1");
  EXPECT_EQ(s1->shape, (spec::Shape{2, 4, 8, 3}));
  EXPECT_EQ(find(*r, "m__s0")->shape, (spec::Shape{2, 4, 3, 3}));
  EXPECT_EQ(find(*r, "m__m1"), nullptr);  // no masks where the totals do
  // The window sums over the 256 output positions, the weight as [C_out, C_in K], the bias.
  EXPECT_EQ(find(*r, "m__zm")->args[1].scalar, 256.0);
  EXPECT_EQ(find(*r, "m__wt")->attrs["dims"], json({1, 0, 2, 3}));
  const spec::Node* mean = find(*r, "m__mean");
  ASSERT_NE(mean, nullptr);
  EXPECT_EQ(mean->op, "linear");
  EXPECT_EQ(mean->args.size(), 3u);
  EXPECT_EQ(mean->shape, (spec::Shape{2, 6}));
  EXPECT_EQ(find(*r, "m__chain0")->op, "mul");
  const spec::Node* out = find(*r, "m");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->op, "reshape");
  EXPECT_EQ(out->shape, (spec::Shape{2, 6, 1, 1}));
  EXPECT_EQ(out->where.line, 7);
}

// Stride 2 skips every other input for each offset: too many to subtract, so each axis is x
// contracted with its 0/1 mask (from aranges), the lattice included.
TEST(AlgebraConv, AStridedConvolutionsSumKeepsItsLatticeAndCountsThePositions) {
  const auto r = reduce_conv_spatial(spec::parse_spec(strided_sum()));
  ASSERT_TRUE(r.has_value());
  const spec::Node* p1 = find(*r, "s__p1");
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->shape, (spec::Shape{2, 4, 9, 3, 9}));  // W contracted first
  EXPECT_EQ(find(*r, "s__m0r")->shape, (spec::Shape{3, 9, 1}));
  EXPECT_EQ(find(*r, "s__s0")->shape, (spec::Shape{2, 4, 3, 3}));
  EXPECT_EQ(find(*r, "s__u0k")->dtype, spec::DType::int64);
  // Input i = o s + k d - p: u = i + p - k d in [0, 5 * 2), on the stride's lattice.
  EXPECT_EQ(find(*r, "s__m0hi")->args[1].scalar, 10.0);
  const spec::Node* rem = find(*r, "s__m0rem");
  ASSERT_NE(rem, nullptr);
  EXPECT_EQ(rem->op, "remainder");
  EXPECT_EQ(rem->args[1].scalar, 2.0);
  EXPECT_EQ(find(*r, "s__wt"), nullptr);  // a forward weight is [C_out, C_in, K...] already
  EXPECT_EQ(find(*r, "s__mean")->args.size(), 2u);  // no bias
  // The sum is the mean times the 25 output positions, and keeps the reduction's name.
  const spec::Node* out = find(*r, "s");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->op, "mul");
  EXPECT_EQ(out->args[1].scalar, 25.0);
  EXPECT_EQ(out->shape, (spec::Shape{2, 6}));
}

TEST(AlgebraConv, LeavesGroupsNamedPaddingPartialReductionsAndSharedOutputs) {
  EXPECT_FALSE(reduce_conv_spatial(spec::parse_spec(strided_sum(2))).has_value());
  EXPECT_FALSE(reduce_conv_spatial(spec::parse_spec(strided_sum(1, "same"))).has_value());
  json partial = strided_sum();
  partial["nodes"][1]["attrs"]["dim"] = {-1};
  partial["nodes"][1]["shape"] = {2, 6, 5};
  partial["outputs"][0]["shape"] = {2, 6, 5};
  EXPECT_FALSE(reduce_conv_spatial(spec::parse_spec(partial)).has_value());
  json shared = strided_sum();
  shared["outputs"].push_back(
      {{"name", "out1"}, {"node", "y"}, {"shape", {2, 6, 5, 5}}, {"dtype", "float32"}});
  EXPECT_FALSE(reduce_conv_spatial(spec::parse_spec(shared)).has_value());
  // A tensor (not a scalar) between the convolution and the mean is not taken.
  json tensor_link = transposed_mean();
  tensor_link["inputs"].push_back(tensor("v", {2, 6, 16, 16}));
  tensor_link["nodes"][1]["args"][1] = ref("v");
  EXPECT_FALSE(reduce_conv_spatial(spec::parse_spec(tensor_link)).has_value());
}

// Stage 1 proposes cuDNN's result with the mean fused first (the fused alternative), the rewrite's
// plan second, so a budget of two measures one against the other; stage 2 tunes the rewrite's plan
// when it won.
TEST(AlgebraConv, TheBackendMeasuresTheRewriteSecond) {
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const auto s = spec::parse_spec(transposed_mean());
  const auto c = contract::derive(s, "k");
  StageRequest r;
  r.spec = &s;
  r.contract = &c;
  r.stage = "stage1";
  r.bottleneck = "memory";
  const auto cands = backend.propose(r);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "plan:conv.cudnn.bwd_data.nhwc:a0:mean_s");
  EXPECT_EQ(cands[1].id.rfind("plan:", 0), 0u) << cands[1].id;
  EXPECT_TRUE(cands[1].params.contains("plan"));
  EXPECT_NE(cands[1].id.find("gemm."), std::string::npos) << cands[1].id;
  r.stage = "stage2";
  r.incumbent = cands[1];
  const auto tuned = backend.propose(r);
  ASSERT_FALSE(tuned.empty());
  for (const auto& t : tuned) EXPECT_EQ(t.id.rfind("plan:", 0), 0u) << t.id;

  // The rewrite's kernels compile: the transposed masks here, a forward strided lattice below.
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) return;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[1]), "");
  const auto fs = spec::parse_spec(strided_sum());
  const auto fc = contract::derive(fs, "k");
  r.spec = &fs;
  r.contract = &fc;
  r.stage = "stage1";
  r.incumbent.reset();
  bool compiled = false;
  for (const auto& cand : backend.propose(r))
    if (cand.id.find("gemm.") != std::string::npos && !compiled) {
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, fc, cand), "") << cand.id;
      compiled = true;
    }
  EXPECT_TRUE(compiled);
}

// With EGG_ALGEBRA_OUT_DIR set: the rewritten graphs of the traced specs under
// EGG_ALGEBRA_SPEC_DIR (<dir>/<op>/spec.json) written as <out>/<op>.json, for
// bench/algebra_conv_check.py to evaluate against the models.
TEST(AlgebraConv, DumpRewrittenSpecs) {
  const char* in = std::getenv("EGG_ALGEBRA_SPEC_DIR");
  const char* out = std::getenv("EGG_ALGEBRA_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_ALGEBRA_SPEC_DIR and EGG_ALGEBRA_OUT_DIR";
  std::filesystem::create_directories(out);
  for (const auto& e : std::filesystem::directory_iterator(in)) {
    std::ifstream f(e.path() / "spec.json");
    if (!f) continue;
    const auto s = spec::parse_spec(json::parse(f));
    const auto r = reduce_conv_spatial(s);
    if (!r) continue;
    json nodes = json::array();
    for (const auto& n : r->nodes) {
      const auto arg_json = [](const spec::Arg& a) {
        return a.kind == spec::Arg::Kind::node ? json{{"node", a.node}}
                                               : json{{"scalar", a.scalar}};
      };
      json args = json::array();
      for (const auto& a : n.args) {
        if (a.kind != spec::Arg::Kind::list) {
          args.push_back(arg_json(a));
          continue;
        }
        json items = json::array();
        for (const auto& item : a.items) items.push_back(arg_json(item));
        args.push_back({{"list", items}});
      }
      nodes.push_back(
          {{"name", n.name}, {"op", n.op}, {"args", args}, {"attrs", n.attrs}, {"shape", n.shape}});
    }
    std::ofstream(std::filesystem::path(out) / (e.path().filename().string() + ".json"))
        << json{{"nodes", nodes}, {"output", s.outputs.at(0).node}}.dump(1);
  }
}

}  // namespace
}  // namespace egg::backend::builtin
