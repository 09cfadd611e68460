// Rendering checks in the spirit of FileCheck: the lines that matter, not whitespace.
#include "backend/builtin/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

using egg::testing::has;

TEST(Elementwise, RendersTheFusedChain) {
  ElementwiseFamily family(kData);
  auto s = spec::parse_spec(testing::gelu_bias_spec());
  ASSERT_FALSE(family.cannot_implement(s).has_value());
  auto c = contract::derive(s, "gelu_bias");
  auto cand = family.render(s, c, family.plan(s), ElementwiseParams{});
  const auto& code = cand.code.device_code;
  EXPECT_TRUE(has(code, "const float egg_v0 = (egg_e_x * 0.5f);")) << code;
  EXPECT_TRUE(has(code, "const IndexT egg_i0 = (i % 1024);"));  // broadcast operand: index math
  EXPECT_TRUE(has(code, "const float egg_v1 = egg_to_float(bias[egg_i0]);"));
  EXPECT_TRUE(has(code, "const float egg_v2 = (egg_v0 + 1.0f * egg_v1);"));
  EXPECT_TRUE(has(code, "const float egg_v3 = egg_gelu_tanh(egg_v2);"));
  EXPECT_TRUE(has(code, "egg_load_vec<float, VEC>(x + i0)"));  // full operand: 16-byte vectors
  EXPECT_TRUE(has(code, "egg_gelu_bias_element<IndexT>(i, egg_to_float(x_v.v[j]), x, bias, r0)"))
      << code;
  EXPECT_TRUE(has(code, "out0_v.v[j] = egg_from_float<float>(r0);"));
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
  auto cand = family.render(s, contract::derive(s, "k"), family.plan(s), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.device_code, "const IndexT egg_i2 = ((i / 1024) % 16);"))
      << cand.code.device_code;
  EXPECT_TRUE(has(cand.code.device_code, "bias[egg_i2]"));
  // A bias over the last three dims: one digit of i, (i % 16384), not three.
  j["params"][0]["shape"] = {16, 32, 32};
  s = spec::parse_spec(j);
  cand = family.render(s, contract::derive(s, "k"), family.plan(s), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.device_code, "const IndexT egg_i4 = (i % 16384);"))
      << cand.code.device_code;
  EXPECT_TRUE(has(cand.code.device_code, "bias[egg_i4]"));
}

TEST(Elementwise, HalfUsesEightWideVectors) {
  ElementwiseFamily family(kData);
  auto j = testing::gelu_bias_spec();
  j["inputs"][0]["dtype"] = "float16";
  j["params"][0]["dtype"] = "float16";
  j["outputs"][0]["dtype"] = "float16";
  auto s = spec::parse_spec(j);
  auto cand = family.render(s, contract::derive(s, "k"), family.plan(s), ElementwiseParams{});
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

// An int64 output stores the kernel's int64 value exactly; a bool or uint8 output is refused.
TEST(Elementwise, IntegerOutputsAreExactOthersRejected) {
  ElementwiseFamily family(kData);
  using egg::testing::node;
  using egg::testing::ref;
  const auto s = spec::parse_spec(
      egg::testing::spec_around({egg::testing::tensor("idx", {4, 8}, "int64")}, json::array(),
                                {node("r", "remainder", {ref("idx"), json{{"scalar", 7}}},
                                      json::object(), {4, 8}, 6, "int64")}));
  ASSERT_FALSE(family.cannot_implement(s).has_value()) << family.cannot_implement(s)->describe();
  const std::string code = family.structures(s, contract::derive(s, "k")).front().code.device_code;
  EXPECT_TRUE(has(code, "long long& r0")) << code;
  EXPECT_TRUE(has(code, "out0_v.v[j] = egg_from_int<std::int64_t>(r0);")) << code;
  auto j = testing::gelu_bias_spec();
  j["outputs"][0]["dtype"] = "uint8";
  EXPECT_TRUE(family.cannot_implement(spec::parse_spec(j)).has_value());
}

// Integer inputs are int64 values of the kernel: moved by layout ops, converted to float where
// PyTorch's result is floating, and computed exactly by the ops with an integer form; an op
// without one (exp of an integer into an integer) is refused, naming the op.
TEST(Elementwise, IntegersAreComputedExactlyOrConvertedWhereTheResultIsFloating) {
  ElementwiseFamily family(kData);
  using egg::testing::node;
  using egg::testing::ref;
  auto spec_of = [](const std::string& mul_type) {
    const json t =
        node("t", "transpose", {ref("idx")}, {{"dim0", 0}, {"dim1", 1}}, {8, 4}, 6, "int64");
    const json mul =
        node("m", "mul", {ref("t"), json{{"scalar", 3}}}, json::object(), {8, 4}, 7, mul_type);
    const json cast = node("f", "cast", {ref("m")}, {{"dtype", "float32"}}, {8, 4}, 8);
    return spec::parse_spec(egg::testing::spec_around(
        {egg::testing::tensor("idx", {4, 8}, "int64")}, json::array(), {t, mul, cast}));
  };
  const auto ok = spec_of("float32");  // idx.t() * 0.5-like: a float result
  EXPECT_FALSE(family.cannot_implement(ok).has_value()) << family.cannot_implement(ok)->describe();
  const auto c = contract::derive(ok, "k");
  const std::string code = family.structures(ok, c).front().code.device_code;
  EXPECT_TRUE(has(code, "const std::int64_t* __restrict__")) << code;
  EXPECT_TRUE(has(code, "static_cast<float>(egg_v")) << code;  // converted for the float mul
  const auto exact = spec_of("int64");  // idx.t() * 3: int64 arithmetic, then the cast
  ASSERT_FALSE(family.cannot_implement(exact).has_value());
  const std::string icode =
      family.structures(exact, contract::derive(exact, "k")).front().code.device_code;
  EXPECT_TRUE(has(icode, "const long long egg_v1 = (egg_v0 * 3LL);")) << icode;
  // An op with no integer form computing an integer is refused, naming the op and its line.
  auto no_form = spec::parse_spec(egg::testing::spec_around(
      {egg::testing::tensor("idx", {4, 8}, "int64")}, json::array(),
      {node("e", "exp", {ref("idx")}, json::object(), {4, 8}, 6, "int64"),
       node("f", "cast", {ref("e")}, {{"dtype", "float32"}}, {4, 8}, 7)}));
  auto why = family.cannot_implement(no_form);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 6);
  EXPECT_TRUE(has(why->describe(), "computes int64")) << why->describe();
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
  auto cand = family.render(s, contract::derive(s, "k"), family.plan(s), ElementwiseParams{});
  EXPECT_TRUE(has(cand.code.device_code, "egg_clamp(egg_v2, 0.0f, INFINITY)"))
      << cand.code.device_code;
}

