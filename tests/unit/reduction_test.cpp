// Reduction family: can_implement (accepts/rejects with lines), rendering of row, column and full
// reductions, online softmax, scans, the fp16 path and epilogue fusion. FileCheck style: the lines
// that matter, not whitespace.
#include "backend/builtin/reduction.h"

#include <gtest/gtest.h>

#include "dump_candidates.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include <cstdlib>
#include <limits>
#include <regex>
#include <set>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"
#include "util/files.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json spec_of(json inputs, json params, json nodes, const std::string& out_node, json out_shape,
             const std::string& out_dtype = "float32") {
  return {{"schema", 2},
          {"op_file", "/src/op.py"},
          {"model_class", "Model"},
          {"init_inputs", json::array()},
          {"inputs", as_list(inputs)},
          {"params", as_list(params)},
          {"nodes", as_list(nodes)},
          {"outputs",
           {{{"name", "out0"}, {"node", out_node}, {"shape", out_shape}, {"dtype", out_dtype}}}},
          {"deps", {"/src/op.py"}},
          {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

json input(const std::string& name, json shape, const std::string& dtype = "float32") {
  return {{"name", name}, {"shape", shape}, {"dtype", dtype}};
}

json x_of(json shape, const std::string& dtype = "float32") {
  return json::array({input("x", shape, dtype)});
}

json num(double v) { return {{"scalar", v}}; }

struct Rendered {
  std::string device, launch, id;
};

Rendered render_first(const json& j, size_t which = 0) {
  ReductionFamily family(kData);
  auto s = spec::parse_spec(j);
  auto why = family.cannot_implement(s);
  EXPECT_FALSE(why.has_value()) << (why ? why->describe() : "");
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  EXPECT_GT(cands.size(), which);
  if (cands.size() <= which) return {};
  return {cands[which].code.device_code, cands[which].code.launch_body, cands[which].id};
}

// ---- can_implement -----------------------------------------------------------------------

TEST(Reduction, AcceptsTheAnchors) {
  ReductionFamily family(kData);
  for (const char* op : {"sum", "mean", "prod", "amax", "amin", "logsumexp"}) {
    auto j =
        spec_of(x_of({64, 128}), json::array(),
                {node("r", op, {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5)}, "r", {64});
    EXPECT_FALSE(family.cannot_implement(spec::parse_spec(j)).has_value()) << op;
  }
  auto am =
      spec_of(x_of({64, 128}), json::array(),
              {node("r", "argmax", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5, "int64")},
              "r", {64}, "int64");
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(am)).has_value());
  for (const char* op : {"softmax", "log_softmax", "cumsum", "cumprod"}) {
    auto j = spec_of(x_of({64, 128}), json::array(),
                     {node("r", op, {ref("x")}, {{"dim", -1}}, {64, 128}, 5)}, "r", {64, 128});
    EXPECT_FALSE(family.cannot_implement(spec::parse_spec(j)).has_value()) << op;
  }
}

TEST(Reduction, RejectsTwoAnchorsNamingTheSecond) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({64, 128}), json::array(),
                   {node("sm", "softmax", {ref("x")}, {{"dim", -1}}, {64, 128}, 5),
                    node("s", "sum", {ref("sm")}, {{"dim", 1}, {"keepdim", false}}, {64}, 6)},
                   "s", {64});
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 6);
  EXPECT_TRUE(has(why->describe(), "torch.sum")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "torch.softmax"));
}

TEST(Reduction, RejectsNonElementwiseEpilogueWithLine) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({64, 128}), json::array(),
                   {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5),
                    node("v", "reshape", {ref("s"), num(8), num(8)}, json::object(), {8, 8}, 9)},
                   "v", {8, 8});
  j["nodes"][1]["target"] = "torch.Tensor.view";
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 9);
  EXPECT_TRUE(has(why->describe(), "torch.Tensor.view")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "only element-wise ops fuse"));
}

TEST(Reduction, RejectsNonAdjacentDimsAndNoAnchor) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({8, 16, 32}), json::array(),
                   {node("s", "sum", {ref("x")}, {{"dim", {0, 2}}, {"keepdim", false}}, {16}, 4)},
                   "s", {16});
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 4);
  EXPECT_TRUE(has(why->describe(), "not adjacent")) << why->describe();
  auto none = spec_of(x_of({8, 16}), json::array(),
                      {node("r", "relu", {ref("x")}, json::object(), {8, 16}, 3)}, "r", {8, 16});
  auto why2 = family.cannot_implement(spec::parse_spec(none));
  ASSERT_TRUE(why2.has_value());
  EXPECT_EQ(why2->where().line, 0);  // the element-wise family explains an op-free graph better
}

TEST(Reduction, RejectsComputeOnIndicesAndPerElementReadsAfterReduce) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({64, 128}), json::array(),
                   {node("m", "max", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5),
                    node("i", "getitem", {ref("m"), num(1)}, json::object(), {64}, 5, "int64"),
                    node("f", "mul", {ref("i"), num(2.0)}, json::object(), {64}, 6)},
                   "f", {64});
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 6);
  EXPECT_TRUE(has(why->describe(), "indices")) << why->describe();

  auto k = spec_of(x_of({64, 64}), json::array(),
                   {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5),
                    node("d", "sub", {ref("x"), ref("s")}, {{"alpha", 1}}, {64, 64}, 7)},
                   "d", {64, 64});
  auto why2 = family.cannot_implement(spec::parse_spec(k));
  ASSERT_TRUE(why2.has_value());  // not keepdim: the sum broadcasts along the wrong dim
  EXPECT_EQ(why2->where().line, 5);
  EXPECT_TRUE(has(why2->hint(), "keepdim=True")) << why2->describe();
}

TEST(Reduction, BackendPicksReductionBeforeElementwise) {
  BuiltinBackend backend(kData);
  auto j = spec_of(x_of({64, 128}), json::array(),
                   {node("r", "softmax", {ref("x")}, {{"dim", -1}}, {64, 128}, 5)}, "r", {64, 128});
  EXPECT_NO_THROW(backend.check_supported(spec::parse_spec(j)));
}

// ---- rendering -------------------------------------------------------------------------

TEST(Reduction, RowSumWithPrologueAndEpilogue) {
  // relu(x).sum(-1) * 0.01 + bias[rows]
  auto j =
      spec_of(x_of({8192, 4096}),
              {{{"name", "bias"}, {"shape", {8192}}, {"dtype", "float32"}, {"kind", "parameter"}}},
              {node("r", "relu", {ref("x")}, json::object(), {8192, 4096}, 3),
               node("s", "sum", {ref("r")}, {{"dim", -1}, {"keepdim", false}}, {8192}, 3),
               node("m", "mul", {ref("s"), num(0.01)}, json::object(), {8192}, 3),
               node("a", "add", {ref("m"), ref("bias")}, {{"alpha", 1}}, {8192}, 4)},
              "a", {8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const float p0 = egg_relu(a0);")) << r.device;
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedSum;"));
  EXPECT_TRUE(has(r.device, "const float b0 = egg_to_float(bias[egg_o]);"));
  EXPECT_TRUE(has(r.device, "const float e0 = (egg_r * 0.00999999978f);"));
  EXPECT_TRUE(has(r.device, "const float e1 = (e0 + 1.0f * b0);"));
  EXPECT_TRUE(has(r.device, "out0[egg_o] = egg_from_float<float>(e1);"));
  EXPECT_TRUE(
      has(r.device,
          "egg_load_vec_once<float, VEC>(x + egg_base + egg_c)"));  // 16-byte vectors, read once
  EXPECT_TRUE(has(r.device, "egg_st.shfl_merge(egg_m)"));           // warp shuffles
  EXPECT_TRUE(has(r.device, "constexpr int kTpr = 128;")) << r.id;
  EXPECT_TRUE(
      has(r.device, "egg_st = egg_k_group_merge<kTpr, kGroups>(egg_st, egg_group, egg_lane);"));
  EXPECT_TRUE(has(r.device, "__shared__ S egg_shared[kGroups][kTpr / 32];"));  // warps of a row
  EXPECT_TRUE(has(r.launch, "egg_k_row<4><<<egg_grid, 256, 0, stream>>>(x, bias, out0, 0);"))
      << r.launch;
  EXPECT_FALSE(has(r.launch, "egg_k_finish"));
}

TEST(Reduction, ShortRowsUseAWarpPerRow) {
  auto j = spec_of(x_of({262144, 64}), json::array(),
                   {node("s", "prod", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {262144}, 3)},
                   "s", {262144});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "constexpr int kTpr = 32;")) << r.id;
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedProd;"));
  EXPECT_TRUE(has(r.device, "if constexpr (kTpr > 32) {"));  // no shared memory at 32
  EXPECT_TRUE(has(r.launch, "const dim3 egg_grid(32768, 1);")) << r.launch;
}

