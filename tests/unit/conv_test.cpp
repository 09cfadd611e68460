// Conv family: output-size math, can_implement (accepts/rejects with lines), the structures' prior
// order, rendering of the implicit GEMM / direct / transposed kernels with bias and epilogues,
// parameter validity, tuning and fallback; the tolerance of specs with convolutions.
#include "backend/builtin/conv.h"

#include <gtest/gtest.h>

#include "dump_candidates.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include <cstdlib>
#include <set>

#include "backend/builtin/builtin_backend.h"
#include "backend/builtin/families.h"
#include "backend/builtin/planner.h"
#include "contract/contract.h"
#include "pipeline/tolerance.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;
using egg::testing::node;
using egg::testing::none;
using egg::testing::ref;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json param(const std::string& name, json shape, const std::string& dtype = "float32") {
  return {{"name", name}, {"shape", shape}, {"dtype", dtype}, {"kind", "parameter"}};
}

// A spec with input x, params (weight, bias, ...), the nodes and one output at out_node.
json spec_of(json inputs, json params, json nodes, const std::string& out_node, json out_shape,
             const std::string& dtype = "float32") {
  return {
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs", as_list(inputs)},
      {"params", as_list(params)},
      {"nodes", as_list(nodes)},
      {"outputs", {{{"name", "out0"}, {"node", out_node}, {"shape", out_shape}, {"dtype", dtype}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

json num(double v) { return {{"scalar", v}}; }

json conv_attrs(json stride, json padding, json dilation, int groups) {
  return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}

// conv2d 64 → 64, 3x3 pad 1, bias, then relu: the ResNet block.
json resnet(const std::string& dtype = "float32", int line = 6) {
  return spec_of(
      {tensor("x", {32, 64, 56, 56}, dtype)},
      {param("conv.weight", {64, 64, 3, 3}, dtype), param("conv.bias", {64}, dtype)},
      {node("conv", "conv2d", {ref("x"), ref("conv.weight"), ref("conv.bias")},
            conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), {32, 64, 56, 56}, line, dtype),
       node("relu", "relu", {ref("conv")}, json::object(), {32, 64, 56, 56}, line + 1, dtype)},
      "relu", {32, 64, 56, 56}, dtype);
}

// conv_transpose2d 16 → 8, 3x3 stride 2 pad 1, groups 2, output_padding 1, no bias: weight
// [C_in, C_out/groups, k, k].
json grouped_transpose() {
  auto attrs = conv_attrs({2, 2}, {1, 1}, {1, 1}, 2);
  attrs["output_padding"] = {1, 1};
  return spec_of({tensor("x", {2, 16, 10, 10})}, {param("t.weight", {16, 4, 3, 3})},
                 {node("t", "conv_transpose2d", {ref("x"), ref("t.weight"), none()}, attrs,
                       {2, 8, 20, 20}, 5)},
                 "t", {2, 8, 20, 20});
}

// Depthwise 3x3 over 128 channels, no bias.
json depthwise() {
  return spec_of({tensor("x", {8, 128, 40, 40})}, {param("dw.weight", {128, 1, 3, 3})},
                 {node("dw", "conv2d", {ref("x"), ref("dw.weight"), none()},
                       conv_attrs(1, 1, 1, 128), {8, 128, 40, 40}, 5)},
                 "dw", {8, 128, 40, 40});
}

std::variant<ConvPlan, UserError> plan_of(const json& j, const spec::Spec** keep = nullptr) {
  static std::vector<std::unique_ptr<spec::Spec>> specs;  // plans point into their spec
  specs.push_back(std::make_unique<spec::Spec>(spec::parse_spec(j)));
  if (keep) *keep = specs.back().get();
  return plan_conv(*specs.back(), OpTable(kData));
}

UserError rejection(const json& j) {
  ConvFamily family(kData);
  auto why = family.cannot_implement(spec::parse_spec(j));
  EXPECT_TRUE(why.has_value());
  return why.value_or(UserError("accepted"));
}

std::vector<Candidate> structures_of(const json& j) {
  ConvFamily family(kData);
  auto s = spec::parse_spec(j);
  auto why = family.cannot_implement(s);
  EXPECT_FALSE(why.has_value()) << (why ? why->describe() : "");
  if (why) return {};
  return family.structures(s, contract::derive(s, "k"));
}

// ---- output sizes -------------------------------------------------------------------------

TEST(Conv, OutputSizesMatchATen) {
  EXPECT_EQ(conv_output_size(56, 3, 2, 1, 1), 56);    // 3x3 pad 1
  EXPECT_EQ(conv_output_size(224, 7, 6, 2, 1), 112);  // ResNet stem
  EXPECT_EQ(conv_output_size(57, 3, 2, 2, 1), 29);
  EXPECT_EQ(conv_output_size(64, 3, 4, 1, 2), 64);  // dilated 2, pad 2
  EXPECT_EQ(conv_output_size(2, 5, 0, 1, 1), 0);    // window larger than the input: empty
  EXPECT_EQ(conv_transpose_output_size(16, 4, 1, 2, 1, 0), 32);
  EXPECT_EQ(conv_transpose_output_size(16, 3, 1, 2, 1, 1), 32);
  EXPECT_EQ(conv_transpose_output_size(7, 3, 0, 1, 2, 0), 11);
}

// ---- can_implement ------------------------------------------------------------------------

// The epilogue pass's 16-byte loads: channels-last only, channels in multiples of a load's
// elements (4 fp32), a span of whole sweeps (8 x 4 = 32 fp32 positions; 64 for fp16).
TEST(Conv, VectorLoadsInThePassNeedChannelsLastAndWholeLoads) {
  auto r = plan_of(resnet());
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(r));
  ConvPlan p = std::get<ConvPlan>(r);
  ConvParams q;
  q.structure = "cudnn";
  q.nhwc = true;
  q.vload = true;
  EXPECT_FALSE(conv_params_unsupported(p, q).has_value());
  q.nhwc = false;
  EXPECT_TRUE(has(conv_params_unsupported(p, q).value_or(""), "channels-last"));
  q.nhwc = true;
  p.c_out = 62;
  EXPECT_TRUE(has(conv_params_unsupported(p, q).value_or(""), "multiples of 4"));
  p.c_out = 64;
  p.dtype = spec::DType::float16;
  EXPECT_TRUE(has(conv_params_unsupported(p, q).value_or(""), "span of 64"));
  q.span = 64;
  EXPECT_FALSE(conv_params_unsupported(p, q).has_value());
  EXPECT_EQ(ConvParams::from_json(q.to_json()).vload, true);
}

TEST(Conv, PlansGroupsStridesSamePaddingAndTransposed) {
  auto r = plan_of(resnet());
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(r)) << std::get<UserError>(r).describe();
  const auto& p = std::get<ConvPlan>(r);
  EXPECT_EQ(p.gemm_m(), 32 * 56 * 56);
  EXPECT_EQ(p.gemm_n(), 64);
  EXPECT_EQ(p.gemm_k(), 64 * 9);
  EXPECT_EQ(p.bias, "conv.bias");
  EXPECT_EQ(p.epilogue.size(), 1u);

  // conv1d with 'same' padding and an even kernel: ATen pads 1 on the left, 2 on the right.
  auto same = spec_of({tensor("x", {4, 16, 100})}, {param("c.weight", {32, 8, 4})},
                      {node("c", "conv1d", {ref("x"), ref("c.weight"), none()},
                            conv_attrs(1, "same", 1, 2), {4, 32, 100}, 5)},
                      "c", {4, 32, 100});
  auto rs = plan_of(same);
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(rs)) << std::get<UserError>(rs).describe();
  EXPECT_EQ(std::get<ConvPlan>(rs).pad[2], 1);
  EXPECT_EQ(std::get<ConvPlan>(rs).groups, 2);
  EXPECT_EQ(std::get<ConvPlan>(rs).gemm_k(), 8 * 4);

  // Unbatched conv3d, strided and dilated.
  auto c3 = spec_of({tensor("x", {4, 9, 20, 20})}, {param("w", {6, 4, 3, 3, 3})},
                    {node("c", "conv3d", {ref("x"), ref("w"), none()},
                          conv_attrs({2, 2, 2}, {1, 0, 0}, {1, 2, 2}, 1), {6, 5, 8, 8}, 5)},
                    "c", {6, 5, 8, 8});
  auto r3 = plan_of(c3);
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(r3)) << std::get<UserError>(r3).describe();
  EXPECT_EQ(std::get<ConvPlan>(r3).batch, 1);

  // conv_transpose2d, groups 2, output_padding 1.
  auto rt = plan_of(grouped_transpose());
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(rt)) << std::get<UserError>(rt).describe();
  EXPECT_TRUE(std::get<ConvPlan>(rt).transposed);
  EXPECT_EQ(std::get<ConvPlan>(rt).c_out, 8);
  EXPECT_EQ(std::get<ConvPlan>(rt).cin_per_group(), 8);
}

