// Cross-anchor fusion of a convolution and a reduction over its output channels or its spatial
// dims, or a pool: the planner's fused alternative (one kernel), proposed first in stage 1 beside
// the two-kernel plan, tuned in stage 2 within tiles that hold every channel, and what does not
// fuse (other dims, more channels than a tile, the reduction's indices, a transposed convolution,
// the spatial dims and pools without cuDNN).
#include <gtest/gtest.h>

#include <algorithm>

#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include "backend/builtin/builtin_backend.h"
#include "backend/builtin/conv.h"
#include "contract/contract.h"
#include "toolchain/cudnn.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::none;
using egg::testing::ref;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

struct Chain {
  int c_out = 64;
  std::string reduce = "min";  // the reduction's op
  json dim = 1;
  bool keepdim = true;
  bool indices = false;  // the graph returns the reduction's indices (getitem 1)
  std::string conv = "conv2d";
};

// conv2d 16 → c_out 3x3 over [4, 16, 34, 34], bias, * 2, the reduction (a (values, indices) tuple
// for max/min), tanh of its values: the shape of KernelBench's Conv2d_Scaling_Min chains.
json chain(const Chain& o) {
  const bool transposed = o.conv == "conv_transpose2d";
  const int sp = transposed ? 36 : 32;
  const json out_shape = {4, o.c_out, sp, sp};
  const bool tuple = o.reduce == "min" || o.reduce == "max";
  std::vector<int> dims;  // the reduced dims, last first
  for (const auto& d : o.dim.is_number_integer() ? json::array({o.dim}) : o.dim)
    dims.push_back(d.get<int>() < 0 ? d.get<int>() + 4 : d.get<int>());
  std::sort(dims.rbegin(), dims.rend());
  const bool softmax = o.reduce == "softmax" || o.reduce == "log_softmax";
  json red_shape = out_shape;  // a softmax: every element
  for (int d : dims) {
    if (!softmax && o.keepdim) red_shape[d] = 1;
    if (!softmax && !o.keepdim) red_shape.erase(d);
  }
  json attrs = {{"dim", o.dim}};
  if (!softmax) attrs["keepdim"] = o.keepdim;
  json red = node("red", o.reduce, {ref("mul")}, attrs, red_shape, 8);
  if (tuple) {
    red["result"] = "tuple";
    red["tuple"] = {{{"shape", red_shape}, {"dtype", "float32"}},
                    {{"shape", red_shape}, {"dtype", "int64"}}};
  }
  json nodes = {node("conv", o.conv, {ref("x"), ref("conv.weight"), ref("conv.bias")},
                     {{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}, {"groups", 1}},
                     out_shape, 6),
                node("mul", "mul", {ref("conv"), {{"scalar", 2.0}}}, json::object(), out_shape, 7),
                red};
  std::string value = "red";
  if (tuple) {
    nodes.push_back(node("values", "getitem", {ref("red"), {{"scalar", o.indices ? 1 : 0}}},
                         json::object(), red_shape, 8, o.indices ? "int64" : "float32"));
    value = "values";
  }
  if (!o.indices) {
    nodes.push_back(node("tanh", "tanh", {egg::testing::ref(value)}, json::object(), red_shape, 9));
    value = "tanh";
  }
  const json weight = transposed ? json{16, o.c_out, 3, 3} : json{o.c_out, 16, 3, 3};
  return {{"schema", 2},
          {"op_file", "/src/op.py"},
          {"model_class", "Model"},
          {"init_inputs", json::array()},
          {"inputs", {tensor("x", {4, 16, 34, 34})}},
          {"params",
           {tensor("conv.weight", weight, "float32", "parameter"),
            tensor("conv.bias", {o.c_out}, "float32", "parameter")}},
          {"nodes", nodes},
          {"outputs",
           {{{"name", "out0"},
             {"node", value},
             {"shape", red_shape},
             {"dtype", o.indices ? "int64" : "float32"}}}},
          {"deps", {"/src/op.py"}},
          {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

StageRequest request(const spec::Spec& s, const contract::Contract& c, const std::string& stage) {
  StageRequest r;
  r.spec = &s;
  r.contract = &c;
  r.stage = stage;
  r.bottleneck = "memory";
  return r;
}

// A spec, its contract and stage 1's proposals for it (the requests point at the first two, so
// they live here together).
struct StageOne {
  spec::Spec spec;
  contract::Contract contract;
  std::vector<Candidate> cands;
  StageOne(BuiltinBackend& backend, const json& j)
      : spec(spec::parse_spec(j)),
        contract(contract::derive(spec, "k")),
        cands(backend.propose(request(spec, contract, "stage1"))) {}
  StageOne(BuiltinBackend& backend, const Chain& o) : StageOne(backend, chain(o)) {}
};

TEST(ConvFusion, AChannelMinAfterAConvIsOneKernelProposedFirst) {
  BuiltinBackend backend(kData);
  const StageOne one(backend, Chain{});
  const auto& [s, c, cands] = one;
  const auto all = backend.plans(s);
  ASSERT_EQ(all.size(), 2u);
  ASSERT_EQ(all[0].segments.size(), 2u);  // the plan of its anchors: conv, then reduction
  EXPECT_EQ(all[0].segments[1].family->name(), "reduction");
  ASSERT_EQ(all[1].segments.size(), 1u);  // fused: one kernel, the intermediate never written
  EXPECT_EQ(all[1].segments[0].family->name(), "conv_reduce");
  EXPECT_EQ(all[1].segments[0].nodes,
            (std::vector<std::string>{"conv", "mul", "red", "values", "tanh"}));

  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "plan:conv.igemm.tf32:128x64x32:w4x2:s3:min_c");
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "EggRedMin egg_st;")) << code;
  EXPECT_TRUE(has(code, "egg_st.push(egg_x, co);"));
  // Bias and the scaling enter the reduction; tanh runs on its value, at the pixel's index.
  EXPECT_TRUE(has(code, "const float egg_e0 = (egg_r * 2.0f);")) << code;
  EXPECT_TRUE(has(code, "const float egg_q0 = tanhf(egg_v);")) << code;
  EXPECT_TRUE(has(code, "a.out0[egg_ro] ="));
  EXPECT_TRUE(has(code, "static_assert(G == 1 && BN >= COG"));
  // The two-kernel plan follows (the conv, then the column reduction of its result).
  EXPECT_TRUE(has(cands[1].id, "+reduction.reduce.col")) << cands[1].id;

  // Stage 2 tunes the fused kernel within tiles whose N side holds all 64 channels.
  auto r2 = request(s, c, "stage2");
  r2.incumbent = cands[0];
  const auto tuned = backend.propose(r2);
  ASSERT_GE(tuned.size(), 2u);
  for (const auto& t : tuned) {
    EXPECT_TRUE(has(t.id, ":min_c")) << t.id;
    EXPECT_TRUE(has(t.id, "x64x") || has(t.id, "x128x")) << t.id;
  }
  // The debug agent's fallback for a tuned variant stays on the fused kernel: its default tile.
  ASSERT_NE(tuned.back().id, cands[0].id);
  auto fixed = backend.repair(r2, tuned.back(), Failure{FailureClass::mismatch, "max abs error"});
  ASSERT_TRUE(fixed.has_value());
  EXPECT_EQ(fixed->id, cands[0].id);
}