TEST(Reduction, ColumnReductionWalksTheReducedDim) {
  auto j = spec_of(x_of({32, 1024, 1024}), json::array(),
                   {node("s", "amax", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {32, 1024}, 3)},
                   "s", {32, 1024});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "constexpr egg_k_idx kInner = 1024;")) << r.device;
  EXPECT_TRUE(
      has(r.device, "egg_bases[egg_k] = (egg_qk / kInner) * kR * kInner + egg_qk % kInner;"));
  // Four adjacent columns per thread, one 16-byte vector per step of the reduced dim, read once
  // (evict-first); with vectors a thread's columns are its vector's (kK = 1).
  EXPECT_TRUE(has(r.device, "constexpr int kK = VEC > 1 ? 1 : 1;")) << r.device;
  EXPECT_TRUE(has(r.device, "const egg_k_idx egg_row = egg_bases[egg_k] + egg_r * kInner;"));
  EXPECT_TRUE(has(r.device, "egg_load_vec_once<float, VEC>(x + egg_row)"));
  EXPECT_TRUE(has(r.device, "egg_to_float(x_v.v[egg_j])"));
  EXPECT_TRUE(
      has(r.device, "egg_st[egg_k * VEC + egg_j].push(egg_k_in(egg_x), (long long)egg_r);"));
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedMax;"));
  // Eight threads share each column (every 8th step each), merged in a fixed order in shared
  // memory: 32 column threads per block.
  EXPECT_TRUE(has(r.id, ":g8")) << r.id;
  EXPECT_TRUE(has(r.device, "constexpr int kG = 8;"));
  EXPECT_TRUE(
      has(r.device, "for (egg_k_idx egg_r = egg_begin + egg_g; egg_r < egg_end; egg_r += kG)"));
  EXPECT_TRUE(has(r.device, "__shared__ egg_k_red egg_shared[kG - 1][kS][kCols];"));
  EXPECT_TRUE(has(r.device, "egg_st[egg_j].merge(egg_shared[egg_k][egg_j][egg_t]);"));
  // 8192 column threads in 256 blocks; the reduced dim split in 5 along y fills the GPU
  // (~8 blocks per SM), then merged.
  EXPECT_TRUE(has(r.launch, "egg_k_col<4><<<dim3(256, 5), 256, 0, stream>>>(x, out0, 0);"))
      << r.launch;
  // Misaligned pointers: scalar columns, four times the threads.
  EXPECT_TRUE(has(r.launch, "egg_k_col<1><<<dim3(1024, 5), 256, 0, stream>>>(x, out0, 0);"));
  EXPECT_TRUE(
      has(r.launch, "egg_k_finish<<<8192, 128, 0, stream>>>(out0, 0);"));  // a warp per column
  EXPECT_TRUE(has(r.device, "egg_k_partials[egg_c * 5 + blockIdx.y]")) << r.device;
}

TEST(Reduction, ColumnReductionAlsoTriesTheSplitOnlyLayout) {
  ReductionFamily family(kData);
  auto s = spec::parse_spec(
      spec_of(x_of({32, 1024, 1024}), json::array(),
              {node("s", "amax", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {32, 1024}, 3)}, "s",
              {32, 1024}));
  auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  // A thread per 4 columns, the reduced dim split over 32 blocks along y, no shared columns.
  EXPECT_FALSE(has(cands[1].id, ":g")) << cands[1].id;
  EXPECT_TRUE(has(cands[1].code.launch_body, "egg_k_col<4><<<dim3(32, 32), 256, 0, stream>>>"))
      << cands[1].code.launch_body;
  EXPECT_FALSE(has(cands[1].code.device_code, "egg_shared"));
}

// A row length no multiple of 4 (no vectors): stage 1 tries 16 threads per column with 2 columns
// each 32 apart first (a long reduced dim), then 8 threads with 4 columns, then a column per
// thread; stage 2 tries more and fewer; each compiles with the real nvcc, for float sums and for
// argmax's index states.
TEST(Reduction, ColumnsWithoutVectorsSpreadAThreadOverColumns32Apart) {
  ReductionFamily family(kData);
  for (const std::string op : {"sum", "argmax"}) {
    const std::string dtype = op == "sum" ? "float32" : "int64";
    auto s = spec::parse_spec(
        spec_of(x_of({64, 1000, 999}), json::array(),
                {node("s", op, {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64, 999}, 3, dtype)},
                "s", {64, 999}, dtype));
    auto c = contract::derive(s, "k");
    const auto cands = family.structures(s, c);
    ASSERT_GE(cands.size(), 3u);
    const auto& first = cands[0];
    EXPECT_TRUE(has(first.id, ":b512:") && has(first.id, ":u2:g16:k2")) << first.id;
    EXPECT_TRUE(has(first.code.device_code, "constexpr int kK = VEC > 1 ? 1 : 2;"));
    EXPECT_TRUE(has(first.code.device_code,
                    "egg_k_idx(blockIdx.x) * kCols * kK + (egg_t / 32) * 32 * kK + egg_t % 32;"));
    // A column past the last walks the last one again; its state is not written.
    EXPECT_TRUE(has(first.code.device_code,
                    "egg_q + egg_k * 32 < 63936 ? egg_q + egg_k * 32 : egg_k_idx(63936 - VEC);"));
    EXPECT_TRUE(has(first.code.device_code, "if (egg_j >= VEC && egg_c >= 63936) break;"));
    // 63936 columns, 64 a block (a warp of 2 x 32, 16 groups down the column): 999 blocks, enough
    // for ~2048 threads per SM without a split.
    EXPECT_TRUE(has(first.code.launch_body, "egg_k_col<1><<<dim3(999, 1), 512, 0, stream>>>"))
        << first.code.launch_body;
    EXPECT_TRUE(has(first.summary, "2 output columns 32 apart (a warp walks 64 neighbouring"))
        << first.summary;
    // Then 8 threads per column with 4 columns each: 500 blocks of 128 columns, the reduced dim
    // split in 3 for ~8 blocks per SM, merged.
    EXPECT_TRUE(has(cands[1].id, ":b256:") && has(cands[1].id, ":g8:k4")) << cands[1].id;
    EXPECT_TRUE(has(cands[1].code.launch_body, "egg_k_col<1><<<dim3(500, 3), 256, 0, stream>>>"))
        << cands[1].code.launch_body;
    EXPECT_TRUE(has(cands[2].id, ":g8")) << cands[2].id;
    EXPECT_FALSE(has(cands[2].id, ":k")) << cands[2].id;
    std::set<std::string> spreads;
    for (const auto& t : family.tunings(s, c, first, "memory")) {
      std::smatch m;
      spreads.insert(std::regex_search(t.id, m, std::regex(":k([0-9]+)")) ? m[1].str() : "1");
    }
    EXPECT_EQ(spreads, (std::set<std::string>{"1", "2", "4"}));
    if (const auto nvcc = egg::testing::real_nvcc()) {
      for (const auto* cand : {&cands[0], &cands[1], &cands[2]})
        EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, *cand), "");
    }
  }
  // A short reduced dim (fewer than 16 steps for each of 16 threads) starts at 8 threads with 4
  // columns each.
  {
    auto s = spec::parse_spec(
        spec_of(x_of({64, 128, 999}), json::array(),
                {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64, 999}, 3)}, "s",
                {64, 999}));
    const auto cands = family.structures(s, contract::derive(s, "k"));
    ASSERT_FALSE(cands.empty());
    EXPECT_TRUE(has(cands[0].id, ":g8:k4")) << cands[0].id;
  }
  // With vectors across columns (a row length that is a multiple of 4) the columns are the
  // vector's: no spread, unless the vectors are off.
  const auto plan = family.plan(spec::parse_spec(
      spec_of(x_of({64, 1000, 1000}), json::array(),
              {node("s", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64, 1000}, 3)}, "s",
              {64, 1000})));
  ReductionParams p;
  p.spread = 4;
  EXPECT_FALSE(reduction_params_valid(plan, 4, p));
  p.vectorized = false;
  EXPECT_TRUE(reduction_params_valid(plan, 4, p));
  p.spread = 3;
  EXPECT_FALSE(reduction_params_valid(plan, 4, p));
}