TEST(Conv, TransposedOutputSizeComesFromTheTracedShape) {
  // ConvTranspose2d(k3, s2, p1) on 16: 31 by the formula, 32 with output_size=[32, 32] (the
  // trace keeps output_padding 0 and the shape); 33 is not a possible output size.
  auto j = [](int size) {
    auto attrs = conv_attrs({2, 2}, {1, 1}, {1, 1}, 1);
    attrs["output_padding"] = {0, 0};
    return spec_of({tensor("x", {2, 8, 16, 16})}, {param("t.weight", {8, 4, 3, 3})},
                   {node("t", "conv_transpose2d", {ref("x"), ref("t.weight"), none()}, attrs,
                         {2, 4, size, size}, 5)},
                   "t", {2, 4, size, size});
  };
  for (int size : {31, 32}) {
    auto r = plan_of(j(size));
    ASSERT_TRUE(std::holds_alternative<ConvPlan>(r)) << std::get<UserError>(r).describe();
    EXPECT_EQ(std::get<ConvPlan>(r).out[2], size);
  }
  auto e = rejection(j(33));
  EXPECT_EQ(e.where().line, 5);
  EXPECT_TRUE(has(e.what(), "[2, 4, 31, 31]")) << e.describe();
}

TEST(Conv, RejectsPaddingModeStringPaddingAndShapesWithLines) {
  auto j = resnet();
  j["nodes"][0]["attrs"]["padding_mode"] = "reflect";
  auto e = rejection(j);
  EXPECT_EQ(e.where().line, 6);
  EXPECT_TRUE(has(e.what(), "padding_mode='reflect'")) << e.describe();
  EXPECT_TRUE(has(e.hint(), "zeros"));

  auto t = spec_of({tensor("x", {2, 16, 10, 10})}, {param("w", {16, 4, 3, 3})},
                   {node("t", "conv_transpose2d", {ref("x"), ref("w"), none()},
                         conv_attrs(1, "same", 1, 1), {2, 4, 10, 10}, 9)},
                   "t", {2, 4, 10, 10});
  auto et = rejection(t);
  EXPECT_EQ(et.where().line, 9);
  EXPECT_TRUE(has(et.what(), "padding='same'")) << et.describe();

  auto bad = resnet();
  bad["nodes"][0]["shape"] = {32, 64, 55, 55};
  bad["nodes"][1]["shape"] = {32, 64, 55, 55};
  bad["outputs"][0]["shape"] = {32, 64, 55, 55};
  auto eb = rejection(bad);
  EXPECT_EQ(eb.where().line, 6);
  EXPECT_TRUE(has(eb.what(), "[32, 64, 56, 56]")) << eb.describe();

  auto groups = resnet();
  groups["nodes"][0]["attrs"]["groups"] = 3;
  EXPECT_TRUE(has(rejection(groups).what(), "3 group(s)"));
}

TEST(Conv, RejectsPrologueSecondConvAndNonElementwiseEpilogueWithLines) {
  auto pro = resnet();
  pro["nodes"].insert(pro["nodes"].begin(),
                      node("r0", "relu", {ref("x")}, json::object(), {32, 64, 56, 56}, 4));
  pro["nodes"][1]["args"][0] = ref("r0");
  auto e1 = rejection(pro);
  EXPECT_EQ(e1.where().line, 6);
  EXPECT_TRUE(has(e1.what(), "computed before it")) << e1.describe();

  auto two = resnet();
  two["params"].push_back(param("c2.weight", {64, 64, 1, 1}));
  two["nodes"].push_back(node("c2", "conv2d", {ref("relu"), ref("c2.weight"), none()},
                              conv_attrs(1, 0, 1, 1), {32, 64, 56, 56}, 11));
  two["outputs"][0]["node"] = "c2";
  auto e2 = rejection(two);
  EXPECT_EQ(e2.where().line, 11);
  EXPECT_TRUE(has(e2.what(), "second convolution")) << e2.describe();

  auto sum = resnet();
  sum["nodes"].push_back(node("s", "sum", {ref("relu")}, {{"dim", 1}}, {32, 56, 56}, 12));
  sum["outputs"][0] = {
      {"name", "out0"}, {"node", "s"}, {"shape", {32, 56, 56}}, {"dtype", "float32"}};
  auto e3 = rejection(sum);
  EXPECT_EQ(e3.where().line, 12);
  EXPECT_TRUE(has(e3.what(), "only element-wise ops fuse")) << e3.describe();

  auto computed = resnet();
  computed["nodes"].insert(
      computed["nodes"].begin(),
      node("w2", "mul", {ref("conv.weight"), num(2.0)}, json::object(), {64, 64, 3, 3}, 5));
  computed["nodes"][1]["args"][1] = ref("w2");
  auto e4 = rejection(computed);
  EXPECT_EQ(e4.where().line, 6);
  EXPECT_TRUE(has(e4.what(), "weight is not an input or parameter")) << e4.describe();

  // An epilogue op that does not read the convolution's result (the shared epilogue walk).
  auto aside = resnet();
  aside["nodes"].push_back(
      node("x2", "mul", {ref("x"), num(2.0)}, json::object(), {32, 64, 56, 56}, 13));
  aside["nodes"].push_back(
      node("sum2", "add", {ref("relu"), ref("x2")}, json::object(), {32, 64, 56, 56}, 14));
  aside["outputs"][0]["node"] = "sum2";
  auto e5 = rejection(aside);
  EXPECT_EQ(e5.where().line, 13) << e5.describe();
  EXPECT_TRUE(has(e5.what(), "does not read the result of")) << e5.describe();

  auto mixed = resnet();
  mixed["params"][0]["dtype"] = "float16";
  EXPECT_TRUE(has(rejection(mixed).what(), "mixes dtypes"));

  auto no_conv = spec_of({tensor("x", {8, 16})}, json::array(),
                         {node("r", "relu", {ref("x")}, json::object(), {8, 16}, 3)}, "r", {8, 16});
  EXPECT_EQ(rejection(no_conv).where().line, 0);
}

TEST(Conv, BackendPicksConvAndPlansConvThenNorm) {
  BuiltinBackend backend(kData);
  const auto families = make_families(kData);
  auto s = spec::parse_spec(resnet());
  ASSERT_NE(family_taking(s, families), nullptr);
  EXPECT_EQ(family_taking(s, families)->name(), "conv");
  // conv → batch_norm → relu: two kernels (conv, then norm with the relu fused).
  auto j = resnet();
  j["params"].push_back(param("bn.weight", {64}));
  j["params"].push_back(param("bn.bias", {64}));
  j["params"].push_back(
      {{"name", "bn.running_mean"}, {"shape", {64}}, {"dtype", "float32"}, {"kind", "buffer"}});
  j["params"].push_back(
      {{"name", "bn.running_var"}, {"shape", {64}}, {"dtype", "float32"}, {"kind", "buffer"}});
  j["nodes"][1] =
      node("bn", "batch_norm",
           {ref("conv"), ref("bn.running_mean"), ref("bn.running_var"), ref("bn.weight"),
            ref("bn.bias")},
           {{"training", false}, {"momentum", 0.1}, {"eps", 1e-5}}, {32, 64, 56, 56}, 7);
  j["nodes"].push_back(node("relu", "relu", {ref("bn")}, json::object(), {32, 64, 56, 56}, 8));
  auto s2 = spec::parse_spec(j);
  EXPECT_EQ(family_taking(s2, families), nullptr);
  auto plan = backend.plan(s2);
  ASSERT_EQ(plan.segments.size(), 2u);
  EXPECT_EQ(plan.segments[0].family->name(), "conv");
  EXPECT_EQ(plan.segments[1].family->name(), "norm");
}

// ---- structures and rendering ----------------------------------------------------------------