// A chain of element-wise nodes over x [64, 1024] (fp32); each node is {name, op, args}.
spec::Spec chain_spec(const std::vector<std::tuple<std::string, std::string, json>>& nodes) {
  auto j = testing::gelu_bias_spec();
  j["params"] = json::array();
  j["nodes"] = json::array();
  for (const auto& [name, op, args] : nodes)
    j["nodes"].push_back({{"name", name},
                          {"op", op},
                          {"target", "torch." + op},
                          {"args", args.is_array() ? args : json::array({args})},
                          {"attrs", json::object()},
                          {"shape", {64, 1024}},
                          {"dtype", "float32"}});
  j["outputs"][0]["node"] = std::get<0>(nodes.back());
  return spec::parse_spec(j);
}

json node_arg(const std::string& name) { return {{"node", name}}; }
json scalar_arg(double v) { return {{"scalar", v}}; }

std::string render_chain(const spec::Spec& s) {
  ElementwiseFamily family(kData);
  EXPECT_FALSE(family.cannot_implement(s).has_value());
  return family.render(s, contract::derive(s, "k"), family.plan(s), ElementwiseParams{})
      .code.device_code;
}

TEST(Elementwise, IntegerPowersBecomeMultiplies) {
  // MinGPT's NewGELU: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0)))).
  auto s = chain_spec({{"half", "mul", {node_arg("x"), scalar_arg(0.5)}},
                       {"cube", "pow", {node_arg("x"), scalar_arg(3.0)}},
                       {"c", "mul", {scalar_arg(0.044715), node_arg("cube")}},
                       {"inner", "add", {node_arg("x"), node_arg("c")}},
                       {"scaled", "mul", {node_arg("inner"), scalar_arg(0.7978845608028654)}},
                       {"th", "tanh", {node_arg("scaled")}},
                       {"one", "add", {node_arg("th"), scalar_arg(1.0)}},
                       {"out", "mul", {node_arg("half"), node_arg("one")}}});
  const std::string code = render_chain(s);
  EXPECT_TRUE(has(code, "const float egg_v1 = (egg_e_x * egg_e_x * egg_e_x);")) << code;
  EXPECT_FALSE(has(code, "powf")) << code;
  EXPECT_TRUE(has(code, "const float egg_v2 = (0.0447149985f * egg_v1);")) << code;

  auto squares = chain_spec({{"sq", "pow", {node_arg("x"), scalar_arg(2.0)}},
                             {"inv", "pow", {node_arg("sq"), scalar_arg(-1.0)}},
                             {"root", "pow", {node_arg("inv"), scalar_arg(0.5)}},
                             {"other", "pow", {node_arg("root"), scalar_arg(2.5)}}});
  const std::string sq = render_chain(squares);
  EXPECT_TRUE(has(sq, "const float egg_v0 = (egg_e_x * egg_e_x);")) << sq;
  EXPECT_TRUE(has(sq, "const float egg_v1 = (1.0f / egg_v0);")) << sq;
  EXPECT_TRUE(has(sq, "const float egg_v2 = sqrtf(egg_v1);")) << sq;
  EXPECT_TRUE(has(sq, "const float egg_v3 = powf(egg_v2, 2.5f);")) << sq;  // not an integer
}