TEST(Reduction, SharedColumnsKeepStatesWithinStaticSharedMemory) {
  // argmax (16-byte states) over bf16 (8-wide vectors): 256 threads fit (32 KiB), 512 do not.
  const auto plan = ReductionFamily(kData).plan(spec::parse_spec(spec_of(
      x_of({64, 1024, 512}, "bfloat16"), json::array(),
      {node("s", "argmax", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64, 512}, 3, "int64")},
      "s", {64, 512}, "int64")));
  ReductionParams p;
  p.cgroups = 8;
  EXPECT_TRUE(reduction_params_valid(plan, 2, p));
  p.block = 512;
  EXPECT_FALSE(reduction_params_valid(plan, 2, p));
  p.block = 256;
  p.cgroups = 16;  // 16 column threads: less than a warp of adjacent columns
  EXPECT_FALSE(reduction_params_valid(plan, 2, p));
}

TEST(Reduction, FullReductionSplitsOverBlocks) {
  auto j = spec_of(
      x_of({8192, 4096}), json::array(),
      {node("s", "sum", {ref("x")}, {{"dim", nullptr}, {"keepdim", false}}, json::array(), 3)}, "s",
      json::array());
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "Layout: [outer 1, reduced 33554432, inner 1]")) << r.device;
  EXPECT_TRUE(has(r.device, "__device__ egg_k_red egg_k_partials[512];")) << r.id;
  // A warp merges the 512 partial states: 16 per lane, then a butterfly.
  EXPECT_TRUE(
      has(r.device,
          "for (int egg_s = egg_l; egg_s < 512; egg_s += 32) egg_st.merge(egg_k_partials[egg_o * "
          "512 + egg_s]);"));
  EXPECT_TRUE(has(r.launch, "const dim3 egg_grid(1, 512);")) << r.launch;
  EXPECT_TRUE(has(r.launch, "egg_k_finish<<<1, 128, 0, stream>>>(out0, 0);"));
}

TEST(Reduction, SoftmaxIsOnlineAndKeepsTheRowOnChip) {
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("r", "softmax", {ref("x")}, {{"dim", -1}}, {4096, 8192}, 5)}, "r",
                   {4096, 8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedSoftmax;"));
  EXPECT_TRUE(has(r.device, "float egg_cache[kItems][VEC];")) << r.id;
  // From registers: the maximum, then exp(x - max) kept in place and summed; the write divides.
  EXPECT_TRUE(has(r.device, "const float egg_e = expf(egg_cache[egg_k][egg_j] - egg_mx.v);"));
  EXPECT_TRUE(has(r.device, "egg_cache[egg_k][egg_j] = egg_e;"));
  EXPECT_TRUE(has(r.device, "const float egg_x = egg_cache[egg_k][egg_j];"));
  EXPECT_TRUE(has(r.device, "const float egg_a = (egg_x / egg_st.s);"));
  EXPECT_TRUE(has(r.device, "egg_store_vec<float, VEC>(out0 + egg_base + egg_c, out0_v);"));
  // The second structure streams the row twice (no register cache).
  auto streamed = render_first(j, 1);
  EXPECT_FALSE(has(streamed.device, "egg_cache[egg_k][egg_j]")) << streamed.id;
  // online max + sum in one pass, without a branch
  EXPECT_TRUE(has(streamed.device, "s = s * expf(m - base) + expf(x - base);"));
  EXPECT_TRUE(has(streamed.device, "const float egg_a = (expf(egg_x - egg_st.m) / egg_st.s);"));
}

// Rows too long for registers stay on chip in the shared memory of a cluster of blocks: the
// input is read once. Softmax over 1.5 MB rows: 8 blocks of 192 KiB, max then the exponentials
// from shared memory, merged through distributed shared memory in rank order.
TEST(Reduction, LongSoftmaxRowsStayOnChipInAClusterOfBlocks) {
  auto j = spec_of(x_of({256, 393216}), json::array(),
                   {node("r", "softmax", {ref("x")}, {{"dim", 1}}, {256, 393216}, 5)}, "r",
                   {256, 393216});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.id, ":cl8")) << r.id;
  EXPECT_TRUE(has(r.device, "constexpr egg_k_idx kChunk = 49152;")) << r.device;
  EXPECT_TRUE(
      has(r.device, "egg_k_smem_load<VEC>(egg_g, egg_base, egg_lo, egg_buf, egg_mx, x, 0);"));
  EXPECT_TRUE(has(r.device, "egg_mx = egg_k_cluster_merge(egg_mx, &egg_max_slot, egg_cluster);"));
  EXPECT_TRUE(has(r.device, "egg_all.merge(*egg_cluster.map_shared_rank(egg_slot, egg_r));"));
  EXPECT_TRUE(has(r.device, "const float egg_e = expf(egg_buf[egg_i] - egg_mx.v);"));
  EXPECT_TRUE(has(r.device, "egg_buf[egg_i] = egg_e;"));  // exponentials kept for the write pass
  EXPECT_TRUE(has(r.device, "const float egg_a = (egg_x / egg_st.s);"));
  // The two-pass row kernel (the fallback without clusters) keeps its own, online form.
  EXPECT_TRUE(has(r.device, "const float egg_a = (expf(egg_x - egg_st.m) / egg_st.s);"));
  // 2048 blocks of 1024 threads in clusters of 8, 196624 bytes of shared memory each.
  EXPECT_TRUE(
      has(r.launch, "egg_launch_on_clusters(egg_kernel, dim3(2048), dim3(1024), 196624, 8,"))
      << r.launch;
  EXPECT_TRUE(has(r.launch, "false, stream, x, out0, 0);"));
  EXPECT_TRUE(has(r.launch, "egg_k_row<4><<<egg_grid, 1024, 0, stream>>>(x, out0, 0);"));
  // The second structure is the two-pass row kernel alone.
  EXPECT_FALSE(has(render_first(j, 1).id, ":cl")) << render_first(j, 1).id;
}

// An L1 normalization of rows of odd length: the chunks are read as 16-byte vectors between a
// scalar head and tail; the epilogue divides x itself, not |x|, so shared memory keeps x (the
// operand) and the write pass recomputes |x| from it rather than reading x again.
TEST(Reduction, OddLengthRowsOnChipKeepTheOperandTheEpilogueReads) {
  auto j = spec_of(x_of({1024, 65535}), json::array(),
                   {node("a", "abs", {ref("x")}, json::object(), {1024, 65535}, 3),
                    node("s", "sum", {ref("a")}, {{"dim", 1}, {"keepdim", true}}, {1024, 1}, 3),
                    node("d", "div", {ref("x"), ref("s")}, json::object(), {1024, 65535}, 3)},
                   "d", {1024, 65535});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.id, ":v4:cl4")) << r.id;  // 65535 is no multiple of 4: vectors even so
  EXPECT_TRUE(has(r.device, "constexpr egg_k_idx egg_k_kStride = 16388;")) << r.device;
  EXPECT_TRUE(
      has(r.device,
          "egg_store_vec<float, VEC>(egg_buf + 0 * egg_k_kStride + (egg_g - egg_lo), egg_ov);"));
  EXPECT_TRUE(has(r.device,
                  "const EggVec<float, VEC> x_v = egg_load_vec_shared<float, VEC>(egg_buf + 0 * "
                  "egg_k_kStride + (egg_g - egg_lo));"));
  // Shared memory is read with plain loads (__ldg would fail there: invalid address space).
  EXPECT_FALSE(has(r.device, "egg_load_vec<float, VEC>(egg_buf"));
  EXPECT_TRUE(has(r.device, "egg_k_smem_load<1>(egg_g, egg_base, egg_lo, egg_buf, egg_st, x, 0);"));
  EXPECT_FALSE(has(r.device, "egg_mx = egg_k_cluster_merge"));  // a sum: one pass
  EXPECT_TRUE(has(r.launch, "), 65552, ")) << r.launch;
  EXPECT_TRUE(has(r.launch, "egg_k_row<1><<<egg_grid, 512, 0, stream>>>(x, out0, 0);"));
}