TEST(Conv, PriorOrdersTf32ThenExactForChannelRichFp32) {
  auto cands = structures_of(resnet());
  ASSERT_EQ(cands.size(), 3u);
  EXPECT_EQ(cands[0].id, "conv.igemm.tf32:128x64x32:w4x2:s3");
  EXPECT_EQ(cands[1].id, "conv.igemm.3xtf32:128x64x32:w4x2:s3");
  EXPECT_EQ(cands[2].id, "conv.direct:b256:o1:c4");
  const auto& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int MODE = 1;")) << d;
  EXPECT_TRUE(has(d, "cvt.rna.tf32.f32"));
  EXPECT_TRUE(has(d, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
  // Tap-major K: tiles of 32 of the 64 channels, two per tap, nine taps; the weight copied to
  // [group][tap][channel][out channel] on the stream.
  EXPECT_TRUE(has(d, "constexpr int CT = (CG + BK - 1) / BK;"));
  EXPECT_TRUE(has(d, "constexpr bool TR = false;"));
  EXPECT_TRUE(has(d, "static_assert(M == N * OSP && 576 == CG * KVOL, \"GEMM sizes\");")) << d;
  EXPECT_TRUE(has(d, "weight_taps<MODE><<<"));
  EXPECT_TRUE(has(d, "cudaMallocAsync"));
  EXPECT_TRUE(has(d, "egg_keep_pool(WT_ELEMS * sizeof(float));"));
  EXPECT_TRUE(has(d, "constexpr int D = 1, H = 56, W = 56, OD = 1, OH = 56, OW = 56;"));
  EXPECT_TRUE(has(d, "constexpr int PD = 0, PH = 1, PW = 1;"));
  EXPECT_TRUE(has(d, "constexpr idx M = 100352;"));
  EXPECT_TRUE(has(d, "const float egg_r = egg_acc + egg_ldg(a.conv_bias + egg_co);")) << d;
  EXPECT_TRUE(has(d, "const float egg_e0 = egg_relu(egg_r);"));
  EXPECT_TRUE(has(d, "a.out0[egg_o] = egg_from_float<float>(egg_e0);"));
  EXPECT_TRUE(has(cands[0].code.launch_body, "return egg_k_ig::run(egg_a, stream);"));
  EXPECT_TRUE(has(cands[1].code.device_code, "constexpr int MODE = 2;"));
  // The direct kernel: exact fp32, 4 output channels per thread.
  EXPECT_TRUE(
      has(cands[2].code.launch_body, "egg_k_dc::kernel<1, 4><<<6272, 256, 0, stream>>>(egg_a);"))
      << cands[2].code.launch_body;
}

TEST(Conv, DepthwiseStartsDirectAndHalfUsesNativeTensorCores) {
  auto dw = structures_of(depthwise());
  ASSERT_GE(dw.size(), 2u);
  EXPECT_EQ(dw[0].id, "conv.direct:b256:o1:c1");
  EXPECT_TRUE(
      has(dw[0].code.device_code, "constexpr int CIN = 128, COUT = 128, G = 128, CG = 1, COG = 1;"))
      << dw[0].code.device_code;
  EXPECT_TRUE(has(dw[1].id, "conv.igemm.tf32:128x16x32")) << dw[1].id;

  auto half = structures_of(resnet("float16"));
  ASSERT_EQ(half.size(), 2u);
  EXPECT_EQ(half[0].id, "conv.igemm.float16:128x64x32:w4x2");
  EXPECT_TRUE(has(half[0].code.device_code, "constexpr int MODE = 0;"));
  EXPECT_TRUE(has(half[0].code.device_code, "using T = __half;"));
  // Widened to fp32 on the way into shared memory (exact in TF32): the register-staged stages.
  EXPECT_TRUE(has(half[0].code.device_code, "constexpr int STAGES = 2;"));
  EXPECT_EQ(half[1].id, "conv.direct:b256:o1:c4");
  auto bf = structures_of(resnet("bfloat16"));
  EXPECT_TRUE(has(bf[0].code.device_code, "using T = __nv_bfloat16;"));
}

// An epilogue operand that varies along the output channels alone ([C, 1, 1], [1, C, 1, 1]) is read
// at the channel the epilogue is given; one of shape [W] (broadcast along the last dim) at its
// index from the element's.
TEST(Conv, AChannelVectorInTheEpilogueIsReadAtTheChannel) {
  auto j = spec_of({tensor("x", {4, 32, 50})},
                   {param("t.weight", {32, 16, 4}), param("b", {16, 1}), param("s", {1, 16, 1}),
                    param("w", {100})},
                   {node("t", "conv_transpose1d", {ref("x"), ref("t.weight"), json{{"none", true}}},
                         conv_attrs(2, 1, 1, 1), {4, 16, 100}, 5),
                    node("a", "sub", {ref("t"), ref("b")}, json::object(), {4, 16, 100}, 6),
                    node("m", "mul", {ref("a"), ref("s")}, json::object(), {4, 16, 100}, 7),
                    node("w2", "add", {ref("m"), ref("w")}, json::object(), {4, 16, 100}, 8)},
                   "w2", {4, 16, 100});
  auto cands = structures_of(j);
  ASSERT_FALSE(cands.empty());
  const auto& d = cands[0].code.device_code;
  const std::string epi = d.substr(d.find("_epilogue("));
  EXPECT_TRUE(has(epi, "egg_ldg(a.b + egg_co)")) << epi;
  EXPECT_TRUE(has(epi, "egg_ldg(a.s + egg_co)")) << epi;
  EXPECT_FALSE(has(epi, "egg_ldg(a.w + egg_co)")) << epi;
  EXPECT_TRUE(has(epi, "egg_ldg(a.w + (egg_o % 100))")) << epi;
}

TEST(Conv, TransposedUsesTheGatherKernelAndResidualEpilogue) {
  // conv_transpose1d 32 → 16, stride 2, then + x2 (a second input of the output's shape) * 0.5.
  auto j = spec_of({tensor("x", {4, 32, 50}), tensor("y", {4, 16, 100})},
                   {param("t.weight", {32, 16, 4}), param("t.bias", {16})},
                   {node("t", "conv_transpose1d", {ref("x"), ref("t.weight"), ref("t.bias")},
                         conv_attrs(2, 1, 1, 1), {4, 16, 100}, 5),
                    node("a", "add", {ref("t"), ref("y")}, json::object(), {4, 16, 100}, 6),
                    node("m", "mul", {ref("a"), num(0.5)}, json::object(), {4, 16, 100}, 7)},
                   "m", {4, 16, 100});
  auto cands = structures_of(j);
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "conv.transpose:b256:c4");
  // Then the implicit GEMM by output phase (32 input channels a group).
  EXPECT_EQ(cands[1].id, "conv.igemm.tf32:128x16x32:w4x1:s3");
  EXPECT_TRUE(has(cands[1].code.device_code, "constexpr bool TR = true;"));
  const auto& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "const float egg_b0 = egg_ldg(a.y + egg_o);"))
      << d.substr(d.find("_epilogue("));
  EXPECT_TRUE(has(d, "const float egg_e0 = (egg_r + 1.0f * egg_b0);"))
      << d.substr(d.find("_epilogue("));
  EXPECT_TRUE(has(d, "const float egg_e1 = (egg_e0 * 0.5f);"));
  EXPECT_TRUE(
      has(cands[0].code.launch_body, "const egg_k_args egg_a{ x, y, t_weight, t_bias, out0, };"))
      << cands[0].code.launch_body;
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_tr::kernel<4><<<7, 256, 0, stream>>>(egg_a);"))
      << cands[0].code.launch_body;
}