// With cuDNN at hand the fused alternative runs cuDNN's convolution channels-last and reduces
// each pixel's contiguous row of channels in one pass (the full-size result never transposed
// back), and a budget of two measures it against the library route (cuDNN channels-last, whose
// pass applies the bias, then the column reduction; the implicit GEMM with the bias in its stores
// third). The implicit GEMM with the reduction in its epilogue follows later: on the H200 the
// WMMA one took 12.54 ms on level2/25 where cuDNN plus the reduction took 3.98.
TEST(ConvFusion, WithCudnnTheReductionReadsItsChannelsLastResult) {
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const StageOne one(backend, Chain{});
  const auto& [s, c, cands] = one;
  ASSERT_GE(cands.size(), 4u);
  EXPECT_EQ(cands[0].id, "plan:conv.cudnn.fwd.nhwc:a0:min_c");
  EXPECT_TRUE(has(cands[1].id, "plan:conv.cudnn.fwd.nhwc:a0:p256:v+reduction.")) << cands[1].id;
  EXPECT_TRUE(has(cands[2].id, "plan:conv.igemm.tf32:128x64x32:w4x2:s3+reduction.")) << cands[2].id;
  bool igemm_fused = false;
  for (const auto& cand : cands)
    igemm_fused = igemm_fused || cand.id == "plan:conv.igemm.tf32:128x64x32:w4x2:s3:min_c";
  EXPECT_TRUE(igemm_fused);
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "_dnn_reduce_nhwc<<<")) << code;
  EXPECT_FALSE(has(code, "_dnn_epilogue_nhwc")) << code;  // no transpose back
  EXPECT_TRUE(has(code, "EggRedMin egg_st;"));
  EXPECT_TRUE(has(code, "egg_st.push(egg_x, co);"));
  // 64 channels: every row 16-byte aligned, read 16 bytes a lane.
  EXPECT_TRUE(has(code, "reinterpret_cast<const float4*>(yt + (p0 + i + r) * kC + c0 + 4 * q)"))
      << code;
  EXPECT_TRUE(has(code, "const float egg_q0 = tanhf(egg_v);"));
  EXPECT_TRUE(has(code, "a.out0[egg_ro] ="));
  EXPECT_TRUE(has(cands[0].summary, "the reduction reads the channels-last result"))
      << cands[0].summary;

  // Stage 2 measures cuDNN's other engines, the reduction still fused.
  auto r2 = request(s, c, "stage2");
  r2.incumbent = cands[0];
  const auto tuned = backend.propose(r2);
  ASSERT_FALSE(tuned.empty());
  for (const auto& t : tuned) EXPECT_TRUE(has(t.id, "conv.cudnn.fwd.nhwc:a")) << t.id;
  for (const auto& t : tuned) EXPECT_TRUE(has(t.id, ":min_c")) << t.id;

  // It compiles, and so does the softmax's pass (8 lanes a pixel, written through a tile).
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc || !toolchain::find_cudnn("", *nvcc)) return;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  Chain o;
  o.reduce = "softmax";
  o.c_out = 30;  // rows not 16-byte aligned: 8 lanes a pixel read channels q, q + 8, ..
  const StageOne softmax(backend, o);
  const auto& soft = softmax.cands;
  ASSERT_FALSE(soft.empty());
  // Its tile spans 128 pixels of every channel (runs of 128 positions a channel in the stores).
  EXPECT_EQ(soft[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p128:softmax_c");
  const std::string& sd = soft[0].code.device_code;
  EXPECT_TRUE(has(sd, "_kRowChannels = (")) << sd;
  EXPECT_TRUE(has(sd, "_kRowSpan = 128;")) << sd;
  EXPECT_TRUE(has(sd, "egg_to_float(yt[p * kC + co])")) << sd;
  EXPECT_TRUE(has(sd, "egg_st.shfl_merge(4);")) << sd;
  EXPECT_TRUE(has(sd, "tile(co, g + slot) = ")) << sd;
  EXPECT_TRUE(has(sd, "(a, tile(co, g + lane), (n * kC + co) * kSp + sp);")) << sd;
  EXPECT_FALSE(has(sd, "every element again")) << sd;
  EXPECT_TRUE(has(soft[0].code.launch_body + sd, "_dnn_reduce_nhwc<<<")) << sd;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, softmax.contract, soft[0]), "");
  // Stage 2 tries the other spans first.
  auto r3 = request(softmax.spec, softmax.contract, "stage2");
  r3.incumbent = soft[0];
  const auto spans = backend.propose(r3);
  ASSERT_GE(spans.size(), 2u);
  EXPECT_EQ(spans[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p64:softmax_c");
  EXPECT_EQ(spans[1].id, "plan:conv.cudnn.fwd.nhwc:a0:softmax_c");
  // Rows 16-byte aligned (fp32, channels a multiple of 4): lane q reads channels 4q..4q+3 of
  // every 32 with one 16-byte load; 128 channels x 129 pixels of tile in dynamic shared memory.
  o.c_out = 128;
  const StageOne wide(backend, o);
  ASSERT_FALSE(wide.cands.empty());
  EXPECT_EQ(wide.cands[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p128:softmax_c");
  const std::string& wd = wide.cands[0].code.device_code;
  EXPECT_TRUE(has(wd, "*reinterpret_cast<const float4*>(yt + p * kC + c0)")) << wd;
  EXPECT_TRUE(has(wd, "cudaFuncAttributeMaxDynamicSharedMemorySize")) << wd;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, wide.contract, wide.cands[0]), "");
}

TEST(ConvFusion, MeanOverManyChannelsTakesTheWideTile) {
  Chain o;
  o.c_out = 128;
  o.reduce = "mean";
  o.dim = json::array({1});
  o.keepdim = false;
  BuiltinBackend backend(kData);
  const StageOne one(backend, o);
  const auto& [s, c, cands] = one;
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].id, "plan:conv.igemm.tf32:128x128x32:w2x4:s3:mean_c");
  EXPECT_TRUE(has(cands[0].code.device_code, "(egg_st.v / 128.0f)")) << cands[0].code.device_code;
}