// Stage 2 around a row on chip: other cluster and block sizes, each within shared memory; a row
// that fits in registers keeps the register cache first, and reductions never take a cluster.
TEST(Reduction, RowOnChipTuningStaysWithinSharedMemory) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({256, 393216}), json::array(),
                   {node("r", "log_softmax", {ref("x")}, {{"dim", 1}}, {256, 393216}, 5)}, "r",
                   {256, 393216});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_FALSE(cands.empty());
  ASSERT_TRUE(has(cands.front().id, ":cl8")) << cands.front().id;
  std::set<int> clusters;
  for (const auto& t : family.tunings(s, c, cands.front(), "memory")) {
    const int cl = t.params.value("cluster", 0);
    clusters.insert(cl);
    if (cl == 0) continue;
    std::smatch m;
    ASSERT_TRUE(
        std::regex_search(t.code.launch_body, m,
                          std::regex("dim3\\([0-9]+\\), dim3\\([0-9]+\\), ([0-9]+), [0-9]+,")));
    EXPECT_LE(std::stoll(m[1]), 220 * 1024) << t.id;
    if (cl == 16) {
      EXPECT_TRUE(has(t.code.launch_body, "true, stream, ")) << t.id;  // a non-portable size
    }
  }
  EXPECT_TRUE(clusters.count(8) && clusters.count(16)) << clusters.size();
  EXPECT_FALSE(clusters.count(4));  // 384 KiB per block: beyond shared memory

  auto plan = std::get<ReductionPlan>(family.analyze(s));
  ReductionParams p;
  p.cluster = 8;
  p.block = p.tpr = 1024;
  EXPECT_TRUE(reduction_params_valid(plan, 4, p));
  p.tpr = 512;
  EXPECT_FALSE(reduction_params_valid(plan, 4, p));  // a block per chunk
  plan.mode = ReductionMode::reduce;
  p.tpr = 1024;
  EXPECT_FALSE(reduction_params_valid(plan, 4, p));

  auto fits = spec_of(x_of({4096, 8192}), json::array(),
                      {node("r", "softmax", {ref("x")}, {{"dim", -1}}, {4096, 8192}, 5)}, "r",
                      {4096, 8192});
  EXPECT_FALSE(has(render_first(fits).id, ":cl")) << render_first(fits).id;
}

TEST(Reduction, KeepdimMeanBroadcastEpilogue) {
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("m", "mean", {ref("x")}, {{"dim", -1}, {"keepdim", true}}, {4096, 1}, 5),
                    node("d", "sub", {ref("x"), ref("m")}, {{"alpha", 1}}, {4096, 8192}, 5)},
                   "d", {4096, 8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const float egg_a = (egg_st.v / 8192.0f);")) << r.device;
  EXPECT_TRUE(has(r.device, "const float e0 = (egg_x - 1.0f * egg_a);"));
  EXPECT_TRUE(has(r.device, "float egg_cache[kItems][VEC];"));
}

TEST(Reduction, LogSoftmaxHalfUsesEightWideVectors) {
  auto j = spec_of(x_of({64, 1024}, "float16"), json::array(),
                   {node("r", "log_softmax", {ref("x")}, {{"dim", 1}}, {64, 1024}, 5, "float16")},
                   "r", {64, 1024}, "float16");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const float egg_a = (egg_x - egg_st.m - logf(egg_st.s));"))
      << r.device;
  // A kernel that writes every element keeps plain loads (evict-first measured slower there).
  EXPECT_TRUE(has(r.device, "egg_load_vec<__half, VEC>(x + egg_base + egg_c)"));
  EXPECT_FALSE(has(r.device, "egg_load_vec_once<__half"));
  EXPECT_TRUE(has(r.device, "egg_from_float<__half>(egg_out[0])"));
  EXPECT_TRUE(has(r.launch, "egg_k_row<8>")) << r.launch;
}

TEST(Reduction, ArgmaxWritesInt64Indices) {
  auto j = spec_of(
      x_of({64, 1024, 512}), json::array(),
      {node("a", "argmax", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {64, 512}, 5, "int64")},
      "a", {64, 512}, "int64");
  auto r = render_first(j);
  // The reduced dim has 1024 elements: the index is carried in 32 bits, written as int64.
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedArgMax32;"));
  EXPECT_TRUE(has(r.device, "out0[egg_o] = static_cast<std::int64_t>(egg_st.i);")) << r.device;
  EXPECT_TRUE(has(r.device, "std::int64_t* __restrict__ out0"));
}

TEST(Reduction, AnIndexPast32BitsIsCarriedIn64) {
  const std::int64_t n = std::int64_t{1} << 31;
  auto j =
      spec_of(x_of({2, n}), json::array(),
              {node("a", "argmin", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {2}, 5, "int64")},
              "a", {2}, "int64");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedArgMin;")) << r.device;
}

// ---- vector norms and F.normalize ------------------------------------------------------------

TEST(Reduction, VectorNormsEnterAsPowersAndFinishWithTheRoot) {
  auto norm_of = [](const std::string& op, json p) {
    json attrs = {{"dim", 1}, {"keepdim", false}};
    attrs[op == "vector_norm" ? "ord" : "p"] = p;
    return render_first(spec_of(x_of({4096, 8192}), json::array(),
                                {node("n", op, {ref("x")}, attrs, {4096}, 5)}, "n", {4096}));
  };
  auto l2 = norm_of("norm", "fro");  // torch.norm's default: 2 over the reduced dims
  EXPECT_TRUE(has(l2.device, "return (egg_x * egg_x);")) << l2.device;
  EXPECT_TRUE(has(l2.device, "const float egg_r = sqrtf(egg_st.v);"));
  EXPECT_TRUE(has(l2.device, "using egg_k_red = EggRedSum;"));
  auto l1 = norm_of("vector_norm", 1);
  EXPECT_TRUE(has(l1.device, "return fabsf(egg_x);"));
  EXPECT_TRUE(has(l1.device, "const float egg_r = egg_st.v;"));
  auto inf =
      norm_of("vector_norm", std::numeric_limits<double>::max());  // inf, as the frontend writes it
  EXPECT_TRUE(has(inf.device, "using egg_k_red = EggRedMax;"));
  EXPECT_TRUE(has(inf.device, "return fabsf(egg_x);"));
  auto ninf = norm_of("norm", -std::numeric_limits<double>::max());
  EXPECT_TRUE(has(ninf.device, "using egg_k_red = EggRedMin;"));
  auto p3 = norm_of("norm", 3);
  EXPECT_TRUE(has(p3.device, "return powf(fabsf(egg_x), 3.0f);")) << p3.device;
  EXPECT_TRUE(has(p3.device, "powf(egg_st.v, 0.333333343f)")) << p3.device;
  auto p0 = norm_of("norm", 0);
  EXPECT_TRUE(has(p0.device, "return (egg_x != 0.0f ? 1.0f : 0.0f);"));
}

TEST(Reduction, NuclearNormIsRejectedWithItsLine) {
  ReductionFamily family(kData);
  auto j = spec_of(
      x_of({64, 128}), json::array(),
      {node("n", "norm", {ref("x")},
            {{"p", "nuc"}, {"dim", json::array({0, 1})}, {"keepdim", false}}, json::array(), 7)},
      "n", json::array());
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "p=\"nuc\"")) << why->describe();
  EXPECT_TRUE(has(why->describe(), "vector norms only"));
  EXPECT_TRUE(has(why->describe(), ":7")) << why->describe();
}

TEST(Reduction, NormalizeDividesByTheClampedNorm) {
  auto j = spec_of(x_of({8192, 2048}, "float16"), json::array(),
                   {node("y", "normalize", {ref("x")}, {{"p", 2.0}, {"dim", -1}, {"eps", 1e-12}},
                         {8192, 2048}, 5, "float16")},
                   "y", {8192, 2048}, "float16");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "return (egg_x * egg_x);")) << r.id;
  EXPECT_TRUE(
      has(r.device, "const float egg_a = (egg_x / egg_maximum(sqrtf(egg_st.v), 9.99999996e-13f));"))
      << r.device;
  EXPECT_TRUE(has(r.device, "float egg_cache[kItems][VEC];"));  // one read of the row
}

// A normalize over a middle dim of at most 64 elements (RMS over the channels of [N, C, H, W])
// keeps each thread's column in registers: the input is read once, then written; the second
// structure reads it twice. A softmax over such a column stays online (the row kernels' two-pass
// form is theirs alone), and columns past 64 elements are not kept.
TEST(Reduction, ShortColumnsStayInRegistersBetweenThePasses) {
  auto j = spec_of(x_of({8, 64, 4096}), json::array(),
                   {node("r", "softmax", {ref("x")}, {{"dim", 1}}, {8, 64, 4096}, 5)}, "r",
                   {8, 64, 4096});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.id, "reduction.normalize.col:") && has(r.id, ":cache")) << r.id;
  EXPECT_TRUE(has(r.device, "float egg_cache[kR];")) << r.device;
  EXPECT_TRUE(has(r.device, "egg_cache[egg_r] = egg_x;"));
  EXPECT_TRUE(has(r.device, "const float egg_x = egg_cache[egg_r];"));
  EXPECT_TRUE(has(r.device, "column kept in registers (input read once)"));
  EXPECT_TRUE(has(r.device, "const float egg_a = (expf(egg_x - egg_st.m) / egg_st.s);"));
  auto twice = render_first(j, 1);
  EXPECT_FALSE(has(twice.id, ":cache")) << twice.id;
  EXPECT_FALSE(has(twice.device, "egg_cache[egg_r]"));
  EXPECT_TRUE(has(twice.device, "two passes over the column"));

  auto longer = spec_of(x_of({8, 65, 4096}), json::array(),
                        {node("r", "softmax", {ref("x")}, {{"dim", 1}}, {8, 65, 4096}, 5)}, "r",
                        {8, 65, 4096});
  EXPECT_FALSE(has(render_first(longer).id, ":cache"));
}