TEST(Conv, ParameterChecksTuningsAndFallback) {
  const spec::Spec* s = nullptr;
  auto r = plan_of(resnet(), &s);
  const auto& p = std::get<ConvPlan>(r);
  ConvParams q;
  EXPECT_FALSE(conv_params_unsupported(p, q).has_value());
  q.bm = 96;
  EXPECT_TRUE(conv_params_unsupported(p, q).has_value());  // 96 rows on 4 warps of 16: no
  q = ConvParams();
  q.warps_m = 2, q.warps_n = 1;  // 64 threads cannot each own a row of a 128-row tile
  EXPECT_TRUE(has(conv_params_unsupported(p, q).value_or(""), "threads"));
  q = ConvParams();
  q.math = "native";  // fp32 needs tf32 or 3xtf32
  EXPECT_TRUE(conv_params_unsupported(p, q).has_value());
  q = ConvParams();
  q.structure = "transpose";
  EXPECT_TRUE(conv_params_unsupported(p, q).has_value());
  q.structure = "direct";
  q.co = 3;
  EXPECT_TRUE(has(conv_params_unsupported(p, q).value_or(""), "do not divide"));

  ConvFamily family(kData);
  auto c = contract::derive(*s, "k");
  auto cands = family.structures(*s, c);
  auto tunes = family.tunings(*s, c, cands[0], "compute");
  ASSERT_GE(tunes.size(), 4u);
  EXPECT_EQ(tunes[0].id, cands[0].id);  // the incumbent first
  for (const auto& t : tunes) EXPECT_TRUE(has(t.id, "conv.igemm.tf32:")) << t.id;
  // 64 output channels: no 128-wide N tile (half its MMAs would multiply zero weights); the 64x64
  // warp tile's 128x64 block is tried first among the tiles.
  for (const auto& t : tunes) EXPECT_FALSE(has(t.id, "x128x")) << t.id;
  EXPECT_EQ(tunes[1].id, "conv.igemm.tf32:128x64x32:w2x2:s3");
  auto dtunes = family.tunings(*s, c, cands[2], "memory");
  EXPECT_GE(dtunes.size(), 4u);
  for (const auto& t : dtunes) EXPECT_TRUE(has(t.id, "conv.direct:")) << t.id;
  auto fb = family.fallback(*s, c, cands[0]);
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->id, "conv.direct:b256:o1:c1");
  EXPECT_FALSE(family.fallback(*s, c, *fb).has_value());
}

TEST(Conv, WideConvolutionsTryTheWarpTileOf64x64First) {
  // conv2d 64 → 128: stage 2 tries 128x128 on 2x2 warps (64x64 a warp) first; fp16 (2 stages
  // staged through registers, which that tile would spill) does not try it.
  auto wide = [](const std::string& dtype) {
    return spec_of({tensor("x", {8, 64, 32, 32}, dtype)},
                   {param("conv.weight", {128, 64, 3, 3}, dtype)},
                   {node("conv", "conv2d", {ref("x"), ref("conv.weight")},
                         conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), {8, 128, 32, 32}, 6, dtype)},
                   "conv", {8, 128, 32, 32}, dtype);
  };
  ConvFamily family(kData);
  for (const std::string dtype : {"float32", "float16"}) {
    auto s = spec::parse_spec(wide(dtype));
    auto c = contract::derive(s, "k");
    auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty());
    ASSERT_TRUE(has(cands[0].id, "conv.igemm.")) << cands[0].id;
    auto tunes = family.tunings(s, c, cands[0], "compute");
    ASSERT_GE(tunes.size(), 3u);
    if (dtype == "float32") {
      EXPECT_EQ(tunes[1].id, "conv.igemm.tf32:128x128x32:w2x2:s3");
      EXPECT_EQ(tunes[2].id, "conv.igemm.tf32:128x64x32:w2x2:s3");
    } else {
      for (const auto& t : tunes) EXPECT_FALSE(has(t.id, "128x128x32:w2x2")) << t.id;
    }
  }
}

// ---- tolerance ---------------------------------------------------------------------------------

TEST(ConvTolerance, Fp32ConvolutionIsTf32ClassOthersKeepKernelBenchDefaults) {
  auto conv = spec::parse_spec(resnet());
  EXPECT_TRUE(pipeline::has_fp32_convolution(conv));
  auto t = pipeline::default_tolerance(conv, "default");
  EXPECT_EQ(t.atol, 1e-2);
  EXPECT_EQ(t.rtol, 1e-2);
  EXPECT_TRUE(has(t.basis, "TF32")) << t.basis;

  auto half = spec::parse_spec(resnet("float16"));
  EXPECT_FALSE(pipeline::has_fp32_convolution(half));
  EXPECT_EQ(pipeline::default_tolerance(half, "default").atol, 1e-2);
  EXPECT_TRUE(has(pipeline::default_tolerance(half, "default").basis, "fp16/bf16"));

  auto plain = spec::parse_spec(spec_of({tensor("x", {8, 16})}, json::array(),
                                        {node("r", "relu", {ref("x")}, json::object(), {8, 16}, 3)},
                                        "r", {8, 16}));
  EXPECT_EQ(pipeline::default_tolerance(plain, "default").atol, 1e-4);
  EXPECT_EQ(pipeline::default_tolerance(plain, "default").rtol, 1e-4);
  EXPECT_EQ(pipeline::default_tolerance(plain, "tf32").atol, 1e-2);
  EXPECT_TRUE(has(pipeline::default_tolerance(plain, "tf32").basis, "PRECISION tf32"));
}

// Writes every candidate of each spec.json under $EGG_CONV_SPEC_DIR to
// $EGG_CONV_OUT_DIR/<spec>/<n>.cu with its header, for compiling with nvcc by hand. Skipped unless
// both are set.
TEST(Conv, DumpEveryCandidateForNvcc) {
  const char* in = std::getenv("EGG_CONV_SPEC_DIR");
  const char* out = std::getenv("EGG_CONV_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_CONV_SPEC_DIR and EGG_CONV_OUT_DIR";
  egg::testing::dump_every_candidate(ConvFamily(kData), kData, in, out,
                                     /*tune_every_structure=*/true);
}

// ---- the cuDNN structure ----------------------------------------------------------------------

std::vector<Candidate> cudnn_structures_of(
    const json& j, egg::backend::Cudnn use = egg::backend::Cudnn::any_engine) {
  ConvFamily family(kData, use);
  auto s = spec::parse_spec(j);
  return family.structures(s, contract::derive(s, "k"));
}

// The candidate with this id (an empty one, failing the caller's checks, when there is none).
Candidate with_id(const std::vector<Candidate>& cands, const std::string& id) {
  for (const auto& c : cands)
    if (c.id == id) return c;
  ADD_FAILURE() << "no candidate " << id;
  return Candidate{};
}

TEST(Conv, CudnnIsOfferedFirstWhenAvailable) {
  // Without cuDNN at hand: EGG's own structures only.
  for (const auto& c : structures_of(resnet()))
    EXPECT_EQ(c.id.find("cudnn"), std::string::npos) << c.id;
  auto cands = cudnn_structures_of(resnet());
  ASSERT_GE(cands.size(), 3u);
  // A channel-rich fp32 forward convolution with a bias and ReLU after it: cuDNN's channels-last
  // call (its transposing pass 256 positions a channel, 16-byte loads), then the implicit GEMM
  // (NCHW in and out, the epilogue in its stores; a budget of two measures the two), then cuDNN
  // in NCHW.
  EXPECT_EQ(cands[0].id, "conv.cudnn.fwd.nhwc:a0:p256:v");
  EXPECT_EQ(cands[1].id, "conv.igemm.tf32:128x64x32:w4x2:s3");
  EXPECT_EQ(cands[2].id, "conv.cudnn.fwd:a0");
  // Without a pass after cuDNN (no bias, nothing after it): cuDNN's two layouts first, NCHW
  // first, then EGG's own kernels.
  const auto plain = cudnn_structures_of(
      spec_of({tensor("x", {32, 64, 56, 56})}, {param("conv.weight", {64, 64, 3, 3})},
              {node("conv", "conv2d", {ref("x"), ref("conv.weight"), none()},
                    conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), {32, 64, 56, 56}, 6)},
              "conv", {32, 64, 56, 56}));
  ASSERT_GE(plain.size(), 3u);
  EXPECT_EQ(plain[0].id, "conv.cudnn.fwd:a0");
  EXPECT_EQ(plain[1].id, "conv.cudnn.fwd.nhwc:a0");
  EXPECT_EQ(plain[2].id.rfind("conv.igemm", 0), 0u) << plain[2].id;
  // Half types keep cuDNN's two layouts first.
  const auto half = cudnn_structures_of(resnet("float16"));
  ASSERT_GE(half.size(), 2u);
  EXPECT_EQ(half[0].id, "conv.cudnn.fwd:a0");
  EXPECT_EQ(half[1].id, "conv.cudnn.fwd.nhwc:a0:p256:v");
  const Candidate nchw = cands[2];
  const auto& d = nchw.code.device_code;
  EXPECT_TRUE(has(d, "#include <cudnn.h>"));
  EXPECT_TRUE(has(
      d,
      "const std::int64_t x_dims[] = { 32, 64, 56, 56 }, x_strides[] = { 200704, 3136, 56, 1 };"))
      << d;
  EXPECT_TRUE(has(d, "w_dims[] = { 64, 64, 3, 3 }, w_strides[] = { 576, 9, 3, 1 };")) << d;
  EXPECT_TRUE(has(d, "pad[] = { 1, 1 }, stride[] = { 1, 1 }, dilation[] = { 1, 1 };"));
  // The graph API: a forward-convolution operation, engines ranked by heuristic modes A, B and
  // the fallback list; as under PyTorch's defaults, nondeterministic engines stay in and
  // input-down-converting ones are left out.
  EXPECT_TRUE(has(d, "CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR"));
  EXPECT_TRUE(has(d, "{CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B, CUDNN_HEUR_MODE_FALLBACK}"));
  EXPECT_FALSE(has(d, "CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC")) << d;
  EXPECT_TRUE(has(d, "notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS"));
  EXPECT_TRUE(has(nchw.summary, "nondeterministic engines too")) << nchw.summary;
  EXPECT_FALSE(has(d, "_v7("));
  // The pointers cuDNN sees decide the alignment it is told (a plan per alignment class).
  EXPECT_TRUE(has(d, "egg_k_align_class(a.x, a.conv_weight, a.out0)")) << d;
  EXPECT_TRUE(has(d, "cudnnBackendExecute(s.handle, s.plan, pack)"));
  // Bias and ReLU run in place over the result cuDNN wrote into the output.
  EXPECT_TRUE(has(d, "egg_k_epilogue(a, egg_to_float(a.out0[o]), o, co);"));
  EXPECT_TRUE(has(nchw.code.launch_body, "return egg_k_dnn_run(egg_a, stream);"));
  EXPECT_EQ(nchw.params["link"], json::array({"cudnn"}));
  EXPECT_TRUE(has(d, "if (rank++ != 0) continue;")) << d;  // the heuristic's first that fits
  EXPECT_FALSE(has(d, "_swap("));                          // NCHW: no layout change
  EXPECT_EQ(nchw.params["layout"], "nchw");
}