TEST(ConvFusion, ASoftmaxOverTheChannelsRewritesEveryElementFromTheirState) {
  Chain o;
  o.reduce = "softmax";
  o.c_out = 32;
  BuiltinBackend backend(kData);
  const StageOne one(backend, o);
  const auto& [s, c, cands] = one;
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(cands[0].id, "plan:conv.igemm.tf32:128x32x32:w4x1:s3:softmax_c");
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "EggRedSoftmax egg_st;")) << code;
  EXPECT_TRUE(has(code, "(expf(egg_x - egg_st.m) / egg_st.s), (n * COUT + co) * OSP + sp);"))
      << code;
  const auto nvcc = egg::testing::real_nvcc();
  if (nvcc) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  }
}

TEST(ConvFusion, OnlyAReductionOverTheChannelsOfOneTileOrOfCudnnsResultFuses) {
  BuiltinBackend backend(kData);
  auto fused = [&](const Chain& o) {
    const auto s = spec::parse_spec(chain(o));
    return backend.plans(s).size() > 1;
  };
  EXPECT_TRUE(fused({}));
  Chain other_dim;
  other_dim.dim = 2;
  EXPECT_FALSE(fused(other_dim));  // a spatial dim: the column reduction's own kernel
  Chain wide;
  wide.c_out = 256;
  EXPECT_FALSE(fused(wide));  // more channels than one tile (without cuDNN)
  Chain indices;
  indices.indices = true;
  EXPECT_FALSE(fused(indices));  // argmin's indices are not the reducer's value
  Chain transposed;
  transposed.conv = "conv_transpose2d";
  EXPECT_FALSE(fused(transposed));  // no implicit GEMM for transposed convolutions (nor cuDNN)

  // With cuDNN at hand its channels-last result feeds the reduction for any batched convolution:
  // more channels than a tile and transposed ones fuse too, on cuDNN alone.
  BuiltinBackend with_cudnn(kData, "default", Cudnn::any_engine);
  for (const Chain& o : {wide, transposed}) {
    const StageOne one(with_cudnn, o);
    const auto& [s, c, cands] = one;
    ASSERT_EQ(with_cudnn.plans(s).size(), 2u);
    ASSERT_FALSE(cands.empty());
    EXPECT_TRUE(has(cands[0].id, ".nhwc:a0:min_c")) << cands[0].id;
    for (const auto& cand : cands)
      EXPECT_FALSE(has(cand.id, "igemm.tf32:128x128x32:w2x4:s3:min")) << cand.id;
    const auto nvcc = egg::testing::real_nvcc();
    if (o.conv == "conv_transpose2d" && nvcc && toolchain::find_cudnn("", *nvcc)) {
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
    }
  }

  // The conv family alone still refuses the reduction (a whole-op check plans two kernels).
  ConvFamily plain(kData);
  EXPECT_TRUE(plain.cannot_implement(spec::parse_spec(chain({}))).has_value());
}

