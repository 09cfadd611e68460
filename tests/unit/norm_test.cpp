// The norm family: can_implement, the rendered key lines of each norm and structure
// (FileCheck-style).
#include "backend/builtin/norm.h"

#include <gtest/gtest.h>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "emit/emit.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;
using egg::testing::none;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;

using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json node(const std::string& name, const std::string& op, json args, json attrs, json shape,
          const std::string& dtype = "float32", int line = 9) {
  return json{{"name", name},
              {"op", op},
              {"target", "torch." + op},
              {"args", as_list(args)},
              {"attrs", attrs},
              {"shape", shape},
              {"dtype", dtype},
              {"file", "/src/op.py"},
              {"line", line},
              {"code", op + "(...)"}};
}
// A spec around the given nodes; the output is the last node.
json make_spec(json inputs, json params, json nodes) { return spec_around(inputs, params, nodes); }

// gelu(LayerNorm(1024)(x)) on [64, 1024].
json layer_norm_gelu(const std::string& dtype = "float32", std::int64_t rows = 64,
                     std::int64_t len = 1024) {
  json shape = {rows, len};
  return make_spec({tensor("x", shape, dtype)},
                   {tensor("ln.weight", {len}, dtype, "parameter"),
                    tensor("ln.bias", {len}, dtype, "parameter")},
                   {node("ln", "layer_norm", {ref("x"), ref("ln.weight"), ref("ln.bias")},
                         {{"normalized_shape", {len}}, {"eps", 1e-5}}, shape, dtype, 8),
                    node("gelu", "gelu", {ref("ln")}, {{"approximate", "none"}}, shape, dtype, 9)});
}

// relu(BatchNorm2d(16)(x)) on [8, 16, 14, 14].
json batch_norm_relu(bool training) {
  json shape = {8, 16, 14, 14};
  return make_spec({tensor("x", shape)},
                   {tensor("bn.weight", {16}, "float32", "parameter"),
                    tensor("bn.bias", {16}, "float32", "parameter"),
                    tensor("bn.running_mean", {16}, "float32", "buffer"),
                    tensor("bn.running_var", {16}, "float32", "buffer"),
                    tensor("bn.num_batches_tracked", json::array(), "int64", "buffer")},
                   {node("bn", "batch_norm",
                         {ref("x"), ref("bn.running_mean"), ref("bn.running_var"), ref("bn.weight"),
                          ref("bn.bias")},
                         {{"training", training}, {"momentum", 0.1}, {"eps", 1e-5}}, shape),
                    node("relu", "relu", {ref("bn")}, json::object(), shape)});
}

Candidate first(const NormFamily& f, const json& j, const std::string& name = "k") {
  auto s = spec::parse_spec(j);
  auto why = f.cannot_implement(s);
  EXPECT_FALSE(why.has_value()) << why->describe();
  auto cands = f.structures(s, contract::derive(s, name));
  EXPECT_FALSE(cands.empty());
  return cands.front();
}

TEST(Norm, LayerNormRowHoldsTheRowAndFusesTheEpilogue) {
  NormFamily family(kData);
  auto cand = first(family, layer_norm_gelu(), "ln_gelu");
  const auto& code = cand.code.device_code;
  EXPECT_EQ(cand.params["structure"], "row");
  // 1024 / (64 * 4) = 4 vectors per thread; 64 rows leave SMs without a block, so 2 rows a block
  // (128 threads) rather than 4.
  EXPECT_TRUE(has(cand.id, "norm.row:t64:r2:v4")) << cand.id;
  EXPECT_TRUE(has(code, "constexpr IndexT D = 1024;")) << code;
  EXPECT_TRUE(has(code, "egg_load_vec<float, VEC>(x + i0)"));
  EXPECT_TRUE(has(code, "const float mean = egg_ln_gelu_row_sum<TPR, RPB>(sum, red) / float(D);"));
  EXPECT_TRUE(has(code, "const float d = v[k][j] - mean;"));  // two-pass variance in registers
  EXPECT_TRUE(has(code, "const float rstd = rsqrtf(var + 9.99999975e-06f);"));
  EXPECT_TRUE(has(code, "nv = nv * egg_to_float(ln_weight[col0 + j]);"));
  EXPECT_TRUE(has(code, "nv = nv + egg_to_float(ln_bias[col0 + j]);"));
  EXPECT_TRUE(has(code, "const float e0 = egg_gelu_erf(nv);"));
  EXPECT_TRUE(has(code, "egg_store_vec<float, VEC>(out0 + i0, out0_o);"));
  EXPECT_TRUE(has(cand.code.launch_body, "egg_ln_gelu_run<4>(x, ln_weight, ln_bias, out0, stream)"))
      << cand.code.launch_body;
  EXPECT_TRUE(has(cand.code.launch_body, "egg_ln_gelu_aligned(x) && egg_ln_gelu_aligned(out0)"));
}