TEST(Conv, CudnnDeterministicOptionLeavesNondeterministicEnginesOut) {
  const auto cands = cudnn_structures_of(resnet(), egg::backend::Cudnn::deterministic_engines);
  ASSERT_GE(cands.size(), 3u);
  for (const std::size_t i : {std::size_t(0), std::size_t(2)}) {  // channels-last, NCHW
    EXPECT_TRUE(has(cands[i].code.device_code, "notes[k] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC"))
        << cands[i].id;
    EXPECT_TRUE(has(cands[i].summary, "deterministic engines only")) << cands[i].summary;
  }
  // The choice is part of the cache key.
  auto key = [](egg::backend::Cudnn use) {
    for (const auto& [name, value] : ConvFamily(kData, use).key_inputs())
      if (name == "conv.cudnn") return value;
    return std::string();
  };
  EXPECT_EQ(key(egg::backend::Cudnn::any_engine), "any engine");
  EXPECT_EQ(key(egg::backend::Cudnn::deterministic_engines), "deterministic engines");
  EXPECT_EQ(key(egg::backend::Cudnn::absent), "absent");
}

TEST(Conv, CudnnChannelsLastHasTheLayoutChangeInTheCall) {
  auto cands = cudnn_structures_of(resnet());
  ASSERT_GE(cands.size(), 3u);
  const Candidate nhwc = cands[0];  // channels-last first: a pass follows cuDNN
  EXPECT_EQ(nhwc.id, "conv.cudnn.fwd.nhwc:a0:p256:v");
  EXPECT_EQ(nhwc.params["layout"], "nhwc");
  const auto& d = nhwc.code.device_code;
  // x [32, 64, 56, 56] stored N, H, W, C; the filter in NHWC too.
  EXPECT_TRUE(has(
      d,
      "const std::int64_t x_dims[] = { 32, 64, 56, 56 }, x_strides[] = { 200704, 1, 3584, 64 };"))
      << d;
  EXPECT_TRUE(has(d, "w_strides[] = { 576, 1, 192, 64 }"));  // the filter channels-last too
  EXPECT_TRUE(has(d, "egg_k_swap(xt, a.x + x_off, 32, 64, 3136, stream)")) << d;
  EXPECT_TRUE(has(d, "egg_k_swap(wt, a.conv_weight, 64, 64, 9, stream)")) << d;
  // Bias and ReLU follow: the epilogue pass reads cuDNN's channels-last result and transposes as
  // it goes (no separate transpose back).
  EXPECT_FALSE(has(d, "egg_k_swap(a.out0, yt")) << d;
  EXPECT_TRUE(has(d, "egg_k_dnn_epilogue_nhwc<<<")) << d;
  EXPECT_TRUE(has(d, "egg_k_epilogue(a, tile[i][j], (n * kC + c) * kSp + sp, int(c));")) << d;
  EXPECT_TRUE(has(d, "egg_k_kEpiSpan = 256;")) << d;  // 256 positions per channel a block first
  EXPECT_TRUE(has(d, "egg_k_kEpiVec = 4;")) << d;     // 16 bytes of channels a load
  EXPECT_TRUE(has(d, "egg_k_kChunks = 1, egg_k_kChunk = 32;")) << d;  // one call for the batch
  EXPECT_TRUE(has(d, "egg_k_kMaxWorkspace = 1073741824ull;")) << d;   // 1 GiB for small ones
  EXPECT_TRUE(has(d, "static_cast<const void*>(xt)")) << d;
  EXPECT_TRUE(has(d, "const int align_class = 0;"));  // the layout buffers are 256-byte aligned
  EXPECT_TRUE(has(nhwc.summary, "channels-last")) << nhwc.summary;
  // Stage 2 keeps the layout: the incumbent's tile, then 16 channels a block (positions fastest
  // in the grid), then 128 and 32 positions a lane a channel, then the ranks, then 64 positions.
  ConvFamily family(kData, egg::backend::Cudnn::any_engine);
  auto s = spec::parse_spec(resnet());
  const auto tunings = family.tunings(s, contract::derive(s, "k"), nhwc, "memory");
  ASSERT_GE(tunings.size(), 6u);
  EXPECT_EQ(tunings[0].id, "conv.cudnn.fwd.nhwc:a0:p256:v");
  EXPECT_EQ(tunings[1].id, "conv.cudnn.fwd.nhwc:a0:p256:v:c16");
  EXPECT_EQ(tunings[2].id, "conv.cudnn.fwd.nhwc:a0:p128");
  EXPECT_EQ(tunings[3].id, "conv.cudnn.fwd.nhwc:a0");
  EXPECT_EQ(tunings[4].id, "conv.cudnn.fwd.nhwc:a1:p256:v");
  EXPECT_EQ(tunings.back().id, "conv.cudnn.fwd.nhwc:a0:p64:v");
  EXPECT_EQ(tunings[2].params["span"], 128);
  EXPECT_FALSE(tunings[3].params.contains("span"));  // 32, the default, left out of the params
  EXPECT_EQ(tunings[0].params["vload"], true);
  EXPECT_EQ(tunings[1].params["tile_c"], 16);
  const auto& c16 = tunings[1].code.device_code;
  EXPECT_TRUE(has(c16, "egg_k_kEpiTileC = 16;")) << c16;
  EXPECT_TRUE(has(c16, "egg_k_kEpiTileC == 16")) << c16;  // its grid: positions first
  EXPECT_TRUE(has(tunings[0].code.device_code, "egg_k_kEpiTileC = 32;"));
  // 16 channels a tile needs 16-byte loads.
  ConvParams bad = ConvParams::from_json(tunings[1].params);
  bad.vload = false;
  EXPECT_TRUE(has(conv_params_unsupported(std::get<ConvPlan>(plan_of(resnet())), bad).value_or(""),
                  "16 with 16-byte loads"));
  const auto& p128 = tunings[2].code.device_code;
  EXPECT_TRUE(has(p128, "egg_k_kEpiSpan = 128;")) << p128;
  EXPECT_TRUE(has(p128, "egg_k_kEpiVec = 1;")) << p128;
  EXPECT_TRUE(has(p128, "unsigned((egg_k_geo::OSP + egg_k_kEpiSpan - 1) / egg_k_kEpiSpan)"))
      << p128;
  EXPECT_TRUE(has(tunings[0].code.device_code, "egg_k_kEpiVec = 4;"));  // 4 fp32 channels a load
  EXPECT_TRUE(has(tunings[0].code.device_code, "egg_k_kEpiSpan = 256;"));
  if (const auto nvcc = egg::testing::real_nvcc()) {
    for (const auto* t : {&tunings[0], &tunings[1], &tunings[2], &tunings.back()})
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, contract::derive(s, "k"), *t), "")
          << t->id;
  }
  EXPECT_FALSE(family.fallback(s, contract::derive(s, "k"), nhwc).has_value());
}