TEST(Reduction, MaxValuesThroughGetitem) {
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("m", "max", {ref("x")}, {{"dim", -1}, {"keepdim", false}}, {4096}, 5),
                    node("v", "getitem", {ref("m"), num(0)}, json::object(), {4096}, 5),
                    node("t", "tanh", {ref("v")}, json::object(), {4096}, 5)},
                   "t", {4096});
  auto r = render_first(j);
  // Nobody reads the indices: the value reducer, no index compared or carried per element.
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedMax;")) << r.device;
  EXPECT_TRUE(has(r.device, "const float e0 = tanhf(egg_r);")) << r.device;
}

TEST(Reduction, MinIndicesThroughGetitemKeepTheArgReducer) {
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("m", "min", {ref("x")}, {{"dim", -1}, {"keepdim", false}}, {4096}, 5),
                    node("i", "getitem", {ref("m"), num(1)}, json::object(), {4096}, 5, "int64")},
                   "i", {4096}, "int64");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedArgMin32;")) << r.device;
  EXPECT_TRUE(has(r.device, "static_cast<std::int64_t>(egg_st.i)")) << r.device;
}

// Rows of odd length take no vectors: the first structure reads and writes each chunk coalesced
// through shared memory (a thread's own elements are 8 apart otherwise: 8x the memory requests),
// the second keeps the scan's own loads; stage 2 toggles between them.
TEST(Reduction, ScanOfOddRowsGoesThroughSharedMemory) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({4096, 32767}), json::array(),
                   {node("c", "cumsum", {ref("x")}, {{"dim", 1}}, {4096, 32767}, 5)}, "c",
                   {4096, 32767});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  EXPECT_EQ(cands[0].id, "reduction.scan.row:b256:t256:v1:i8:tr");
  EXPECT_EQ(cands[1].id, "reduction.scan.row:b256:t256:v1:i8");
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "__shared__ float egg_tile[kGroups][kTpr * kItems + kTpr * kItems / 32];"));
  EXPECT_TRUE(has(d, "const int egg_m = egg_k * kTpr + egg_lane;")) << d;
  EXPECT_TRUE(has(d, "egg_tile[egg_group][egg_m + egg_m / 32] = egg_x;"));
  EXPECT_TRUE(has(d,
                  "out0[egg_base + egg_c] = egg_from_float<float>(egg_tile[egg_group][egg_m + "
                  "egg_m / 32]);"));
  EXPECT_FALSE(has(cands[1].code.device_code, "egg_tile"));
  bool toggled = false;
  for (const auto& t : family.tunings(s, c, cands[0], "memory"))
    toggled = toggled || !has(t.id, ":tr");
  EXPECT_TRUE(toggled);
  // Aligned rows keep their vectors and no shared-memory chunk.
  auto aligned = spec_of(x_of({4096, 32768}), json::array(),
                         {node("c", "cumsum", {ref("x")}, {{"dim", 1}}, {4096, 32768}, 5)}, "c",
                         {4096, 32768});
  EXPECT_FALSE(has(render_first(aligned).id, ":tr")) << render_first(aligned).id;
}

// A row scan whose input passes through layout ops (an exclusive cumsum's shifted input:
// cat([zeros, x[:, :-1]])) evaluates it by index at each element, reading x where the index maps
// (coalesced through shared memory); a reduction with such a prologue is left to the planner.
TEST(Reduction, AScanReadsItsInputThroughLayoutOpsByIndex) {
  auto shifted = [](const std::string& anchor, json attrs, json out_shape) {
    return spec_of(
        x_of({64, 1024}), json::array(),
        {node("sl", "slice", {ref("x")}, {{"dim", 1}, {"start", 0}, {"end", 1023}, {"step", 1}},
              {64, 1023}, 4),
         node("z", "full", json::array(), {{"fill_value", 0.0}, {"dtype", nullptr}}, {64, 1}, 4),
         node("sh", "cat", {json{{"list", {ref("z"), ref("sl")}}}}, {{"dim", 1}}, {64, 1024}, 4),
         node("c", anchor, {ref("sh")}, attrs, out_shape, 5)},
        "c", out_shape);
  };
  auto r = render_first(shifted("cumsum", {{"dim", 1}}, {64, 1024}));
  EXPECT_TRUE(has(r.id, ":v1:i8:tr")) << r.id;
  EXPECT_TRUE(
      has(r.device, "EGG_HD float egg_k_gather(IndexT i, const float* __restrict__ x, int) {"))
      << r.device;
  EXPECT_TRUE(has(r.device, "egg_x = egg_k_gather(egg_e, x, 0);"));
  EXPECT_TRUE(has(r.device, "egg_to_float(x["));
  EXPECT_FALSE(has(r.device, "egg_k_pro("));
  ReductionFamily family(kData);
  auto sum = spec::parse_spec(shifted("sum", {{"dim", 1}, {"keepdim", false}}, json::array({64})));
  auto why = family.cannot_implement(sum);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 4) << why->describe();  // the layout op, named with its line
}

TEST(Reduction, RowScanCarriesAcrossChunks) {
  auto j =
      spec_of(x_of({2048, 8192}), json::array(),
              {node("c", "cumsum", {ref("x")}, {{"dim", 1}}, {2048, 8192}, 5)}, "c", {2048, 8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "__shfl_up_sync(0xffffffffu, egg_incl, egg_d)")) << r.device;
  EXPECT_TRUE(has(r.device, "double egg_carry = 0.0f;"));  // the carry across chunks is double
  EXPECT_TRUE(
      has(r.device, "egg_carry = egg_k_opd(egg_carry, static_cast<double>(egg_chunk_total));"));
  EXPECT_TRUE(has(r.device,
                  "const float egg_a = static_cast<float>(egg_k_opd(egg_prefix, "
                  "static_cast<double>(egg_v[egg_k + egg_j])));"));
  EXPECT_TRUE(has(r.device, "return egg_a + egg_b;"));
  EXPECT_TRUE(has(r.device, "__shared__ float egg_totals[kGroups][kWarps];")) << r.id;
  EXPECT_TRUE(has(r.launch, "egg_k_scan<4><<<2048, 256, 0, stream>>>(x, out0, 0);")) << r.launch;
}

TEST(Reduction, ColumnScanAndCumprod) {
  auto j = spec_of(x_of({32, 512, 2048}), json::array(),
                   {node("c", "cumprod", {ref("x")}, {{"dim", 1}}, {32, 512, 2048}, 5),
                    node("a", "add", {ref("c"), ref("x")}, {{"alpha", 1}}, {32, 512, 2048}, 5)},
                   "a", {32, 512, 2048});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_carry = egg_k_opd(egg_carry, static_cast<double>(egg_x));"))
      << r.device;
  EXPECT_TRUE(has(r.device, "return egg_a * egg_b;"));
  EXPECT_TRUE(has(r.device, "const float e0 = (egg_a + 1.0f * egg_x);"));
  EXPECT_TRUE(has(r.launch, "egg_k_col<1><<<dim3(256, 1), 256, 0, stream>>>(x, out0, 0);"))
      << r.launch;
}

// ---- scans: reverse (torch.flip), exclusive, masked ------------------------------------------