TEST(Norm, SplitStructureIsTheSecondChoiceForRows) {
  NormFamily family(kData);
  auto s = spec::parse_spec(layer_norm_gelu());
  auto cands = family.structures(s, contract::derive(s, "k"));
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_EQ(cands[1].params["structure"], "split");
  const auto& code = cands[1].code.device_code;
  EXPECT_TRUE(has(code, "egg_k_partial_kernel")) << code;
  EXPECT_TRUE(has(code, "const IndexT s = i0 / 1024;"));
  // Four vectors' loads in flight a step, one merge of their values' mean and M2 per step.
  EXPECT_TRUE(has(code, "constexpr int kU = 4;")) << code;
  EXPECT_TRUE(has(code, "egg_load_vec<float, VEC>(x + i0);")) << code;
  EXPECT_TRUE(has(code, "egg_k_merge(n, mean, m2, egg_cn, cm, cm2);"));
  EXPECT_TRUE(has(code, "cudaMallocAsync"));
  EXPECT_TRUE(has(code, "cudaFreeAsync(ws, stream)"));
  // Rows of 1024: a thread an element, the affine weight read at its position.
  EXPECT_TRUE(has(code, "w_at[j] = egg_to_float(ln_weight[i0 % 1024 + j]);")) << code;
  EXPECT_TRUE(has(code, "nv = nv * w_at[j];")) << code;
  EXPECT_FALSE(has(code, "for (IndexT r = 0; r < R; ++r)")) << code;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, contract::derive(s, "k"), cands[1]),
              "");
  }
}

TEST(Norm, LongRowsReadTheAffineWeightsOnceForEveryRow) {
  // 16 rows of 2^22 (level 1's LayerNorm): where a thread an element reads the 32 MB of weight
  // and bias once a row, the normalizing kernel takes 4 positions a thread and walks the rows
  // at them, a grid over one row's positions.
  NormFamily family(kData);
  auto s = spec::parse_spec(layer_norm_gelu("float32", 16, std::int64_t(1) << 22));
  auto cands = family.structures(s, contract::derive(s, "k"));
  const Candidate* split = nullptr;
  for (const auto& c : cands)
    if (c.params["structure"] == "split") split = &c;
  ASSERT_NE(split, nullptr);
  const auto& code = split->code.device_code;
  EXPECT_TRUE(has(code, "constexpr IndexT D = 4194304, R = 16;")) << code;
  // A thread's positions p0.. (below D): the weights of row 0's elements, read once.
  EXPECT_TRUE(has(code, "affine(p0, w_at, b_at);")) << code;
  EXPECT_TRUE(has(code, "w_at[j] = egg_to_float(ln_weight[i0 % 4194304 + j]);")) << code;
  EXPECT_TRUE(has(code, "b_at[j] = egg_to_float(ln_bias[i0 % 4194304 + j]);")) << code;
  EXPECT_TRUE(has(code, "for (IndexT r = 0; r < R; ++r) elements(r * D + p0, w_at, b_at);"));
  EXPECT_TRUE(has(split->code.launch_body + code, "std::int64_t(4194304) / VEC")) << code;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, contract::derive(s, "k"), *split), "");
  }
}

TEST(Norm, RmsNormHalfUsesFloatEpsilonAndEightWideVectors) {
  json shape = {8, 4096};
  auto j = make_spec({tensor("x", shape, "float16")},
                     {tensor("norm.weight", {4096}, "float16", "parameter")},
                     {node("norm", "rms_norm", {ref("x"), ref("norm.weight")},
                           {{"normalized_shape", {4096}}, {"eps", nullptr}}, shape, "float16")});
  NormFamily family(kData);
  auto cand = first(family, j);
  const auto& code = cand.code.device_code;
  EXPECT_TRUE(has(code, "// RMS: the mean of squares")) << code;
  EXPECT_TRUE(has(code, "rsqrtf(egg_k_row_sum<TPR, RPB>(sq, red) / float(D) + 1.1920929e-07f)"));
  EXPECT_FALSE(has(code, "sum += v[k][j]"));
  EXPECT_TRUE(has(code, "egg_load_vec<__half, VEC>(x + i0)"));
  EXPECT_TRUE(has(code, "egg_from_float<__half>(out[0])"));
  EXPECT_TRUE(has(cand.code.launch_body, "egg_k_run<8>(")) << cand.code.launch_body;
}