// 16 x 64 x 1024 x 1024 through a 1x1 convolution to 128 channels: the output has 2^31 elements,
// past cuDNN's int indexing, so the batch runs as two calls of 8 (as PyTorch splits it).
json pointwise_2g(const std::string& out_node = "conv") {
  // json::array(): a braced single json is a copy under clang, an array under g++.
  json nodes = json::array({node("conv", "conv2d", {ref("x"), ref("conv.weight")},
                                 conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), {16, 128, 1024, 1024}, 6)});
  if (out_node == "relu")
    nodes.push_back(node("relu", "relu", {ref("conv")}, json::object(), {16, 128, 1024, 1024}, 7));
  return spec_of({tensor("x", {16, 64, 1024, 1024})}, {param("conv.weight", {128, 64, 1, 1})},
                 nodes, out_node, {16, 128, 1024, 1024});
}

TEST(Conv, CudnnSplitsABatchPastTwoToTheThirtyOneElements) {
  for (const std::string out : {"conv", "relu"}) {
    const auto cands = cudnn_structures_of(pointwise_2g(out));
    ASSERT_GE(cands.size(), 3u) << out;
    // 128 output channels: cuDNN's two layouts first (the tiled kernel later: it would read the
    // input once per 64 channels).
    // With the ReLU (a pass after cuDNN), channels-last first and the implicit GEMM second.
    const std::size_t nchw = out == "conv" ? 0 : 2, nhwc = out == "conv" ? 1 : 0;
    ASSERT_EQ(cands[nchw].id, "conv.cudnn.fwd:a0");
    ASSERT_EQ(cands[nhwc].id,
              out == "conv" ? "conv.cudnn.fwd.nhwc:a0" : "conv.cudnn.fwd.nhwc:a0:p256:v");
    for (const std::size_t i : {nchw, nhwc}) {
      const auto& d = cands[i].code.device_code;
      EXPECT_TRUE(has(d, "egg_k_kChunks = 2, egg_k_kChunk = 8;")) << d;
      EXPECT_TRUE(has(d, "egg_k_kXStep = 536870912, egg_k_kYStep = 1073741824;")) << d;
      EXPECT_TRUE(has(d, "const std::int64_t x_dims[] = { 8, 64, 1024, 1024 }")) << d;
      EXPECT_TRUE(has(d, "y_dims[] = { 8, 128, 1024, 1024 }")) << d;
      // 12 GiB of tensors: a plan may ask for up to 16 GiB of workspace.
      EXPECT_TRUE(has(d, "egg_k_kMaxWorkspace = 17179869184ull;")) << d;
    }
    // NCHW: each call at its chunk's offset, alignment judged at every offset.
    EXPECT_TRUE(has(cands[nchw].code.device_code, "static_cast<const void*>(a.x + x_off)"));
    EXPECT_TRUE(has(cands[nchw].code.device_code, "egg_k_align_class(a.x, a.conv_weight, a.out0)"));
    // Channels-last: the layout buffers hold one chunk; the result goes back per chunk.
    const auto& d = cands[nhwc].code.device_code;
    EXPECT_TRUE(has(d, "egg_k_swap(xt, a.x + x_off, 8, 64, 1048576, stream)")) << d;
    if (out == "conv")
      EXPECT_TRUE(has(d, "egg_k_swap(a.out0 + y_off, yt, 8, 1048576, 128, stream)")) << d;
    else
      EXPECT_TRUE(has(d, "(a, yt, egg_k_idx(k * egg_k_kChunk))")) << d;
  }
}

TEST(Conv, CudnnRanksAreStageTwosTuningSpace) {
  ConvFamily family(kData, egg::backend::Cudnn::any_engine);
  auto s = spec::parse_spec(resnet());
  const auto c = contract::derive(s, "k");
  const auto nchw = with_id(family.structures(s, c), "conv.cudnn.fwd:a0");
  const auto tunings = family.tunings(s, c, nchw, "memory");
  ASSERT_EQ(tunings.size(), static_cast<size_t>(kCudnnRanksTuned - 1));  // rank 0 ran in stage 1
  for (size_t i = 0; i < tunings.size(); ++i) {
    EXPECT_EQ(tunings[i].id, "conv.cudnn.fwd:a" + std::to_string(i + 1));
    EXPECT_EQ(tunings[i].params["algo"], static_cast<int>(i + 1));
    EXPECT_TRUE(
        has(tunings[i].code.device_code, "if (rank++ != " + std::to_string(i + 1) + ") continue;"));
    EXPECT_TRUE(has(tunings[i].summary, "engine configuration #" + std::to_string(i + 1)));
  }
  // A rank the heuristic does not reach fails at run time; the incumbent stands (no repair).
  EXPECT_FALSE(family.fallback(s, c, tunings[3]).has_value());
  ASSERT_TRUE(family.fallback(s, c, nchw).has_value());  // rank 0 failing: EGG's own kernel
}

// cuDNN's ranked candidates compile with the real nvcc (and cuDNN's header): forward with the
// bias/ReLU pass, and backward-data for the transposed convolution.
TEST(Conv, CudnnCandidatesCompileWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  if (!toolchain::find_cudnn("", *nvcc)) GTEST_SKIP() << "no cuDNN beside " << nvcc->string();
  ConvFamily family(kData, egg::backend::Cudnn::any_engine);
  for (const auto& j : {resnet(), grouped_transpose()}) {
    auto s = spec::parse_spec(j);
    const auto c = contract::derive(s, "k");
    const auto cands = family.structures(s, c);
    ASSERT_GE(cands.size(), 3u);
    // Channels-last: first for the forward convolution with its pass, third after the gather
    // kernel for the transposed one.
    const auto& nhwc = cands[j == resnet() ? 0 : 2];
    ASSERT_EQ(nhwc.params["layout"], "nhwc");
    const auto tunings = family.tunings(s, c, nhwc, "memory");  // channels-last ranks
    ASSERT_FALSE(tunings.empty());
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, tunings.back()), "");
  }
  // NCHW, with the bias/ReLU pass.
  auto s = spec::parse_spec(resnet());
  const auto c = contract::derive(s, "k");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c,
                                             with_id(family.structures(s, c), "conv.cudnn.fwd:a0")),
            "");
}

TEST(Conv, CudnnTransposedRunsBackwardDataAndFp16AccumulatesInFloat) {
  auto cands = cudnn_structures_of(grouped_transpose());
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[1].id, "conv.cudnn.bwd_data:a0");
  const auto& d = cands[1].code.device_code;
  EXPECT_TRUE(has(d, "CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR"));
  // dy is the op's input, dx its output; groups follow from the channels ([C_in, C_out/groups,
  // k, k] as PyTorch's weight).
  EXPECT_TRUE(
      has(d, "CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x"))
      << d;
  EXPECT_TRUE(has(d, "w_dims[] = { 16, 4, 3, 3 }"));
  EXPECT_FALSE(has(d, "_dnn_epilogue<<<"))
      << d;  // no bias, no epilogue: cuDNN's result is the output

  auto half = cudnn_structures_of(resnet("float16"));
  ASSERT_GE(half.size(), 2u);
  EXPECT_TRUE(has(half[1].code.device_code,
                  "data_type = CUDNN_DATA_HALF, compute_type = CUDNN_DATA_FLOAT"));
}

// ---- the tiled structure (a short reduction) --------------------------------------------------