json flip(const std::string& name, const std::string& of, json dims, json shape, int line) {
  auto n = node(name, "flip", {ref(of)}, {{"dims", dims}}, shape, line);
  return n;
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// cummax, cummin and logcumsumexp combine by the table's expression, from its identity, in float
// within a chunk and in double across chunks.
TEST(Reduction, ScansCombineByTheTablesExpression) {
  struct Case {
    const char* op;
    const char* combine;
    const char* identity;
  };
  for (const Case& c :
       {Case{"cummax", "return egg_scan_max(egg_a, egg_b);", "-INFINITY"},
        Case{"cummin", "return egg_scan_min(egg_a, egg_b);", "INFINITY"},
        Case{"logcumsumexp", "return egg_log_add_exp(egg_a, egg_b);", "-INFINITY"}}) {
    auto j =
        spec_of(x_of({2048, 8192}), json::array(),
                {node("c", c.op, {ref("x")}, {{"dim", 1}}, {2048, 8192}, 5)}, "c", {2048, 8192});
    auto r = render_first(j);
    EXPECT_EQ(count(r.device, c.combine), 2u) << c.op;  // the float and the double combine
    EXPECT_TRUE(has(r.device, std::string("double egg_carry = ") + c.identity + ";")) << c.op;
  }
}

TEST(Reduction, ReverseScanReadsAndWritesFromTheEnd) {
  // torch.cumsum(x.flip(1), 1).flip(1): a suffix sum, no data moved by the flips.
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {flip("f0", "x", {1}, {4096, 8192}, 5),
                    node("c", "cumsum", {ref("f0")}, {{"dim", 1}}, {4096, 8192}, 5),
                    flip("f1", "c", {-1}, {4096, 8192}, 5)},
                   "f1", {4096, 8192});
  ReductionFamily family(kData);
  auto plan = family.plan(spec::parse_spec(j));
  EXPECT_TRUE(plan.in_rev);
  EXPECT_TRUE(plan.out_rev);
  EXPECT_EQ(plan.scan_dim, 1);
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_load_vec<float, VEC>(x + egg_base + (kR - egg_c - VEC))"))
      << r.device;
  EXPECT_TRUE(has(r.device, "egg_to_float(x_v.v[VEC - 1 - egg_j])"));
  EXPECT_TRUE(has(r.device, "const egg_k_idx egg_e = egg_base + (kR - 1 - egg_c - egg_j);"));
  EXPECT_TRUE(has(r.device, "out0_v.v[VEC - 1 - egg_j] = egg_from_float<float>(egg_out[0]);"));
  EXPECT_TRUE(
      has(r.device, "egg_store_vec<float, VEC>(out0 + egg_base + (kR - egg_c - VEC), out0_v);"));
  EXPECT_FALSE(has(r.device, "flip"));  // no step for the flips
  EXPECT_TRUE(has(r.id, ":rin:rout")) << r.id;
  EXPECT_TRUE(has(r.launch, "egg_k_scan<4><<<4096, 256, 0, stream>>>(x, out0, 0);")) << r.launch;
}

TEST(Reduction, ScanOfAFlippedInputWritesForward) {
  auto j = spec_of(x_of({64, 1024}), json::array(),
                   {flip("f0", "x", {1}, {64, 1024}, 5),
                    node("c", "cumprod", {ref("f0")}, {{"dim", -1}}, {64, 1024}, 6)},
                   "c", {64, 1024});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_load_vec<float, VEC>(x + egg_base + (kR - egg_c - VEC))"))
      << r.device;
  EXPECT_TRUE(has(r.device, "egg_store_vec<float, VEC>(out0 + egg_base + egg_c, out0_v);"));
  EXPECT_TRUE(has(r.device, "out0_v.v[egg_j] = "));
  EXPECT_TRUE(has(r.device, "return egg_a * egg_b;"));
  EXPECT_TRUE(has(r.id, ":rin")) << r.id;
  EXPECT_FALSE(has(r.id, ":rout")) << r.id;
}

TEST(Reduction, ExclusiveScanKeepsTheInputInRegisters) {
  // torch.cumsum(x, 1) - x: the epilogue reads x, which stays in registers (one read of x).
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("c", "cumsum", {ref("x")}, {{"dim", 1}}, {4096, 8192}, 5),
                    node("d", "sub", {ref("c"), ref("x")}, {{"alpha", 1}}, {4096, 8192}, 5)},
                   "d", {4096, 8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_xs[egg_k + egg_j] = egg_x;")) << r.device;
  EXPECT_TRUE(has(r.device, "const float egg_x = egg_xs[egg_k + egg_j];"));
  EXPECT_TRUE(has(r.device, "const float e0 = (egg_a - 1.0f * egg_x);"));
  EXPECT_EQ(count(r.device, "egg_load_vec<float, VEC>(x + "), 1u) << r.device;
  EXPECT_TRUE(has(r.id, "reduction.scan.row")) << r.id;
}

// An exclusive scan (lowering.cpp's reading of cat([zeros, cumsum(x[:, :-1])])): every element
// takes the running value before it, from x read aligned (vectors where the row allows, through
// shared memory where it does not), down a column too; each compiles with the real nvcc.
TEST(Reduction, AnExclusiveScanWritesTheRunningValueBeforeEachElement) {
  ReductionFamily family(kData);
  auto scan = [](json shape, int dim) {
    json attrs = {{"dim", dim}, {"exclusive", true}};
    return spec_of(x_of(shape), json::array(), {node("c", "cumsum", {ref("x")}, attrs, shape, 5)},
                   "c", shape);
  };
  const auto vec = render_first(scan({512, 4096}, 1));
  EXPECT_TRUE(has(vec.id, "reduction.scan.row") && has(vec.id, ":v4")) << vec.id;
  EXPECT_TRUE(has(vec.device,
                  "egg_v[egg_k + egg_j] = egg_acc;  // exclusive: the running value before this "
                  "element\n          egg_acc = egg_k_op(egg_acc, egg_x);"))
      << vec.device;
  EXPECT_TRUE(has(vec.device, "egg_load_vec<float, VEC>(x + egg_base + egg_c)"));  // no shift
  EXPECT_TRUE(has(vec.device, "Structure: row scan") && has(vec.device, ", exclusive"))
      << vec.device;
  const auto odd = render_first(scan({512, 4095}, 1));
  EXPECT_TRUE(has(odd.device,
                  "egg_v[egg_k] = egg_acc;  // exclusive: the running value before this element"))
      << odd.device;
  const auto col = render_first(scan({32, 512, 2048}, 1));
  EXPECT_TRUE(has(col.device,
                  "const float egg_a = static_cast<float>(egg_carry);  // the running value before "
                  "this step\n    egg_carry = egg_k_opd(egg_carry, static_cast<double>(egg_x));"))
      << col.device;
  // Without the attribute: inclusive.
  const auto incl = render_first(
      spec_of(x_of({512, 4096}), json::array(),
              {node("c", "cumsum", {ref("x")}, {{"dim", 1}}, {512, 4096}, 5)}, "c", {512, 4096}));
  EXPECT_FALSE(has(incl.device, "exclusive")) << incl.device;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    for (const json& j : {scan({512, 4096}, 1), scan({512, 4095}, 1), scan({32, 512, 2048}, 1)}) {
      const auto sp = spec::parse_spec(j);
      const auto c = contract::derive(sp, "k");
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, family.structures(sp, c)[0]), "");
    }
  }
}

TEST(Reduction, ReverseExclusiveAlongAMiddleDimSeesXThroughTheFlips) {
  // flip(cumsum(flip(x, [1]), 1), [1]) - x on bf16 [32, 1024, 256]: a column scan from the end.
  auto j = spec_of(
      x_of({32, 1024, 256}, "bfloat16"), json::array(),
      {flip("f0", "x", {1}, {32, 1024, 256}, 5),
       node("c", "cumsum", {ref("f0")}, {{"dim", 1}}, {32, 1024, 256}, 5, "bfloat16"),
       flip("f1", "c", {1}, {32, 1024, 256}, 5),
       node("d", "sub", {ref("f1"), ref("x")}, {{"alpha", 1}}, {32, 1024, 256}, 6, "bfloat16")},
      "d", {32, 1024, 256}, "bfloat16");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const egg_k_idx egg_e = egg_base + (kR - 1 - egg_r) * kInner;"))
      << r.device;
  EXPECT_TRUE(has(r.device, "const egg_k_idx egg_eo = egg_base + (kR - 1 - egg_r) * kInner;"));
  EXPECT_TRUE(has(r.device, "egg_carry = egg_k_opd(egg_carry, static_cast<double>(egg_x));"));
  EXPECT_TRUE(has(r.device, "const float e0 = (egg_a - 1.0f * egg_x);"));
  EXPECT_TRUE(has(r.device, "out0[egg_eo] = egg_from_float<__nv_bfloat16>(egg_out[0]);"));
  EXPECT_TRUE(has(r.launch, "egg_k_col<1><<<dim3(32, 1), 256, 0, stream>>>(x, out0, 0);"))
      << r.launch;
}

TEST(Reduction, MaskedScanReadsTheBoolMaskAsVectors) {
  auto j = spec_of({input("x", {4096, 8192}), input("mask", {4096, 8192}, "bool")}, json::array(),
                   {node("m", "mul", {ref("x"), ref("mask")}, json::object(), {4096, 8192}, 5),
                    node("c", "cumsum", {ref("m")}, {{"dim", 1}}, {4096, 8192}, 5)},
                   "c", {4096, 8192});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_load_vec<bool, VEC>(mask + egg_base + egg_c)")) << r.device;
  EXPECT_TRUE(has(r.device, "egg_to_float(mask_v.v[egg_j])"));
  EXPECT_TRUE(has(r.device, "const float p0 = (a0 * a1);"));
  EXPECT_TRUE(has(r.launch, "egg_k_scan<16><<<4096, 256, 0, stream>>>(x, mask, out0, 0);"))
      << r.launch;
}

