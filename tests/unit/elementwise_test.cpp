// Rendering checks in the spirit of FileCheck: the lines that matter, not whitespace.
#include "backend/builtin/elementwise.h"

#include <gtest/gtest.h>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

TEST(Elementwise, RendersTheFusedChain) {
  ElementwiseFamily family(kData);
  auto s = spec::parse_spec(testing::gelu_bias_spec());
  ASSERT_FALSE(family.cannot_implement(s).has_value());
  auto c = contract::derive(s, "gelu_bias");
  auto cand = family.render(s, c, ElementwiseParams{});
  const auto& code = cand.code.device_code;
  EXPECT_TRUE(has(code, "const float t0 = (a0 * 0.5f);")) << code;
  EXPECT_TRUE(has(code, "const float t1 = (t0 + 1.0f * a1);"));
  EXPECT_TRUE(has(code, "const float t2 = egg_gelu_tanh(t1);"));
  EXPECT_TRUE(has(code, "egg_load_vec<float, VEC>(x + i0)"));  // full operand: 16-byte vectors
  EXPECT_TRUE(has(code, "bias[(i % 1024)]"));                  // broadcast operand: index math
  EXPECT_TRUE(has(code, "__launch_bounds__(256)"));
  EXPECT_TRUE(
      has(cand.code.launch_body, "egg_gelu_bias_run<std::int32_t, 4>(x, bias, out0, n, stream)"));
  EXPECT_TRUE(
      has(cand.code.launch_body, "egg_gelu_bias_aligned(x) && egg_gelu_bias_aligned(out0)"));
}

TEST(Elementwise, BroadcastIndexMergesDims) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec();
  for (auto* shape : {&j["inputs"][0]["shape"], &j["outputs"][0]["shape"]})
    *shape = {8, 16, 32, 32};
  for (auto& n : j["nodes"]) n["shape"] = {8, 16, 32, 32};
  j["params"][0]["shape"] = {16, 1, 1};
  auto s = spec::parse_spec(j);
  auto cand = family.render(s, contract::derive(s, "k"), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.device_code, "bias[((i / 1024) % 16)]")) << cand.code.device_code;
}

TEST(Elementwise, HalfUsesEightWideVectors) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec();
  j["inputs"][0]["dtype"] = "float16";
  j["params"][0]["dtype"] = "float16";
  j["outputs"][0]["dtype"] = "float16";
  auto s = spec::parse_spec(j);
  auto cand = family.render(s, contract::derive(s, "k"), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.launch_body, "egg_k_run<std::int32_t, 8>")) << cand.code.launch_body;
  EXPECT_TRUE(has(cand.code.device_code, "egg_from_float<__half>"));
}

TEST(Elementwise, UnsupportedOpNamesOpAndLine) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec(12);
  j["nodes"][2]["op"] = "cumsum";
  j["nodes"][2]["target"] = "torch.cumsum";
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 12);
  EXPECT_EQ(why->where().file, "/src/op.py");
  EXPECT_TRUE(has(why->describe(), "torch.cumsum")) << why->describe();
  EXPECT_TRUE(has(why->hint(), "relu"));
}

TEST(Elementwise, IntegerOutputIsRejected) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec();
  j["outputs"][0]["dtype"] = "int64";
  EXPECT_TRUE(family.cannot_implement(spec::parse_spec(j)).has_value());
}

TEST(Elementwise, ClampWithOneBoundUsesInfinity) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec();
  j["nodes"][2] = {{"name", "clamp"},
                   {"op", "clamp"},
                   {"args", {{{"node", "add"}}}},
                   {"attrs", {{"min", 0.0}, {"max", nullptr}}},
                   {"shape", {64, 1024}},
                   {"dtype", "float32"}};
  j["outputs"][0]["node"] = "clamp";
  auto s = spec::parse_spec(j);
  auto cand = family.render(s, contract::derive(s, "k"), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.device_code, "egg_clamp(t1, 0.0f, INFINITY)")) << cand.code.device_code;
}

TEST(Elementwise, TuningSpaceDependsOnSizeAndBottleneck) {
  auto big = elementwise_tuning_space(1 << 26, "memory", true);
  auto small = elementwise_tuning_space(1000, "memory", true);
  ASSERT_FALSE(big.empty());
  ASSERT_FALSE(small.empty());
  EXPECT_GT(big.front().unroll, small.front().unroll);
}

TEST(Contract, HeaderAndCandidateEntry) {
  auto s = spec::parse_spec(testing::gelu_bias_spec());
  auto c = contract::derive(s, "gelu_bias");
  ElementwiseFamily family(kData);
  auto src = emit::render_sources(kData, c, family.render(s, c, {}), "builtin", "op.py");
  EXPECT_TRUE(has(src.header, "namespace egg::gelu_bias {"));
  EXPECT_TRUE(has(src.header,
                  "cudaError_t launch(const float* x, const float* bias, float* out0, cudaStream_t "
                  "stream = nullptr);"))
      << src.header;
  EXPECT_TRUE(
      has(src.header,
          "inline torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& bias)"));
  EXPECT_TRUE(has(src.header, "#if defined(EGG_WITH_LIBTORCH)"));
  EXPECT_TRUE(has(src.cu, "extern \"C\""));
  EXPECT_TRUE(has(src.cu, "static_cast<const float*>(args[1])"));
  EXPECT_TRUE(has(src.cu, "#define EGG_NO_TORCH_WRAPPER 1"));
}

TEST(Contract, NamesBecomeUniqueIdentifiers) {
  auto j = testing::gelu_bias_spec();
  j["params"][0]["name"] = "norm.weight";
  j["nodes"][1]["args"][1]["node"] = "norm.weight";
  j["inputs"][0]["name"] = "stream";
  j["nodes"][0]["args"][0]["node"] = "stream";
  auto c = contract::derive(spec::parse_spec(j), "k");
  EXPECT_EQ(c.args[0].var, "stream_");
  EXPECT_EQ(c.args[1].var, "norm_weight");
  EXPECT_FALSE(contract::valid_kernel_name("class"));
  EXPECT_FALSE(contract::valid_kernel_name("1abc"));
  EXPECT_TRUE(contract::valid_kernel_name("gelu_bias"));
}

}  // namespace
}  // namespace egg::backend::builtin