TEST(Norm, GroupNormAffineIndexIsTheChannel) {
  json shape = {4, 64, 8, 8};
  auto j = make_spec({tensor("x", shape)},
                     {tensor("gn.weight", {64}, "float32", "parameter"),
                      tensor("gn.bias", {64}, "float32", "parameter")},
                     {node("gn", "group_norm", {ref("x"), ref("gn.weight"), ref("gn.bias")},
                           {{"num_groups", 8}, {"eps", 1e-5}}, shape)});
  NormFamily family(kData);
  auto s = spec::parse_spec(j);
  auto pb = family.plan(s);
  EXPECT_EQ(pb.seg_len, 8 * 64);
  EXPECT_EQ(pb.num_stats, 4 * 8);
  auto cands = family.structures(s, contract::derive(s, "k"));
  ASSERT_EQ(cands.size(), 2u);
  EXPECT_TRUE(has(cands[0].code.device_code, "egg_to_float(gn_weight[(row % 8) * 8 + col0 / 64])"))
      << cands[0].code.device_code;
  EXPECT_TRUE(has(cands[1].code.device_code, "egg_to_float(gn_weight[(i0 / 64) % 64])"));
  EXPECT_TRUE(has(cands[1].code.device_code, "const IndexT s = i0 / 512;"));
}

// GroupNorm on (N, C), as nn.GroupNorm takes it: one spatial element per channel, so a group's
// segment is its C / G channels. instance_norm still needs spatial dims.
TEST(Norm, GroupNormOfAnNByCInputHasOneElementPerChannel) {
  json shape = {64, 128};
  auto j = make_spec({tensor("x", shape)},
                     {tensor("gn.weight", {128}, "float32", "parameter"),
                      tensor("gn.bias", {128}, "float32", "parameter")},
                     {node("gn", "group_norm", {ref("x"), ref("gn.weight"), ref("gn.bias")},
                           {{"num_groups", 8}, {"eps", 1e-5}}, shape)});
  NormFamily family(kData);
  auto s = spec::parse_spec(j);
  ASSERT_FALSE(family.cannot_implement(s).has_value());
  auto pb = family.plan(s);
  EXPECT_EQ(pb.spatial, 1);
  EXPECT_EQ(pb.seg_len, 16);
  EXPECT_EQ(pb.num_stats, 64 * 8);
  EXPECT_FALSE(family.structures(s, contract::derive(s, "k")).empty());

  auto inorm =
      make_spec({tensor("x", shape)}, json::array(),
                {node("in", "instance_norm", {ref("x"), none(), none(), none(), none()},
                      {{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}}, shape)});
  auto why = family.cannot_implement(spec::parse_spec(inorm));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "with spatial dims")) << why->describe();
}

TEST(Norm, InstanceNormRowsArePerChannel) {
  json shape = {2, 16, 32, 32};
  auto j = make_spec({tensor("x", shape)},
                     {tensor("inorm.weight", {16}, "float32", "parameter"),
                      tensor("inorm.bias", {16}, "float32", "parameter")},
                     {node("inorm", "instance_norm",
                           {ref("x"), none(), none(), ref("inorm.weight"), ref("inorm.bias")},
                           {{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}}, shape)});
  NormFamily family(kData);
  auto cand = first(family, j);
  EXPECT_EQ(cand.params["structure"], "row");
  EXPECT_TRUE(has(cand.code.device_code, "egg_to_float(inorm_weight[row % 16])"))
      << cand.code.device_code;
  EXPECT_TRUE(has(cand.code.device_code, "constexpr IndexT ROWS = 32;"));
}