TEST(Reduction, RejectsFlipsTheScanCannotFuse) {
  ReductionFamily family(kData);
  auto why_of = [&](json nodes, const std::string& out, json shape, json inputs = x_of({64, 128})) {
    return family.cannot_implement(
        spec::parse_spec(spec_of(inputs, json::array(), nodes, out, shape)));
  };
  // Along another dim than the scanned one.
  auto other = why_of({flip("f", "x", {0}, {64, 128}, 4),
                       node("c", "cumsum", {ref("f")}, {{"dim", 1}}, {64, 128}, 5)},
                      "c", {64, 128});
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->where().line, 4);
  EXPECT_TRUE(has(other->describe(), "flips dim 0, but the scan runs along dim 1"))
      << other->describe();
  // Around a reduction (not a scan).
  auto red = why_of({flip("f", "x", {1}, {64, 128}, 4),
                     node("s", "sum", {ref("f")}, {{"dim", 1}, {"keepdim", false}}, {64}, 5)},
                    "s", {64});
  ASSERT_TRUE(red.has_value());
  EXPECT_TRUE(has(red->describe(), "only around cumsum/cumprod")) << red->describe();
  // Inputs of the scan in opposite directions: flip(x) * mask.
  auto mixed = why_of({flip("f", "x", {1}, {64, 128}, 4),
                       node("m", "mul", {ref("f"), ref("y")}, json::object(), {64, 128}, 4),
                       node("c", "cumsum", {ref("m")}, {{"dim", 1}}, {64, 128}, 5)},
                      "c", {64, 128}, {input("x", {64, 128}), input("y", {64, 128})});
  ASSERT_TRUE(mixed.has_value());
  EXPECT_TRUE(has(mixed->describe(), "opposite directions")) << mixed->describe();
  EXPECT_TRUE(has(mixed->hint(), "flip the scan's input once")) << mixed->hint();
  // A row bias (constant along the scanned dim) may be read either way.
  auto bias = why_of({flip("f", "x", {1}, {64, 128}, 4),
                      node("m", "mul", {ref("f"), ref("y")}, json::object(), {64, 128}, 4),
                      node("c", "cumsum", {ref("m")}, {{"dim", 1}}, {64, 128}, 5)},
                     "c", {64, 128}, {input("x", {64, 128}), input("y", {64, 1})});
  EXPECT_FALSE(bias.has_value()) << bias->describe();
  // The epilogue combines the reversed-order scan with x in the forward order.
  auto epi = why_of({flip("f", "x", {1}, {64, 128}, 4),
                     node("c", "cumsum", {ref("f")}, {{"dim", 1}}, {64, 128}, 5),
                     node("d", "sub", {ref("c"), ref("x")}, {{"alpha", 1}}, {64, 128}, 7)},
                    "d", {64, 128});
  ASSERT_TRUE(epi.has_value());
  EXPECT_EQ(epi->where().line, 7);
  EXPECT_TRUE(has(epi->describe(), "opposite directions")) << epi->describe();
}

// ---- integer and bool inputs: exact long long values ------------------------------------------

// An int64 sum is exact at any size: long long values, the table's I reducer (wrapping adds), the
// input read in 16-byte vectors (two elements each) and passed to the index program as long
// long, the result stored as it is.
TEST(Reduction, IntegerSumsAreExactInLongLong) {
  auto j = spec_of(x_of({64, 1000}, "int64"), json::array(),
                   {node("s", "sum", {ref("x")},
                         {{"dim", {1}}, {"keepdim", false}, {"dtype", nullptr}}, {64}, 5, "int64")},
                   "s", {64}, "int64");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedSumI;")) << r.device;
  EXPECT_TRUE(has(r.device, "egg_k_gather(IndexT i, long long egg_e_x, const std::int64_t* "))
      << r.device;
  EXPECT_TRUE(has(r.device,
                  "const long long egg_x = egg_k_gather(egg_e, "
                  "static_cast<long long>(x_v.v[egg_j]), x, 0);"));
  EXPECT_TRUE(has(r.device, "egg_load_vec_once<std::int64_t, VEC>(x + egg_base + egg_c)"));
  EXPECT_TRUE(has(r.id, ":v2"));
  // The host's evaluation (tests/suite/host_eval.py) reads every element by pointer.
  EXPECT_TRUE(has(r.device, "egg_k_gather(egg_e, static_cast<long long>(x[egg_e]), x, 0)"));
  EXPECT_TRUE(has(r.device, "const long long egg_r = egg_st.v;"));
  EXPECT_TRUE(has(r.device, "out0[egg_o] = egg_from_int<std::int64_t>(egg_r);"));
  EXPECT_TRUE(has(r.device, "exact integers (long long)"));
  EXPECT_FALSE(has(r.device, "const float egg_x"));
}

// A count: the bool mask's comparison is the prologue, evaluated by index, its 0/1 entering the
// integer sum (one kernel, exact past 2^24 elements per row, where a float sum is not).
TEST(Reduction, ACountSumsTheMaskAsIntegers) {
  const std::int64_t cols = (std::int64_t(1) << 24) + 8;
  auto j = spec_of(x_of({2, cols}), json::array(),
                   {node("m", "gt", {ref("x"), num(0.0)}, json::object(), {2, cols}, 5, "bool"),
                    node("c", "sum", {ref("m")},
                         {{"dim", {1}}, {"keepdim", false}, {"dtype", nullptr}}, {2}, 5, "int64")},
                   "c", {2}, "int64");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedSumI;")) << r.device;
  EXPECT_TRUE(has(r.device, "? 1.0f : 0.0f)"));  // the comparison, by index
}

// Integer scans carry in long long from the table's integer identity; cummax keeps the input's
// dtype and starts at the smallest integer.
TEST(Reduction, IntegerScansCarryInLongLong) {
  struct Case {
    const char* op;
    const char* combine;
    const char* identity;
    const char* out_dtype;
    const char* ctype;
  };
  for (const Case& c :
       {Case{"cumsum", "return egg_red_add(egg_a, egg_b);", "0LL", "int64", "std::int64_t"},
        Case{"cumprod", "return egg_red_mul(egg_a, egg_b);", "1LL", "int64", "std::int64_t"},
        Case{"cummax", "return egg_scan_max(egg_a, egg_b);", "LLONG_MIN", "int32",
             "std::int32_t"}}) {
    auto j = spec_of(x_of({256, 4096}, "int32"), json::array(),
                     {node("c", c.op, {ref("x")}, {{"dim", 1}}, {256, 4096}, 5, c.out_dtype)}, "c",
                     {256, 4096}, c.out_dtype);
    auto r = render_first(j);
    EXPECT_EQ(count(r.device, c.combine), 2u) << c.op << r.device;  // in a chunk and the carry
    EXPECT_TRUE(has(r.device, std::string("long long egg_carry = ") + c.identity + ";")) << c.op;
    EXPECT_TRUE(has(r.device, std::string("egg_from_int<") + c.ctype + ">")) << c.op;
    EXPECT_FALSE(has(r.device, "double egg_carry")) << c.op;
  }
}

// max with a dim over int32 values: the arg reducer on long long values, the values stored in the
// input's dtype and the indices as int64.
TEST(Reduction, IntegerMaxWithIndices) {
  auto j =
      spec_of(x_of({4096, 512}, "int32"), json::array(),
              {node("m", "max", {ref("x")}, {{"dim", -1}, {"keepdim", false}}, {4096}, 5, "int32"),
               node("i", "getitem", {ref("m"), num(1)}, json::object(), {4096}, 5, "int64")},
              "i", {4096}, "int64");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "using egg_k_red = EggRedArgMax32I;")) << r.device;
  EXPECT_TRUE(has(r.device, "static_cast<std::int64_t>(egg_st.i)"));
}

// Element-wise work on an integer result runs as a kernel of its own (computed exactly by the
// fusion IR there): the reduction family names the op and its line, the planner splits it off.
TEST(Reduction, AnIntegerResultIsWrittenAsItIsAndThePlannerSplitsTheRest) {
  auto j = spec_of(x_of({64, 1000}, "int64"), json::array(),
                   {node("s", "sum", {ref("x")},
                         {{"dim", {1}}, {"keepdim", false}, {"dtype", nullptr}}, {64}, 5, "int64"),
                    node("t", "mul", {ref("s"), num(3)}, json::object(), {64}, 7, "int64")},
                   "t", {64}, "int64");
  const auto s = spec::parse_spec(j);
  auto why = ReductionFamily(kData).cannot_implement(s);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 7);
  EXPECT_TRUE(has(why->describe(), "writes integer results as they are")) << why->describe();
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(s).segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "reduction elementwise ");
}