// conv2d 8 → 64, 3x3, no padding, bias, then leaky_relu: a 72-long reduction, a large output.
json thin(int cin = 8, int width = 128, int cout = 64) {
  const int ow = width - 2;
  return spec_of({tensor("x", {16, cin, width, width})},
                 {param("c.weight", {cout, cin, 3, 3}), param("c.bias", {cout})},
                 {node("c", "conv2d", {ref("x"), ref("c.weight"), ref("c.bias")},
                       conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), {16, cout, ow, ow}, 5),
                  node("l", "leaky_relu", {ref("c")}, json::object(), {16, cout, ow, ow}, 6)},
                 "l", {16, cout, ow, ow});
}

// conv3d 3 → 32 in fp16, 3x3x3, stride 1x2x2, padding 1, no bias: an 81-long reduction.
json thin3d_half() {
  return spec_of(
      {tensor("x", {2, 3, 8, 34, 34}, "float16")}, {param("c.weight", {32, 3, 3, 3, 3}, "float16")},
      {node("c", "conv3d", {ref("x"), ref("c.weight"), none()},
            conv_attrs({1, 2, 2}, {1, 1, 1}, {1, 1, 1}, 1), {2, 32, 8, 17, 17}, 5, "float16")},
      "c", {2, 32, 8, 17, 17}, "float16");
}

TEST(Conv, AShortReductionRunsTheTiledKernelFirst) {
  auto cands = structures_of(thin());
  ASSERT_GE(cands.size(), 2u);
  // 126 outputs per row: 4 per lane; 16 x 126 / 4 rows x 1 W tile = 512 blocks of 4 rows would
  // not fill the GPU many times over, so a row per block.
  EXPECT_EQ(cands[0].id, "conv.tiled:b256:o4:c8:r1");
  EXPECT_EQ(cands[1].id.rfind("conv.igemm", 0), 0u) << cands[1].id;
  const auto& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int WARPS = 8, CO = 8, OPT = 4, ROWS = 1;")) << d;
  // 16 x 1 x 1 x 1 x 126 x 1 blocks.
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_k_tc::kernel<<<2016, 256, 0, stream>>>(egg_a)"))
      << cands[0].code.launch_body;
  // A larger batch: 4 rows a block.
  auto big = thin(8, 256);
  big["inputs"][0]["shape"] = {64, 8, 256, 256};
  for (auto& n : big["nodes"]) n["shape"] = {64, 64, 254, 254};
  big["outputs"][0]["shape"] = {64, 64, 254, 254};
  EXPECT_EQ(structures_of(big)[0].id, "conv.tiled:b256:o4:c8:r4");
  // With cuDNN, a pass after it (bias, leaky_relu): the tiled kernel, then cuDNN channels-last
  // (measured faster than NCHW there), then NCHW.
  auto dnn = cudnn_structures_of(thin());
  ASSERT_GE(dnn.size(), 3u);
  EXPECT_EQ(dnn[0].id, "conv.tiled:b256:o4:c8:r1");
  EXPECT_EQ(dnn[1].id, "conv.cudnn.fwd.nhwc:a0:p256:v");
  EXPECT_EQ(dnn[2].id, "conv.cudnn.fwd:a0");
  // A reduction over 10 x 9 = 90 still tiles; 16 x 9 = 144 is for tensor cores.
  auto wide = structures_of(thin(10));
  ASSERT_FALSE(wide.empty());
  EXPECT_EQ(wide[0].id.rfind("conv.tiled:", 0), 0u) << wide[0].id;
  for (const auto& c : structures_of(thin(16)))
    EXPECT_EQ(c.id.find("tiled"), std::string::npos) << c.id;
  // 3 input channels without a bias or epilogue: tiled first (cuDNN pads so few channels); 8
  // without a pass: after the implicit GEMM.
  EXPECT_EQ(structures_of(thin3d_half())[0].id.rfind("conv.tiled:", 0), 0u);
  auto bare = thin();
  bare["params"] = json::array({bare["params"][0]});
  bare["nodes"] = json::array({bare["nodes"][0]});
  bare["nodes"][0]["args"][2] = none();
  bare["outputs"][0]["node"] = "c";
  auto later = structures_of(bare);
  ASSERT_GE(later.size(), 2u);
  EXPECT_EQ(later[0].id.rfind("conv.igemm", 0), 0u) << later[0].id;
  EXPECT_EQ(later[1].id.rfind("conv.tiled:", 0), 0u) << later[1].id;
  // Fewer output channels: the smallest tile that holds them (16: 4 warps of 4; 24 and 32: 8
  // warps of 4); 8 channels or 128 are not first.
  EXPECT_EQ(structures_of(thin(8, 128, 16))[0].id, "conv.tiled:b128:o4:c4:r1");
  EXPECT_EQ(structures_of(thin(8, 128, 24))[0].id, "conv.tiled:b256:o4:c4:r1");
  EXPECT_EQ(structures_of(thin(8, 128, 8))[0].id.find("tiled"), std::string::npos);
  EXPECT_EQ(structures_of(thin(8, 128, 128))[0].id.find("tiled"), std::string::npos);
  // Nor for depthwise (a channel a group: the tile's channels would idle) or transposed ones.
  for (const auto& j : {depthwise(), grouped_transpose()})
    for (const auto& c : structures_of(j)) EXPECT_EQ(c.id.find("tiled"), std::string::npos) << c.id;
}

TEST(Conv, TiledTuningVariesRowsOutputsAndChannels) {
  ConvFamily family(kData);
  auto s = spec::parse_spec(thin());
  const auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_FALSE(cands.empty());
  const auto tunings = family.tunings(s, c, cands[0], "memory");
  ASSERT_GE(tunings.size(), 2u);
  // After the incumbent (the pipeline skips what stage 1 measured), consecutive outputs a lane
  // first (stride and dilation 1 along W).
  EXPECT_EQ(tunings[0].id, cands[0].id);
  EXPECT_EQ(tunings[1].id, "conv.tiled:b256:o4:c8:r1:q");
  EXPECT_TRUE(has(tunings[1].code.device_code, "constexpr bool CONSEC = true;"));
  std::set<std::string> ids;
  for (const auto& t : tunings) ids.insert(t.id);
  for (const char* id :
       {"conv.tiled:b256:o4:c8:r2", "conv.tiled:b256:o4:c8:r8", "conv.tiled:b256:o2:c8:r1",
        "conv.tiled:b256:o4:c4:r1", "conv.tiled:b128:o4:c8:r1"})
    EXPECT_TRUE(ids.count(id)) << id;
  ConvParams q = ConvParams::from_json(cands[0].params);
  EXPECT_EQ(q.structure, "tiled");
  q.rows = 3;
  auto r = plan_of(thin());
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(r));
  EXPECT_TRUE(conv_params_unsupported(std::get<ConvPlan>(r), q).has_value());
  // Consecutive outputs need stride 1 along W and 4 outputs a lane.
  q = ConvParams::from_json(tunings[1].params);
  EXPECT_TRUE(q.consec);
  EXPECT_FALSE(conv_params_unsupported(std::get<ConvPlan>(r), q).has_value());
  q.opt = 2;
  EXPECT_TRUE(conv_params_unsupported(std::get<ConvPlan>(r), q).has_value());
  auto strided = plan_of(thin3d_half());
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(strided));
  q.opt = 4;
  EXPECT_TRUE(conv_params_unsupported(std::get<ConvPlan>(strided), q).has_value());
}

TEST(Conv, TiledCandidatesCompileWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  ConvFamily family(kData);
  for (const auto& j : {thin(), thin(10), thin3d_half(), thin(8, 128, 16)}) {
    auto s = spec::parse_spec(j);
    const auto c = contract::derive(s, "k");
    const auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty());
    ASSERT_EQ(cands[0].params["structure"], "tiled");
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
    // Stage 2's first variant: consecutive outputs a lane where the stride allows.
    const auto tunings = family.tunings(s, c, cands[0], "memory");
    ASSERT_GE(tunings.size(), 2u);
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, tunings[1]), "") << tunings[1].id;
  }
}