// Instance-norm rows of 256 K elements (1 MiB) do not fit in registers: they stay on chip in the
// shared memory of a cluster of 8 blocks (128 KiB each), read once; the launch falls back to the
// split structure's kernels where clusters are absent.
TEST(Norm, LongRowsStayOnChipInAClusterOfBlocks) {
  json shape = {8, 64, 512, 512};
  auto j = make_spec({tensor("x", shape)},
                     {tensor("inorm.weight", {64}, "float32", "parameter"),
                      tensor("inorm.bias", {64}, "float32", "parameter")},
                     {node("inorm", "instance_norm",
                           {ref("x"), none(), none(), ref("inorm.weight"), ref("inorm.bias")},
                           {{"use_input_stats", true}, {"momentum", 0.1}, {"eps", 1e-5}}, shape)});
  NormFamily family(kData);
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_EQ(cands.size(), 2u);
  const auto& cand = cands.front();
  EXPECT_EQ(cand.id, "norm.cluster:c8:b1024:v4");
  const std::string& d = cand.code.device_code;
  EXPECT_TRUE(has(d, "constexpr IndexT CHUNK = 32768;")) << d;
  EXPECT_TRUE(has(d, "egg_store_vec<float, VEC>(egg_buf + (col0 - egg_begin), egg_xv);"));
  EXPECT_TRUE(has(
      d, "const float mean = egg_k_cluster_sum(egg_acc, &egg_sum_slot, egg_cluster) / float(D);"));
  EXPECT_TRUE(has(
      d,
      "for (unsigned r = 0; r < 8u; ++r) egg_total += *egg_cluster.map_shared_rank(egg_slot, r);"));
  EXPECT_TRUE(has(d, "nv = nv * egg_to_float(inorm_weight[row % 64]);"));
  // Shared memory is read with plain loads (__ldg would fail there: invalid address space).
  EXPECT_TRUE(has(d, "egg_load_vec_shared<float, VEC>(egg_buf + (col0 - egg_begin))"));
  EXPECT_FALSE(has(d, "egg_load_vec<float, VEC>(egg_buf"));
  // 4096 blocks of 1024 threads in clusters of 8, 128 KiB of shared memory each (clusters.cuh's
  // launch).
  EXPECT_TRUE(
      has(d, "egg_launch_on_clusters(egg_k_cluster_kernel<VEC>, dim3(4096), dim3(1024), 131072,"))
      << d;
  EXPECT_TRUE(has(d, "8, false, stream, "));
  // Without clusters: the split structure at its prior.
  EXPECT_TRUE(has(d, "if (!egg_clusters_ok()) return egg_k_split_run<VEC>("));
  EXPECT_TRUE(has(d, "cudaError_t egg_k_split_run("));
  EXPECT_TRUE(has(d, "egg_k_partial_kernel<VEC><<<unsigned(kStats * kSplits), 256, 0, stream>>>"));
  EXPECT_EQ(cands[1].params["structure"], "split");
  // Stage 2: other cluster and block sizes, each within shared memory.
  auto tunes = family.tunings(s, c, cand, "memory");
  ASSERT_FALSE(tunes.empty());
  bool sixteen = false;
  for (const auto& t : tunes) {
    EXPECT_EQ(t.params["structure"], "cluster") << t.id;
    EXPECT_NE(t.params.value("cluster", 0), 4) << t.id;  // 256 KiB per block: too much
    if (t.params.value("cluster", 0) == 16) {
      sixteen = true;
      EXPECT_TRUE(has(t.code.device_code, "NonPortableClusterSizeAllowed")) << t.id;
    }
  }
  EXPECT_TRUE(sixteen);
  // Stage 2 from the split structure tries the row on chip in chunks of 64 KiB first (three
  // blocks per multiprocessor).
  auto from_split = family.tunings(s, c, cands[1], "memory");
  ASSERT_FALSE(from_split.empty());
  EXPECT_EQ(from_split.front().id, "norm.cluster:c16:b512:v4");
  EXPECT_TRUE(has(from_split.front().code.device_code, "dim3(512), 65536,"));
  // Batch norm's statistics are not contiguous rows: no cluster.
  auto problem = std::get<NormProblem>(family.analyze(s));
  NormParams p;
  p.structure = "cluster";
  p.cluster = 8;
  p.block = 1024;
  EXPECT_TRUE(norm_cluster_valid(problem, p, 4));
  problem.segments = 8;
  EXPECT_FALSE(norm_cluster_valid(problem, p, 4));
}