TEST(Reduction, TuningAndFallbackAreValid) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({4096, 8192}), json::array(),
                   {node("r", "softmax", {ref("x")}, {{"dim", -1}}, {4096, 8192}, 5)}, "r",
                   {4096, 8192});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_FALSE(cands.empty());
  auto tunes = family.tunings(s, c, cands.front(), "memory");
  EXPECT_GT(tunes.size(), 3u);
  for (const auto& t : tunes) EXPECT_FALSE(t.code.device_code.empty());
  auto fb = family.fallback(s, c, cands.front());
  ASSERT_TRUE(fb.has_value());
  EXPECT_TRUE(has(fb->code.launch_body, "egg_k_row<1>")) << fb->code.launch_body;
  EXPECT_FALSE(family.fallback(s, c, *fb).has_value());
}

// No thread of a row reduction adds up more than 16 K elements in fp32: a mean over 2^30
// elements (one row) is split in every structure, tuning and fallback, and a sum of 256 rows of
// 2^24 is too, though its rows alone would fill the GPU.
TEST(Reduction, LongRowsAreSplitSoNoThreadAddsUpTooManyElements) {
  ReductionFamily family(kData);
  auto per_thread = [](const std::string& id, std::int64_t R) {
    std::smatch t, sp;
    EXPECT_TRUE(std::regex_search(id, t, std::regex(":t([0-9]+)"))) << id;
    const std::int64_t tpr = std::stoll(t[1]);
    const std::int64_t split =
        std::regex_search(id, sp, std::regex(":s([0-9]+)")) ? std::stoll(sp[1]) : 1;
    return (R + tpr * split - 1) / (tpr * split);
  };
  for (const auto& [shape, R] : std::vector<std::pair<json, std::int64_t>>{
           {json{32768, 32768}, std::int64_t{1} << 30}, {json{256, 16777216}, 16777216}}) {
    const bool full = R == (std::int64_t{1} << 30);
    auto j = spec_of(x_of(shape), json::array(),
                     {node("s", "sum", {ref("x")},
                           {{"dim", full ? json(nullptr) : json(-1)}, {"keepdim", false}},
                           full ? json::array() : json{256}, 3)},
                     "s", full ? json::array() : json{256});
    auto s = spec::parse_spec(j);
    auto c = contract::derive(s, "k");
    auto cands = family.structures(s, c);
    ASSERT_FALSE(cands.empty()) << shape;
    for (const auto& cand : cands) EXPECT_LE(per_thread(cand.id, R), 16384) << cand.id;
    for (const auto& t : family.tunings(s, c, cands.front(), "memory"))
      EXPECT_LE(per_thread(t.id, R), 16384) << t.id;
    auto fb = family.fallback(s, c, cands.front());
    ASSERT_TRUE(fb.has_value());
    EXPECT_LE(per_thread(fb->id, R), 16384) << fb->id;
  }
}

TEST(Reduction, MemoryBoundColumnsTryMoreLoadsInFlightFirst) {
  ReductionFamily family(kData);
  auto j = spec_of(x_of({16, 2048, 1024}), json::array(),
                   {node("r", "sum", {ref("x")}, {{"dim", 1}, {"keepdim", false}}, {16, 1024}, 5)},
                   "r", {16, 1024});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  const auto first = family.structures(s, c).front();
  ASSERT_TRUE(has(first.id, "reduction.reduce.col:")) << first.id;
  auto memory = family.tunings(s, c, first, "memory");
  ASSERT_GE(memory.size(), 3u);
  EXPECT_EQ(memory[0].id, first.id);                                    // the incumbent
  EXPECT_TRUE(has(memory[1].id, "b512:s9:v4:u4:g16")) << memory[1].id;  // more per column next
  EXPECT_EQ(memory[2].params["split"].get<int>(), 2 * first.params["split"].get<int>());
  auto compute = family.tunings(s, c, first, "compute");
  ASSERT_GE(compute.size(), 2u);
  EXPECT_FALSE(has(compute[1].id, ":g"))
      << compute[1].id;  // no reordering without a memory bottleneck: the other column sharings
  // The split-only layout (no shared columns) tries a deeper unroll first when memory-bound.
  const auto split_only = family.structures(s, c).at(1);
  auto memory_split = family.tunings(s, c, split_only, "memory");
  ASSERT_GE(memory_split.size(), 3u);
  EXPECT_TRUE(has(memory_split[1].id, ":u8")) << memory_split[1].id;
  EXPECT_EQ(memory_split[2].params["split"].get<int>(), 2 * split_only.params["split"].get<int>());
}

// Writes every candidate (structures, tunings, fallback) of each spec.json under
// $EGG_RED_SPEC_DIR to $EGG_RED_OUT_DIR/<spec>/<n>.cu with its header, for compiling with nvcc by
// hand (tools outside the unit run). Skipped unless both are set.
// The op→CUDA knowledge is the table's (templates/reduction/anchors.json): modes, reducers and
// expressions, the norm orders' cases with their fields filled.
TEST(ReductionTable, AnchorsAndNormCasesComeFromTheTable) {
  const ReductionOps table(kData);
  ASSERT_NE(table.anchor("softmax"), nullptr);
  EXPECT_EQ(table.anchor("softmax")->mode, ReductionMode::normalize);
  EXPECT_EQ(table.anchor("softmax")->reducer, "EggRedSoftmax");
  EXPECT_EQ(table.anchor("cumprod")->mode, ReductionMode::scan);
  EXPECT_EQ(table.anchor("cumprod")->scan_op, "egg_a * egg_b");
  EXPECT_EQ(table.anchor("cummax")->scan_identity, "-INFINITY");
  EXPECT_EQ(table.anchor("max")->with_indices, "EggRedArgMax");
  EXPECT_TRUE(table.anchor("argmin")->indices);
  EXPECT_EQ(table.anchor("relu"), nullptr);
  EXPECT_EQ(table.norm_case(2).row, "sqrtf(egg_st.v)");
  EXPECT_EQ(table.norm_case(3).in, "powf(fabsf(egg_x), 3.0f)");
  EXPECT_EQ(table.norm_case(3).row, "powf(egg_st.v, 0.333333343f)");
  EXPECT_EQ(table.norm_case(-std::numeric_limits<double>::infinity()).reducer, "EggRedMin");
  EXPECT_EQ(table.norm_case(1).row, "");  // the anchor's own: the sum itself
}

TEST(ReductionTable, APlanTakesTheTablesExpressions) {
  const ReductionFamily family(kData);
  auto reduce = [&](const char* op, json attrs) {
    return family.plan(spec::parse_spec(
        egg::testing::spec_around({egg::testing::tensor("x", {8, 96})}, json::array(),
                                  {node("r", op, {ref("x")}, attrs, {8}, 4)})));
  };
  const auto norm3 = reduce("norm", {{"p", 3}, {"dim", 1}});
  EXPECT_EQ(norm3.in_expr, "powf(fabsf(egg_x), 3.0f)");
  EXPECT_EQ(norm3.row_expr, "powf(egg_st.v, 0.333333343f)");
  EXPECT_EQ(reduce("mean", {{"dim", 1}}).row_expr, "(egg_st.v / 96.0f)");
  EXPECT_EQ(reduce("amax", {{"dim", 1}}).reducer, "EggRedMax");
}

// A table that is not what the family reads is an internal error naming the file, before any
// spec is planned.
TEST(ReductionTable, ABrokenTableIsAnInternalErrorNamingTheFile) {
  TempDir dir(std::filesystem::temp_directory_path(), "egg-reduction-table");
  std::filesystem::create_directories(dir.path() / "reduction");
  write_atomic(dir.path() / "reduction" / "anchors.json", "{\"anchors\": {}}");
  try {
    ReductionOps table(dir.path());
    FAIL() << "expected an InternalError";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("anchors.json"), std::string::npos) << e.what();
  }
  write_atomic(dir.path() / "reduction" / "anchors.json",
               "{\"anchors\": {\"sum\": {\"mode\": \"fold\", \"reducer\": \"EggRedSum\"}}, "
               "\"norms\": {}}");
  EXPECT_THROW(ReductionOps{dir.path()}, InternalError);
}

TEST(Reduction, DumpEveryCandidateForNvcc) {
  const char* in = std::getenv("EGG_RED_SPEC_DIR");
  const char* out = std::getenv("EGG_RED_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_RED_SPEC_DIR and EGG_RED_OUT_DIR";
  egg::testing::dump_every_candidate(ReductionFamily(kData), kData, in, out);
}

}  // namespace
}  // namespace egg::backend::builtin