TEST(Conv, TransposedWithAPassRunsChannelsLastFirst) {
  // Without a bias or epilogue cuDNN's result is the output: the gather kernel first, then cuDNN
  // NCHW and channels-last (measurement decides).
  auto plain = cudnn_structures_of(grouped_transpose());
  ASSERT_GE(plain.size(), 3u);
  EXPECT_EQ(plain[0].id.rfind("conv.transpose", 0), 0u) << plain[0].id;
  EXPECT_EQ(plain[1].id, "conv.cudnn.bwd_data:a0");
  EXPECT_EQ(plain[2].id, "conv.cudnn.bwd_data.nhwc:a0");
  // With a bias and a tanh after it, a pass over the output runs anyway: channels-last first (its
  // epilogue pass transposes back), the gather kernel second, NCHW third.
  auto attrs = conv_attrs({2, 2}, {1, 1}, {1, 1}, 2);
  attrs["output_padding"] = {1, 1};
  auto biased = spec_of({tensor("x", {2, 16, 10, 10})},
                        {param("t.weight", {16, 4, 3, 3}), param("t.bias", {8})},
                        {node("t", "conv_transpose2d", {ref("x"), ref("t.weight"), ref("t.bias")},
                              attrs, {2, 8, 20, 20}, 5),
                         node("h", "tanh", {ref("t")}, json::object(), {2, 8, 20, 20}, 6)},
                        "h", {2, 8, 20, 20});
  auto cands = cudnn_structures_of(biased);
  ASSERT_GE(cands.size(), 3u);
  EXPECT_EQ(cands[0].id, "conv.cudnn.bwd_data.nhwc:a0:p256:v");
  EXPECT_EQ(cands[1].id.rfind("conv.transpose", 0), 0u) << cands[1].id;
  EXPECT_EQ(cands[2].id, "conv.cudnn.bwd_data:a0");
  const auto& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "_dnn_epilogue_nhwc<<<")) << d;  // one pass: epilogue and transpose back
  EXPECT_FALSE(has(d, "egg_k_swap(a.")) << d;         // the result is never swapped on its own
  // Stage 2 tries the pass with 128 positions a channel per block first; without a pass (the
  // plain transposed convolution) there is no span to tune.
  ConvFamily family(kData, egg::backend::Cudnn::any_engine);
  auto s = spec::parse_spec(biased);
  EXPECT_EQ(family.tunings(s, contract::derive(s, "k"), cands[0], "memory").at(0).id,
            "conv.cudnn.bwd_data.nhwc:a0:p256:v");
  auto ps = spec::parse_spec(grouped_transpose());
  for (const auto& t : family.tunings(ps, contract::derive(ps, "k"), plain[2], "memory"))
    EXPECT_FALSE(has(t.id, ":p")) << t.id;
}

// A transposed convolution of level 2's kind (64 → 64 channels, 4x4, stride 2, padding 1, then
// the bias and tanh): with cuDNN, its channels-last call first, then the implicit GEMM by output
// phase (NCHW in and out, no pass), the gather kernel, then NCHW. The phases: 4, each reached by
// 2x2 of the 16 taps.
TEST(Conv, TransposedImplicitGemmRunsByOutputPhase) {
  auto j = spec_of({tensor("x", {2, 64, 16, 16})},
                   {param("t.weight", {64, 64, 4, 4}), param("t.bias", {64})},
                   {node("t", "conv_transpose2d", {ref("x"), ref("t.weight"), ref("t.bias")},
                         conv_attrs({2, 2}, {1, 1}, {1, 1}, 1), {2, 64, 32, 32}, 5),
                    node("h", "tanh", {ref("t")}, json::object(), {2, 64, 32, 32}, 6)},
                   "h", {2, 64, 32, 32});
  const auto cands = cudnn_structures_of(j);
  ASSERT_GE(cands.size(), 4u);
  EXPECT_EQ(cands[0].id, "conv.cudnn.bwd_data.nhwc:a0:p256:v");
  EXPECT_EQ(cands[1].id, "conv.igemm.tf32:128x64x32:w4x2:s3");
  EXPECT_EQ(cands[2].id, "conv.transpose:b256:c4");
  EXPECT_EQ(cands[3].id, "conv.cudnn.bwd_data:a0");
  const auto& d = cands[1].code.device_code;
  EXPECT_TRUE(has(d, "constexpr bool TR = true;")) << d;
  EXPECT_TRUE(has(d, "constexpr int NPH = TR ? SD * SH * SW : 1;"));
  // The weight [CIN][COG][taps] read for [tap][c][co].
  EXPECT_TRUE(has(d, "((idx(g) * CG + c) * COG + co) * KVOL + tap"));
  EXPECT_TRUE(has(d, "egg_k_epilogue(a, acc[i][j][2 * h + e], (n * COUT + cof) * OSP + sp, cof);"));
  if (const auto nvcc = egg::testing::real_nvcc()) {
    auto s = spec::parse_spec(j);
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, contract::derive(s, "k"), cands[1]),
              "");
  }
  // With dilation it is not offered.
  const spec::Spec* s = nullptr;
  auto plan = std::get<ConvPlan>(plan_of(j, &s));
  const ConvParams q = ConvParams::from_json(cands[1].params);
  EXPECT_FALSE(conv_params_unsupported(plan, q).has_value());
  plan.dilation[1] = 2;
  EXPECT_TRUE(has(conv_params_unsupported(plan, q).value_or(""), "without dilation"));
}

TEST(Conv, CudnnIsNotOfferedForAsymmetricPadding) {
  // conv1d 'same' with an even kernel pads 1 left and 2 right: cuDNN's API pads both sides alike.
  auto same = spec_of({tensor("x", {4, 16, 100})}, {param("c.weight", {32, 16, 4})},
                      {node("c", "conv1d", {ref("x"), ref("c.weight"), none()},
                            conv_attrs(1, "same", 1, 1), {4, 32, 100}, 5)},
                      "c", {4, 32, 100});
  for (const auto& c : cudnn_structures_of(same))
    EXPECT_EQ(c.id.find("cudnn"), std::string::npos) << c.id;
  const spec::Spec* kept = nullptr;
  auto r = plan_of(same, &kept);
  ASSERT_TRUE(std::holds_alternative<ConvPlan>(r));
  ConvParams q;
  q.structure = "cudnn";
  auto why = conv_params_unsupported(std::get<ConvPlan>(r), q);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(*why, "asymmetric"));
}

// The channel reduction's kernel over cuDNN's result: a softmax over the channels takes its pixels
// 8 lanes a pixel with a tile of every channel x 32 pixels (48 KiB: up to 372 channels), up to 128
// pixels a block; a min or sum, and a softmax over more channels, a warp per 32 pixels, 256 a
// block. At most 8 blocks an SM, the grid striding over the rest.
TEST(Conv, ASoftmaxOverTheChannelsTakesAPixel8LanesAndWritesThroughATile) {
  ConvPlan p;
  p.c_out = 128;
  const std::int64_t pixels = std::int64_t{128} * 128 * 128;  // level2/91's 128 x 128 x 128
  EXPECT_FALSE(dnn_reduce_rows(p));
  p.reduction = ConvReduction{};
  EXPECT_FALSE(dnn_reduce_rows(p));  // a min or sum reads each pixel once, writes a value
  p.reduction->normalize = true;
  EXPECT_TRUE(dnn_reduce_rows(p));
  p.c_out = 372;
  EXPECT_TRUE(dnn_reduce_rows(p));
  p.c_out = 373;
  EXPECT_FALSE(dnn_reduce_rows(p));  // the tile past 48 KiB: staged twice
  EXPECT_EQ(dnn_reduce_grid(pixels, true), 132 * 8);
  EXPECT_EQ(dnn_reduce_grid(1000, true), 32);      // a small result: a block per 32 pixels
  EXPECT_EQ(dnn_reduce_grid(1000, true, 128), 8);  // or per span
  EXPECT_EQ(dnn_reduce_grid(1000, false), 4);      // or per 256
  EXPECT_EQ(dnn_reduce_grid(1, true), 1);
  // The tile's span: 128 pixels where every channel x 129 fits 100 KiB (198 channels), then 64
  // (387 would, but 48 KiB at 32 pixels bounds the rows kernel at 372), else 32.
  p.c_out = 128;
  EXPECT_EQ(dnn_rows_widest_span(p), 128);
  EXPECT_TRUE(dnn_rows_span_fits(p, 64));
  EXPECT_FALSE(dnn_rows_span_fits(p, 256));
  p.c_out = 198;
  EXPECT_EQ(dnn_rows_widest_span(p), 128);
  p.c_out = 199;
  EXPECT_EQ(dnn_rows_widest_span(p), 64);
  EXPECT_FALSE(dnn_rows_span_fits(p, 128));
}

}  // namespace
}  // namespace egg::backend::builtin