TEST(Norm, BatchNormTrainingUsesBatchStatisticsPerChannel) {
  NormFamily family(kData);
  auto s = spec::parse_spec(batch_norm_relu(true));
  ASSERT_FALSE(family.cannot_implement(s).has_value());
  auto pb = family.plan(s);
  EXPECT_FALSE(pb.running);
  EXPECT_EQ(pb.num_stats, 16);
  EXPECT_EQ(pb.stat_count(), 8 * 196);
  auto cands = family.structures(s, contract::derive(s, "bn"));
  ASSERT_EQ(cands.size(), 1u);  // statistics over non-contiguous runs: split only
  const auto& code = cands[0].code.device_code;
  EXPECT_EQ(cands[0].params["structure"], "split");
  EXPECT_TRUE(has(code, "constexpr IndexT L = 196;")) << code;
  EXPECT_TRUE(has(code, "constexpr IndexT SEG_STRIDE = 3136;"));
  EXPECT_TRUE(has(code, "const IndexT i0 = stat * L + (k / L) * SEG_STRIDE + k % L;"));
  EXPECT_TRUE(has(code, "const IndexT s = (i0 / 196) % 16;"));
  EXPECT_TRUE(has(code, "const float e0 = egg_relu(nv);"));
  EXPECT_FALSE(has(code, "bn_running_mean["));  // batch statistics, buffers untouched
  EXPECT_TRUE(has(cands[0].code.launch_body, "egg_bn_run<4>(x, bn_weight, bn_bias, out0, stream)"))
      << cands[0].code.launch_body;
}

TEST(Norm, BatchNormEvalUsesRunningStatistics) {
  NormFamily family(kData);
  auto cand = first(family, batch_norm_relu(false), "bn");
  EXPECT_EQ(cand.params["structure"], "pointwise");
  const auto& code = cand.code.device_code;
  EXPECT_TRUE(has(code, "const float mean = egg_to_float(bn_running_mean[c]);")) << code;
  EXPECT_TRUE(
      has(code, "const float rstd = rsqrtf(egg_to_float(bn_running_var[c]) + 9.99999975e-06f);"));
  EXPECT_FALSE(has(code, "cudaMallocAsync"));
}

TEST(Norm, PrologueAndBroadcastEpilogueFuse) {
  // gelu(layer_norm(x * 2 + y)) * scale + x, scale broadcast [1024].
  json shape = {64, 1024};
  auto j = make_spec({tensor("x", shape), tensor("y", shape)},
                     {tensor("scale", {1024}, "float32", "parameter")},
                     {node("mul", "mul", {ref("x"), {{"scalar", 2.0}}}, json::object(), shape),
                      node("add", "add", {ref("mul"), ref("y")}, json::object(), shape),
                      node("ln", "layer_norm", {ref("add"), none(), none()},
                           {{"normalized_shape", {1024}}, {"eps", 1e-6}}, shape),
                      node("gelu", "gelu", {ref("ln")}, {{"approximate", "tanh"}}, shape),
                      node("mul_1", "mul", {ref("gelu"), ref("scale")}, json::object(), shape),
                      node("add_1", "add", {ref("mul_1"), ref("x")}, json::object(), shape)});
  NormFamily family(kData);
  auto cand = first(family, j);
  const auto& code = cand.code.device_code;
  EXPECT_TRUE(has(code, "egg_k_prologue(float a0, float a1, int)")) << code;
  EXPECT_TRUE(has(code, "const float t0 = (a0 * 2.0f);"));
  EXPECT_TRUE(has(code, "const float t1 = (t0 + 1.0f * a1);"));
  EXPECT_TRUE(has(code, "return t1;"));
  EXPECT_TRUE(has(code, "const float e0 = egg_gelu_tanh(nv);"));
  EXPECT_TRUE(has(code, "const float e1 = (e0 * a2);"));
  EXPECT_TRUE(has(code, "const float e2 = (e1 + 1.0f * a0);"));
  EXPECT_TRUE(has(code, "egg_to_float(scale[(i % 1024)])"));
  EXPECT_TRUE(has(code, "rsqrtf(var + 9.99999997e-07f)"));
  EXPECT_FALSE(has(code, "nv = nv * egg_to_float("));  // no affine
}