// A global pooling after a convolution (lowered to the mean over the spatial dims) with cuDNN at
// hand: cuDNN's channels-last result read along the channels, a column per channel, the positions
// split into spans whose states a second pass merges; never the implicit GEMM, never without
// cuDNN (its tile holds a few pixels of each channel, not all of them).
// Checks stage 1 of `one` (a convolution and a second anchor, proposed by `backend`, which has
// cuDNN at hand): no fused alternative without cuDNN, one with it, its first candidate `fused_id`
// first and the two-kernel plan (an id holding `two_kernel`) next.
void expect_fused_first(BuiltinBackend& backend, const StageOne& one, const std::string& fused_id,
                        const std::string& two_kernel) {
  BuiltinBackend plain(kData);
  EXPECT_EQ(plain.plans(one.spec).size(), 1u);  // no fused alternative without cuDNN
  EXPECT_EQ(backend.plans(one.spec).size(), 2u);
  ASSERT_GE(one.cands.size(), 2u);
  EXPECT_EQ(one.cands[0].id, fused_id);
  EXPECT_TRUE(has(one.cands[1].id, two_kernel)) << one.cands[1].id;  // the two-kernel plan next
}

TEST(ConvFusion, AReductionOverTheSpatialDimsReadsCudnnsChannelsLastColumns) {
  Chain o;
  o.reduce = "mean";
  o.dim = json::array({-2, -1});
  // Without cuDNN no fused alternative; the convolution's global mean as a product with the
  // input's window sums (algebra_conv.h) is a plan either way.
  BuiltinBackend plain(kData);
  EXPECT_EQ(plain.plans(spec::parse_spec(chain(o))).size(), 2u);

  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const StageOne one(backend, o);
  const auto& [s, c, cands] = one;
  ASSERT_EQ(backend.plans(s).size(), 3u);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "plan:conv.cudnn.fwd.nhwc:a0:mean_s");
  for (const auto& cand : cands)
    EXPECT_FALSE(has(cand.id, "igemm.tf32:128x64x32:w4x2:s3:mean")) << cand.id;
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "(egg_st.v / 1024.0f)")) << code;  // 32x32 positions
  EXPECT_TRUE(has(code, "egg_st.push(egg_x, sp);")) << code;
  // 64 channels in two groups of 32 over 4 batch entries: 8 spans of the 1024 positions fill the
  // grid's depth (a warp keeps 16 rows of a span), merged by the second pass.
  EXPECT_TRUE(has(code, "_kSpCb = 32, egg_k_s0_kSpSplits = 8;")) << code;
  EXPECT_TRUE(has(code, "_dnn_reduce_merge<<<")) << code;
  EXPECT_TRUE(has(code, "const float egg_q0 = tanhf(egg_v);"));
  EXPECT_TRUE(has(cands[0].summary, "over the spatial dims")) << cands[0].summary;
  // Stage 2 measures cuDNN's other engines, the reduction still fused.
  auto r2 = request(s, c, "stage2");
  r2.incumbent = cands[0];
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ".nhwc:a")) << t.id;
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ":mean_s")) << t.id;

  // Fewer than 32 channels: lanes over 16 of them, two positions a warp row; amax without keepdim.
  Chain thin = o;
  thin.c_out = 12;
  thin.reduce = "amax";
  thin.keepdim = false;
  const StageOne narrow(backend, thin);
  ASSERT_FALSE(narrow.cands.empty());
  EXPECT_EQ(narrow.cands[0].id, "plan:conv.cudnn.fwd.nhwc:a0:amax_s");
  EXPECT_TRUE(has(narrow.cands[0].code.device_code, "_kSpCb = 16,"))
      << narrow.cands[0].code.device_code;
  // A softmax over the spatial dims is not a plain reduction: not fused.
  Chain soft = o;
  soft.reduce = "softmax";
  EXPECT_EQ(backend.plans(spec::parse_spec(chain(soft))).size(), 1u);

  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc || !toolchain::find_cudnn("", *nvcc)) return;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, narrow.contract, narrow.cands[0]), "");
}

