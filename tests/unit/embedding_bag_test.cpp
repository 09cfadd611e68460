// Embedding-bag family: bags of varying length planned from ATen's embedding_bag node (modes,
// padding, per-sample weights, include_last_offset), what it refuses with lines, the rendered
// kernel's accumulation, its parameter sets, and a real nvcc compile of every candidate. FileCheck
// style; the kernels' values are checked on the host against PyTorch (suite.reduction_host).
#include "backend/builtin/embedding_bag.h"

#include <gtest/gtest.h>

#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::none;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

// embedding_bag(table [rows, dim], ids [n], offsets [bags]) as the frontend writes ATen's.
json bag_spec(const std::string& mode, json attrs = json::object(), bool weights = false,
              const std::string& dtype = "float32", std::int64_t dim = 128) {
  attrs["mode"] = mode;
  if (!attrs.contains("include_last_offset")) attrs["include_last_offset"] = false;
  if (!attrs.contains("padding_idx")) attrs["padding_idx"] = nullptr;
  const std::int64_t bags = attrs["include_last_offset"].get<bool>() ? 255 : 256;
  json inputs = json::array({tensor("table", {5000, dim}, dtype), tensor("ids", {4096}, "int64"),
                             tensor("offsets", {256}, "int64")});
  if (weights) inputs.push_back(tensor("w", {4096}, dtype));
  return spec_around(
      inputs, json::array(),
      json::array({node("b", "embedding_bag",
                        {ref("table"), ref("ids"), ref("offsets"), weights ? ref("w") : none()},
                        attrs, {bags, dim}, 6, dtype)}));
}

Candidate first(const json& j) {
  EmbeddingBagFamily family(kData);
  const auto s = spec::parse_spec(j);
  const auto c = contract::derive(s, "k");
  return family.structures(s, c).at(0);
}

TEST(EmbeddingBag, PlansModesPaddingAndBags) {
  auto plan = plan_embedding_bag(spec::parse_spec(bag_spec("mean", {{"padding_idx", 0}})));
  ASSERT_TRUE(std::holds_alternative<BagPlan>(plan));
  const BagPlan& p = std::get<BagPlan>(plan);
  EXPECT_EQ(p.mode, "mean");
  EXPECT_EQ(p.bags, 256);
  EXPECT_EQ(p.dim, 128);
  EXPECT_EQ(p.padding_idx, 0);
  auto last =
      plan_embedding_bag(spec::parse_spec(bag_spec("sum", {{"include_last_offset", true}}, true)));
  ASSERT_TRUE(std::holds_alternative<BagPlan>(last));
  EXPECT_EQ(std::get<BagPlan>(last).bags, 255);  // the last offset ends the last bag
  EXPECT_EQ(std::get<BagPlan>(last).per_sample_weights, "w");
}

TEST(EmbeddingBag, RefusesWhatItDoesNotTakeWithTheLine) {
  EmbeddingBagFamily family(kData);
  // Per-sample weights go with sum only (PyTorch refuses them too).
  auto why = family.cannot_implement(spec::parse_spec(bag_spec("max", json::object(), true)));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 6);
  EXPECT_TRUE(has(why->describe(), "per_sample_weights go with mode='sum'")) << why->describe();
  // Work on the bags is another kernel's (the planner splits it off).
  json j = bag_spec("sum");
  j["nodes"].push_back(node("r", "relu", {ref("b")}, json::object(), {256, 128}, 7));
  j["outputs"][0]["node"] = "r";
  why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 7);
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(spec::parse_spec(j)).segments)
    families += seg.family->name() + " ";
  EXPECT_EQ(families, "embedding_bag elementwise ");
  // Float indices are no indices.
  json f = bag_spec("sum");
  f["inputs"][1]["dtype"] = "float32";
  why = family.cannot_implement(spec::parse_spec(f));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "int64 or int32 indices")) << why->describe();
}

TEST(EmbeddingBag, RendersTheAccumulationOfEachMode) {
  const Candidate mean = first(bag_spec("mean", {{"padding_idx", 3}}));
  EXPECT_EQ(mean.id, "embedding_bag.mean:v4:t32:b256:u4");
  EXPECT_TRUE(has(mean.code.device_code, "egg_r == 3LL")) << mean.code.device_code;
  EXPECT_TRUE(has(mean.code.device_code, "egg_acc[egg_j] / static_cast<float>(egg_count)"));
  EXPECT_TRUE(has(mean.code.launch_body, "egg_k_kernel<4><<<32, 256, 0, stream>>>"))
      << mean.code.launch_body;
  const Candidate sum = first(bag_spec("sum", json::object(), true));
  EXPECT_TRUE(has(sum.code.device_code, "egg_acc[egg_j] += egg_scale[egg_u] * egg_x;"));
  const Candidate max = first(bag_spec("max", json::object(), false, "float16", 96));
  EXPECT_EQ(max.id, "embedding_bag.max:v8:t16:b256:u4");  // 12 vectors of 8 halves per row
  EXPECT_TRUE(has(max.code.device_code, "(egg_count == 0 || egg_x > egg_acc[egg_j])"));
  EXPECT_TRUE(has(max.code.device_code, "egg_from_float<__half>"));
}

TEST(EmbeddingBag, ParameterSetsAreValid) {
  EmbeddingBagFamily family(kData);
  for (const json& j : {bag_spec("sum"), bag_spec("max", json::object(), false, "bfloat16", 100)}) {
    const auto s = spec::parse_spec(j);
    const auto c = contract::derive(s, "k");
    const BagPlan plan = family.plan(s);
    const int esize = spec::dtype_size(s.find_tensor("table")->dtype);
    auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty());
    for (const auto& t : family.tunings(s, c, cands[0], "memory")) cands.push_back(t);
    if (auto fb = family.fallback(s, c, cands[0])) cands.push_back(*fb);
    for (const auto& cand : cands)
      EXPECT_TRUE(bag_params_valid(plan, esize, BagParams::from_json(cand.params))) << cand.id;
  }
  // A row of 100 bf16 columns takes no 16-byte vectors (100 is no multiple of 8).
  EXPECT_EQ(
      BagParams::from_json(first(bag_spec("max", json::object(), false, "bfloat16", 100)).params)
          .vec,
      1);
}

// Each mode's first structure and the scalar fallback through real nvcc (the suite compiles the
// example ops' kernels too).
TEST(EmbeddingBag, CompilesWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "nvcc is not installed";
  EmbeddingBagFamily family(kData);
  for (const json& j : {bag_spec("mean", {{"padding_idx", 0}}),
                        bag_spec("sum", {{"include_last_offset", true}}, true),
                        bag_spec("max", json::object(), false, "float16", 96)}) {
    const auto s = spec::parse_spec(j);
    const auto c = contract::derive(s, "k");
    const Candidate cand = family.structures(s, c).at(0);
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cand), "");
    if (auto fb = family.fallback(s, c, cand)) {
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, *fb), "");
    }
  }
}

}  // namespace
}  // namespace egg::backend::builtin