TEST(Norm, RejectsWithOpAndLine) {
  NormFamily family(kData);
  {  // an unsupported op in the epilogue
    auto j = layer_norm_gelu();
    j["nodes"][1]["op"] = "cumsum";
    j["nodes"][1]["target"] = "torch.cumsum";
    j["nodes"][1]["line"] = 14;
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->where().line, 14);
    EXPECT_TRUE(has(why->describe(), "torch.cumsum")) << why->describe();
  }
  {  // two norms
    auto j = layer_norm_gelu();
    j["nodes"][1] = node("ln2", "layer_norm", {ref("ln"), none(), none()},
                         {{"normalized_shape", {1024}}, {"eps", 1e-5}}, {64, 1024}, "float32", 11);
    j["outputs"][0]["node"] = "ln2";
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->where().line, 11);
    EXPECT_TRUE(has(why->describe(), "second norm")) << why->describe();
  }
  {  // normalized_shape that is not the trailing dims
    auto j = layer_norm_gelu();
    j["nodes"][0]["attrs"]["normalized_shape"] = {64};
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->where().line, 8);
    EXPECT_TRUE(has(why->describe(), "normalized_shape")) << why->describe();
  }
  {  // group_norm with groups not dividing C
    json shape = {4, 10, 8, 8};
    auto j = make_spec({tensor("x", shape)}, json::array(),
                       {node("gn", "group_norm", {ref("x"), none(), none()},
                             {{"num_groups", 4}, {"eps", 1e-5}}, shape)});
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_TRUE(has(why->describe(), "num_groups")) << why->describe();
  }
  {  // float64
    auto j = layer_norm_gelu("float64");
    EXPECT_TRUE(family.cannot_implement(spec::parse_spec(j)).has_value());
  }
  {  // no norm at all: the element-wise family explains better (line 0)
    auto j = layer_norm_gelu();
    j["nodes"].erase(0);
    j["nodes"][0]["args"][0]["node"] = "x";
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_EQ(why->where().line, 0);
  }
  {  // eval-mode batch norm without running statistics
    auto j = batch_norm_relu(false);
    j["nodes"][0]["args"][1] = none();
    auto why = family.cannot_implement(spec::parse_spec(j));
    ASSERT_TRUE(why.has_value());
    EXPECT_TRUE(has(why->describe(), "running_mean")) << why->describe();
  }
}

TEST(Norm, BuiltinBackendPicksTheNormFamily) {
  BuiltinBackend backend(kData);
  auto s = spec::parse_spec(layer_norm_gelu());
  EXPECT_NO_THROW(backend.check_supported(s));
  auto c = contract::derive(s, "k");
  StageRequest req;
  req.spec = &s;
  req.contract = &c;
  req.stage = "stage1";
  auto cands = backend.propose(req);
  ASSERT_FALSE(cands.empty());
  EXPECT_TRUE(has(cands[0].id, "norm.row")) << cands[0].id;
  auto src = emit::render_sources(kData, c, cands[0], "builtin", "op.py");
  EXPECT_TRUE(has(src.cu, "egg_k_row_kernel<VEC><<<"));
}

TEST(Norm, TuningAndFallback) {
  NormFamily family(kData);
  auto s = spec::parse_spec(layer_norm_gelu());
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  auto tuned = family.tunings(s, c, cands[0], "memory");
  ASSERT_FALSE(tuned.empty());
  for (const auto& t : tuned) {
    EXPECT_NE(t.id, cands[0].id);
    EXPECT_LE(t.params["tpr"].get<int>() * t.params["rpb"].get<int>(), 1024);
  }
  auto split_tuned = family.tunings(s, c, cands[1], "memory");
  EXPECT_FALSE(split_tuned.empty());
  auto fb = family.fallback(s, c, cands[0]);
  ASSERT_TRUE(fb.has_value());
  EXPECT_EQ(fb->params["structure"], "split");
  EXPECT_EQ(fb->params["vectorized"], false);
  EXPECT_TRUE(has(fb->code.launch_body, "egg_k_run<1>("));
  EXPECT_FALSE(family.fallback(s, c, *fb).has_value());
  // A row too long for registers gets the split structure only.
  EXPECT_FALSE(norm_row_prior(1 << 20, 4, 4).has_value());
  // Short rows: a warp a row, 8 rows a block where the rows fill the SMs, fewer (down to 128
  // threads) where they do not.
  EXPECT_EQ(norm_row_prior(512, 32768, 4)->rpb, 8);
  EXPECT_EQ(norm_row_prior(512, 512, 4)->rpb, 4);
  EXPECT_EQ(norm_row_prior(512, 512, 4)->block, 128);
  EXPECT_EQ(norm_row_prior(512, 8, 4)->rpb, 4);
  EXPECT_EQ(norm_row_prior(4096, 64, 4)->block, 256);  // 256 threads a row: one row a block
  EXPECT_GE(norm_split_prior(128, 64 * 56 * 56), 4);
}

}  // namespace
}  // namespace egg::backend::builtin