// conv2d 16 → 64 3x3 over [4, 16, 34, 34], bias, * 2 (node `mul`, line 7), then `after` (lines 8
// and 9), `extra` params beside the convolution's, and `out` of shape `out_shape` as the output.
json conv_mul_then(const json& after, const json& extra, const std::string& out,
                   const json& out_shape) {
  const json conv_shape = {4, 64, 32, 32};
  json params = {tensor("conv.weight", {64, 16, 3, 3}, "float32", "parameter"),
                 tensor("conv.bias", {64}, "float32", "parameter")};
  for (const auto& t : extra) params.push_back(t);
  json nodes = {
      node("conv", "conv2d", {ref("x"), ref("conv.weight"), ref("conv.bias")},
           {{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}, {"groups", 1}},
           conv_shape, 6),
      node("mul", "mul", {ref("conv"), {{"scalar", 2.0}}}, json::object(), conv_shape, 7)};
  for (const auto& n : after) nodes.push_back(n);
  return {
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs", {tensor("x", {4, 16, 34, 34})}},
      {"params", params},
      {"nodes", nodes},
      {"outputs", {{{"name", "out0"}, {"node", out}, {"shape", out_shape}, {"dtype", "float32"}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

// conv_mul_then's chain with a pool of the 32x32 result, then tanh of it.
json pool_chain(const std::string& op, json attrs, json pooled) {
  return conv_mul_then({node("pool", op, {ref("mul")}, std::move(attrs), pooled, 8),
                        node("tanh", "tanh", {ref("pool")}, json::object(), pooled, 9)},
                       json::array(), "tanh", pooled);
}

// A pool after a convolution with cuDNN at hand: one pass pools cuDNN's channels-last result, a
// row of channels per window element, through a shared-memory tile into NCHW (the full-size result
// never transposed back nor written), proposed first beside the two-kernel plan; never without
// cuDNN. The window's semantics are the pool family's: -inf padding and NaN for max, ATen's divisor
// for average.
TEST(ConvFusion, APoolAfterAConvReadsCudnnsChannelsLastResult) {
  const json max_attrs = {{"kernel_size", {2, 2}},
                          {"stride", {2, 2}},
                          {"padding", {0, 0}},
                          {"dilation", {1, 1}},
                          {"ceil_mode", false}};
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const StageOne max_one(backend, pool_chain("max_pool2d", max_attrs, {4, 64, 16, 16}));
  expect_fused_first(backend, max_one, "plan:conv.cudnn.fwd.nhwc:a0:max_pool2d", "+pool.max2d");
  const auto& [max_spec, c, cands] = max_one;
  ASSERT_GE(cands.size(), 2u);
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "_dnn_pool_nhwc<<<")) << code;
  EXPECT_FALSE(has(code, "_dnn_epilogue_nhwc")) << code;  // no transpose back
  EXPECT_TRUE(has(code, "acc = (egg_x > acc || egg_x != egg_x) ? egg_x : acc;")) << code;
  EXPECT_TRUE(has(code, "constexpr int kOD = 1, kOH = 16, kOW = 16;")) << code;
  EXPECT_TRUE(has(code, "const float egg_e0 = (egg_r * 2.0f);")) << code;  // before the pool
  EXPECT_TRUE(has(code, "const float egg_q0 = tanhf(egg_v);")) << code;    // after it
  EXPECT_TRUE(has(code, "a.out0[egg_ro] ="));
  EXPECT_TRUE(has(cands[0].summary, "the pool reads the channels-last result")) << cands[0].summary;
  auto r2 = request(max_spec, c, "stage2");
  r2.incumbent = cands[0];
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ".nhwc:a")) << t.id;
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ":max_pool2d")) << t.id;

  // Average pooling with padding, counting only the input's elements.
  const auto avg_spec = spec::parse_spec(pool_chain("avg_pool2d",
                                                    {{"kernel_size", {3, 3}},
                                                     {"stride", {2, 2}},
                                                     {"padding", {1, 1}},
                                                     {"ceil_mode", false},
                                                     {"count_include_pad", false},
                                                     {"divisor_override", nullptr}},
                                                    {4, 64, 16, 16}));
  const auto avg_c = contract::derive(avg_spec, "k");
  const auto avg = backend.propose(request(avg_spec, avg_c, "stage1"));
  ASSERT_FALSE(avg.empty());
  EXPECT_EQ(avg[0].id, "plan:conv.cudnn.fwd.nhwc:a0:avg_pool2d");
  EXPECT_TRUE(has(avg[0].code.device_code, "const int div = dn * hn * wn;"))
      << avg[0].code.device_code;
  EXPECT_TRUE(has(avg[0].code.device_code, "constexpr int kPD = 0, kPH = 1, kPW = 1;"));

  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc || !toolchain::find_cudnn("", *nvcc)) return;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, avg_c, avg[0]), "");
}