TEST(Elementwise, ScalarChainsFoldAndIdentitiesVanish) {
  auto s = chain_spec({{"a", "mul", {node_arg("x"), scalar_arg(0.5)}},
                       {"b", "mul", {scalar_arg(0.044715), node_arg("a")}},
                       {"c", "div", {node_arg("b"), scalar_arg(4.0)}},
                       {"d", "mul", {node_arg("c"), scalar_arg(1.0)}},
                       {"e", "add", {node_arg("d"), scalar_arg(0.0)}},
                       {"f", "sub", {node_arg("e"), scalar_arg(0.0)}},
                       {"g", "div", {node_arg("f"), scalar_arg(1.0)}},
                       {"h", "mul", {node_arg("g"), scalar_arg(2.0)}},
                       {"i", "div", {node_arg("h"), scalar_arg(0.5)}}});
  const std::string code = render_chain(s);
  EXPECT_TRUE(has(code, "const float egg_v0 = (egg_e_x * 0.5f);")) << code;
  EXPECT_TRUE(has(code, "const float egg_v1 = (egg_e_x * 0.0223574992f);"))
      << code;  // 0.5 * 0.044715
  EXPECT_TRUE(has(code, "const float egg_v2 = (egg_e_x * 0.00558937481f);")) << code;  // ... / 4
  EXPECT_TRUE(has(code, "const float egg_v3 = (egg_e_x * 0.00558937481f);")) << code;  // ... * 1
  // + 0, - 0, / 1 pass egg_v3 on; the sub broke the chain; / 1 * 2 / 0.5 fold into * 4.
  EXPECT_TRUE(has(code, "const float egg_v4 = (egg_v3 * 2.0f);")) << code;
  EXPECT_TRUE(has(code, "const float egg_v5 = (egg_v3 * 4.0f);")) << code;
  EXPECT_FALSE(has(code, "egg_v6")) << code;
}

// The reductions' numerics against double: x * x * x is within 2 ulp of x^3 (two roundings), as
// powf is; a folded scale (rounded once) is within 2 ulp of the step-by-step product.
TEST(Elementwise, StrengthReducedNumericsStayWithinAnUlpOrTwo) {
  auto ulps = [](float got, double want) {
    const double ulp =
        std::nextafter(static_cast<float>(want), INFINITY) - static_cast<float>(want);
    return std::abs(double(got) - want) / ulp;
  };
  double worst_cube = 0, worst_fold = 0;
  for (int i = -20000; i <= 20000; ++i) {
    const float x = 0.00137f * float(i) * (1.0f + 0.001f * float(i % 7));
    if (x == 0.0f) continue;
    worst_cube = std::max(worst_cube, ulps(x * x * x, double(x) * x * x));
    const float stepwise = (x * 0.5f) * 0.044715f;
    const float folded = x * static_cast<float>(0.5 * double(0.044715f));
    worst_fold = std::max(worst_fold, ulps(folded, double(stepwise)));
  }
  EXPECT_LE(worst_cube, 2.0);
  EXPECT_LE(worst_fold, 2.0);
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
  auto src =
      emit::render_sources(kData, c, family.render(s, c, family.plan(s), {}), "builtin", "op.py");
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
  // The kernels' own names (the element-wise program's index and results) are not a tensor's.
  for (const auto& [name, var] :
       std::vector<std::pair<std::string, std::string>>{{"i", "i_"},
                                                        {"r0", "r0_"},
                                                        {"r12", "r12_"},
                                                        {"r", "r"},
                                                        {"rx", "rx"},
                                                        {"out", "out_"}}) {
    j["inputs"][0]["name"] = name;
    j["nodes"][0]["args"][0]["node"] = name;
    EXPECT_EQ(contract::derive(spec::parse_spec(j), "k").args[0].var, var) << name;
  }
  EXPECT_FALSE(contract::valid_kernel_name("class"));
  EXPECT_FALSE(contract::valid_kernel_name("1abc"));
  EXPECT_TRUE(contract::valid_kernel_name("gelu_bias"));
}

}  // namespace
}  // namespace egg::backend::builtin