// conv_mul_then's chain with `norm` (its node, its params), then / 2.
json norm_chain(const json& norm, const json& norm_params) {
  const json out_shape = {4, 64, 32, 32};
  return conv_mul_then(
      {norm, node("div", "div", {ref("norm"), {{"scalar", 2.0}}}, json::object(), out_shape, 9)},
      norm_params, "div", out_shape);
}

json affine(const std::string& prefix) {
  return {tensor(prefix + ".weight", {64}, "float32", "parameter"),
          tensor(prefix + ".bias", {64}, "float32", "parameter")};
}

// A group, instance or batch norm with batch statistics after a convolution, with cuDNN at hand:
// the statistics come from cuDNN's channels-last result read along the channels (Welford states
// per batch entry, channel and span, merged per statistic in a fixed order), and the one pass
// that transposes the result back normalizes it, where the two-kernel plan transposes it back and
// then reads it twice more. With running statistics (eval mode) a per-channel map in cuDNN's pass,
// in either layout. Proposed first beside the two-kernel plan; never without cuDNN.
TEST(ConvFusion, ANormAfterAConvTakesItsStatisticsFromCudnnsChannelsLastResult) {
  const json out_shape = {4, 64, 32, 32};
  const json inorm =
      node("norm", "instance_norm", {ref("mul"), none(), none(), ref("in.weight"), ref("in.bias")},
           {{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}}, out_shape, 8);
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const StageOne in_one(backend, norm_chain(inorm, affine("in")));
  expect_fused_first(backend, in_one, "plan:conv.cudnn.fwd.nhwc:a0:p256:v:instance_norm", "+norm.");
  const auto& [in_spec, c, cands] = in_one;
  ASSERT_GE(cands.size(), 2u);
  const std::string& code = cands[0].code.device_code;
  EXPECT_TRUE(has(code, "EggRedWelford egg_st;")) << code;
  EXPECT_TRUE(has(code, "egg_st.push(egg_x, sp);")) << code;
  EXPECT_TRUE(has(code, "constexpr bool egg_k_s0_kSpFinal = false;")) << code;
  // 4 x 64 statistics, one per batch entry and channel.
  EXPECT_TRUE(has(code, "constexpr int egg_k_s0_kNormGroupC = 1;")) << code;
  EXPECT_TRUE(has(code, "constexpr bool egg_k_s0_kNormAcross = false;")) << code;
  EXPECT_TRUE(has(code, "constexpr std::size_t egg_k_s0_kStats = 256;")) << code;
  EXPECT_TRUE(has(code, "+ 9.99999975e-06f);")) << code;  // eps, as a float
  EXPECT_TRUE(has(code, "y *= egg_ldg(a.in_weight + c);")) << code;
  EXPECT_TRUE(has(code, "y += egg_ldg(a.in_bias + c);")) << code;
  EXPECT_TRUE(has(code, "const float egg_e0 = (egg_r * 2.0f);")) << code;  // before the norm
  EXPECT_TRUE(has(code, "const float egg_q0 = (egg_v / 2.0f);")) << code;  // after it
  EXPECT_TRUE(has(code, "_dnn_norm_stats<<<")) << code;
  EXPECT_TRUE(has(code, "_dnn_epilogue_nhwc<<<")) << code;
  EXPECT_FALSE(has(code, "_dnn_reduce_merge<<<")) << code;
  EXPECT_TRUE(has(cands[0].summary, "statistics read the channels-last result"))
      << cands[0].summary;
  auto r2 = request(in_spec, c, "stage2");
  r2.incumbent = cands[0];
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ".nhwc:a")) << t.id;
  for (const auto& t : backend.propose(r2)) EXPECT_TRUE(has(t.id, ":instance_norm")) << t.id;

  // Group norm: 8 groups of 8 channels per batch entry; no affine.
  const json gnorm = node("norm", "group_norm", {ref("mul"), none(), none()},
                          {{"num_groups", 8}, {"eps", 1e-5}}, out_shape, 8);
  const StageOne gn_one(backend, norm_chain(gnorm, json::array()));
  const auto& gn = gn_one.cands;
  ASSERT_FALSE(gn.empty());
  EXPECT_EQ(gn[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p256:v:group_norm");
  EXPECT_TRUE(has(gn[0].code.device_code, "constexpr int egg_k_s0_kNormGroupC = 8;"));
  EXPECT_TRUE(has(gn[0].code.device_code, "constexpr std::size_t egg_k_s0_kStats = 32;"));
  EXPECT_FALSE(has(gn[0].code.device_code, "y *= egg_to_float"));

  // Batch norm in training mode: one statistic per channel over every batch entry.
  json bn_params = affine("bn");
  bn_params.push_back(tensor("bn.running_mean", {64}, "float32", "buffer"));
  bn_params.push_back(tensor("bn.running_var", {64}, "float32", "buffer"));
  auto bnorm = [&](bool training) {
    return node("norm", "batch_norm",
                {ref("mul"), ref("bn.running_mean"), ref("bn.running_var"), ref("bn.weight"),
                 ref("bn.bias")},
                {{"training", training}, {"momentum", 0.1}, {"eps", 1e-3}}, out_shape, 8);
  };
  const StageOne bn_one(backend, norm_chain(bnorm(true), bn_params));
  const auto& bn = bn_one.cands;
  ASSERT_FALSE(bn.empty());
  EXPECT_EQ(bn[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm");
  EXPECT_TRUE(has(bn[0].code.device_code, "constexpr bool egg_k_s0_kNormAcross = true;"));
  EXPECT_TRUE(has(bn[0].code.device_code, "constexpr std::size_t egg_k_s0_kStats = 64;"));
  EXPECT_TRUE(has(bn[0].code.device_code, "+ 0.00100000005f);")) << bn[0].code.device_code;
  // Running statistics (eval mode): a per-channel map in cuDNN's pass, in either layout
  // (channels-last first), no statistics kernels.
  const StageOne eval_one(backend, norm_chain(bnorm(false), bn_params));
  const auto& [eval_spec, eval_c, eval] = eval_one;
  ASSERT_EQ(backend.plans(eval_spec).size(), 2u);
  ASSERT_GE(eval.size(), 2u);
  EXPECT_EQ(eval[0].id, "plan:conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm");
  const std::string& ecode = eval[0].code.device_code;
  EXPECT_TRUE(has(ecode,
                  "float y = (x - egg_ldg(a.bn_running_mean + c)) * "
                  "rsqrtf(egg_ldg(a.bn_running_var + c) + 0.00100000005f);"))
      << ecode;
  EXPECT_FALSE(has(ecode, "_dnn_norm_stats")) << ecode;
  EXPECT_FALSE(has(ecode, "EggRedWelford")) << ecode;
  EXPECT_TRUE(has(ecode, "_dnn_epilogue_nhwc<<<")) << ecode;
  // The fused plan in NCHW: cuDNN's result normalized in place by its pass.
  ConvFamily fusing(kData, Cudnn::any_engine, true);
  const auto eval_all = fusing.structures(eval_spec, eval_c);
  ASSERT_GE(eval_all.size(), 2u);
  EXPECT_EQ(eval_all[1].id, "conv.cudnn.fwd:a0:batch_norm");
  EXPECT_TRUE(
      has(eval_all[1].code.device_code,
          "_finish(a, egg_k_norm_apply(a, egg_k_epilogue(a, egg_to_float(a.out0[o]), o, co), "
          "co), o);"))
      << eval_all[1].code.device_code;
  // A layer norm over the last dim (32 positions): a slab of 32 positions x 64 channels per
  // block, affine tensors indexed by position; over the channels too it is refused.
  auto lnorm = [&](const json& ns) {
    return node("norm", "layer_norm", {ref("mul"), ref("ln.weight"), ref("ln.bias")},
                {{"normalized_shape", ns}, {"eps", 1e-5}}, out_shape, 8);
  };
  const json ln_params = {tensor("ln.weight", {32}, "float32", "parameter"),
                          tensor("ln.bias", {32}, "float32", "parameter")};
  const StageOne ln_one(backend, norm_chain(lnorm({32}), ln_params));
  const auto& ln = ln_one.cands;
  ASSERT_FALSE(ln.empty());
  EXPECT_EQ(ln[0].id, "plan:conv.cudnn.fwd.nhwc:a0:layer_norm");
  const std::string& lcode = ln[0].code.device_code;
  EXPECT_TRUE(has(lcode, "constexpr int egg_k_s0_kRowLen = 32;")) << lcode;
  EXPECT_TRUE(has(lcode, "y *= egg_ldg(a.ln_weight + l);")) << lcode;
  EXPECT_TRUE(has(lcode, "_dnn_norm_rows<<<dim3(unsigned(32), 1u,")) << lcode;  // 32 rows a plane
  EXPECT_FALSE(has(lcode, "_dnn_epilogue_nhwc<<<")) << lcode;
  const json ln_wide = {tensor("ln.weight", {64, 32, 32}, "float32", "parameter"),
                        tensor("ln.bias", {64, 32, 32}, "float32", "parameter")};
  const auto whole =
      fusing.cannot_implement(spec::parse_spec(norm_chain(lnorm({64, 32, 32}), ln_wide)));
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(has(whole->describe(), "trailing spatial dims")) << whole->describe();

  // A group norm whose groups do not divide the channels is refused with its line.
  const json bad = node("norm", "group_norm", {ref("mul"), none(), none()},
                        {{"num_groups", 5}, {"eps", 1e-5}}, out_shape, 8);
  const auto why = fusing.cannot_implement(spec::parse_spec(norm_chain(bad, json::array())));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "op.py:8:")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "num_groups")) << why->describe();

  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc || !toolchain::find_cudnn("", *nvcc)) return;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, gn_one.contract, gn[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, bn_one.contract, bn[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, eval_c, eval[0]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, eval_c, eval_all[1]), "");
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, ln_one.contract, ln[0]), "");
}

// Two convolutions, each with a batch norm in eval mode (a ResNet block's main path): the fused
// alternative merges both pairs at once, so that stage 1 measures the whole graph fused.
// Two conv + eval-mode batch norm + relu blocks; with `residual`, the second block's relu reads
// its norm plus the first block's output (a ResNet block's skip connection).
spec::Spec two_conv_blocks(bool residual) {
  const json shape = {4, 16, 32, 32};
  json params = json::array();
  json nodes = json::array();
  std::string value = "x";
  for (const std::string k : {"1", "2"}) {
    for (const std::string t : {"weight", "bias", "running_mean", "running_var"})
      params.push_back(tensor("bn" + k + "." + t, {16}, "float32", "buffer"));
    params.push_back(tensor("conv" + k + ".weight", {16, 16, 3, 3}, "float32", "parameter"));
    nodes.push_back(node(
        "conv" + k, "conv2d",
        {egg::testing::ref(value), egg::testing::ref("conv" + k + ".weight"), none()},
        {{"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}, {"groups", 1}}, shape, 6));
    nodes.push_back(
        node("bn" + k, "batch_norm",
             {egg::testing::ref("conv" + k), egg::testing::ref("bn" + k + ".running_mean"),
              egg::testing::ref("bn" + k + ".running_var"), egg::testing::ref("bn" + k + ".weight"),
              egg::testing::ref("bn" + k + ".bias")},
             {{"training", false}, {"momentum", 0.1}, {"eps", 1e-5}}, shape, 7));
    std::string normed = "bn" + k;
    if (residual && k == "2") {
      nodes.push_back(node("skip", "add", {egg::testing::ref(normed), egg::testing::ref("relu1")},
                           json::object(), shape, 8));
      normed = "skip";
    }
    nodes.push_back(
        node("relu" + k, "relu", {egg::testing::ref(normed)}, json::object(), shape, 9));
    value = "relu" + k;
  }
  return spec::parse_spec(
      {{"schema", 2},
       {"op_file", "/src/op.py"},
       {"model_class", "Model"},
       {"init_inputs", json::array()},
       {"inputs", {tensor("x", shape)}},
       {"params", params},
       {"nodes", nodes},
       {"outputs", {{{"name", "out0"}, {"node", value}, {"shape", shape}, {"dtype", "float32"}}}},
       {"deps", {"/src/op.py"}},
       {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}});
}

TEST(ConvFusion, EveryConvolutionWithItsNormFusesInOneAlternative) {
  const auto s = two_conv_blocks(false);
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const auto plans = backend.plans(s);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].segments.size(), 4u);  // conv, norm, conv, norm
  ASSERT_EQ(plans[1].segments.size(), 2u);  // both pairs fused
  for (const auto& seg : plans[1].segments) EXPECT_EQ(seg.family->name(), "conv_reduce");
  const auto c = contract::derive(s, "k");
  const auto cands = backend.propose(request(s, c, "stage1"));
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(
      cands[0].id,
      "plan:conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm+conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm");
}

// The second pair's epilogue reads a value of the first fused segment (the skip connection): the
// pairs still fuse in one alternative, the second segment reading the first's output buffer, and
// the plan compiles.
TEST(ConvFusion, APairReadingAnEarlierSegmentsValueFusesToo) {
  const auto s = two_conv_blocks(true);
  BuiltinBackend backend(kData, "default", Cudnn::any_engine);
  const auto plans = backend.plans(s);
  ASSERT_EQ(plans.size(), 2u);
  ASSERT_EQ(plans[1].segments.size(), 2u);
  for (const auto& seg : plans[1].segments) EXPECT_EQ(seg.family->name(), "conv_reduce");
  EXPECT_EQ(plans[1].segments[0].writes, std::vector<std::string>{"relu1"});
  const auto& reads = plans[1].segments[1].reads;
  EXPECT_NE(std::find(reads.begin(), reads.end(), "relu1"), reads.end());
  const auto& nodes = plans[1].segments[1].nodes;
  EXPECT_NE(std::find(nodes.begin(), nodes.end(), "skip"), nodes.end());
  const auto c = contract::derive(s, "k");
  const auto cands = backend.propose(request(s, c, "stage1"));
  ASSERT_FALSE(cands.empty());
  EXPECT_EQ(
      cands[0].id,
      "plan:conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm+conv.cudnn.fwd.nhwc:a0:p256:v:batch_norm");
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_plan_k_s1::k_s1_launch(egg_tmp_relu1, "))
      << cands[0].code.launch_body;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
  }
}

TEST(ConvFusion, TheFusedKernelCompilesWithNvcc) {
  const auto nvcc = egg::testing::real_nvcc();
  if (!nvcc) GTEST_SKIP() << "no nvcc";
  BuiltinBackend backend(kData);
  Chain o;
  o.reduce = "max";
  const StageOne one(backend, o);
  const auto& [s, c, cands] = one;
  ASSERT_FALSE(cands.empty());
  ASSERT_TRUE(has(cands[0].id, ":max_c")) << cands[0].id;
  EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cands[0]), "");
}

}  // namespace
}  // namespace egg::backend::builtin
