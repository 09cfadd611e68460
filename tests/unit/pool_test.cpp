// Pool family: output-size math (ceil_mode), can_implement (accepts/rejects with lines), rendering
// of max/avg pooling with prologue/epilogue, divisor rules, tuning and fallback. FileCheck style.
#include "backend/builtin/pool.h"

#include <gtest/gtest.h>

#include "dump_candidates.h"
#include "nvcc_compile.h"
#include "spec_fixtures.h"

#include <cstdlib>

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::as_list;
using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

// A one-input spec with the output at node out_node.
json spec_of(json in_shape, json nodes, const std::string& out_node, json out_shape,
             const std::string& dtype = "float32") {
  return {
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs", {{{"name", "x"}, {"shape", in_shape}, {"dtype", dtype}}}},
      {"params", json::array()},
      {"nodes", as_list(nodes)},
      {"outputs", {{{"name", "out0"}, {"node", out_node}, {"shape", out_shape}, {"dtype", dtype}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

json num(double v) { return {{"scalar", v}}; }

json max2d(json k, json s, json p, json d, bool ceil) {
  return {{"kernel_size", k}, {"stride", s},       {"padding", p},
          {"dilation", d},    {"ceil_mode", ceil}, {"return_indices", false}};
}
json avg(json k, json s, json p, bool ceil, bool include, json divisor) {
  return {{"kernel_size", k},
          {"stride", s},
          {"padding", p},
          {"ceil_mode", ceil},
          {"count_include_pad", include},
          {"divisor_override", divisor}};
}

struct Rendered {
  std::string device, launch, id;
};

Rendered render_first(const json& j, size_t which = 0) {
  PoolFamily family(kData);
  auto s = spec::parse_spec(j);
  auto why = family.cannot_implement(s);
  EXPECT_FALSE(why.has_value()) << (why ? why->describe() : "");
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  EXPECT_GT(cands.size(), which);
  if (cands.size() <= which) return {};
  return {cands[which].code.device_code, cands[which].code.launch_body, cands[which].id};
}

// ---- output size -------------------------------------------------------------------------

TEST(Pool, OutputSizeMatchesATen) {
  EXPECT_EQ(pool_output_size(112, 3, 1, 2, 1, false), 56);  // ResNet stem
  EXPECT_EQ(pool_output_size(7, 2, 0, 2, 1, false), 3);
  EXPECT_EQ(pool_output_size(7, 2, 0, 2, 1, true), 4);  // ceil_mode keeps the partial window
  EXPECT_EQ(pool_output_size(6, 2, 0, 2, 1, true), 3);  // exact fit: ceil_mode adds nothing
  EXPECT_EQ(pool_output_size(5, 3, 1, 2, 1, true), 3);
  // ceil_mode: a last window that would start in the right padding is dropped.
  EXPECT_EQ(pool_output_size(5, 2, 1, 2, 1, true), 3);
  EXPECT_EQ(pool_output_size(8192, 4, 2, 2, 3, true),
            4094);  // dilated: (8192+4-10+1)/2 rounded up, +1
  EXPECT_EQ(pool_output_size(8192, 4, 2, 2, 3, false), 4094);
  EXPECT_EQ(pool_output_size(96, 3, 1, 2, 1, true), 49);
  EXPECT_EQ(pool_output_size(2, 3, 0, 1, 1, false), 0);  // window larger than the input: empty
}

// ---- can_implement -----------------------------------------------------------------------

TEST(Pool, AcceptsMaxAndAvgIn1d2d3d) {
  PoolFamily family(kData);
  auto j1 =
      spec_of({8, 16, 64},
              {node("p", "max_pool1d", {ref("x")}, max2d(2, nullptr, 0, 1, false), {8, 16, 32}, 5)},
              "p", {8, 16, 32});
  auto j2 = spec_of(
      {8, 16, 32, 32},
      {node("p", "avg_pool2d", {ref("x")}, avg(3, 2, 1, true, false, nullptr), {8, 16, 17, 17}, 5)},
      "p", {8, 16, 17, 17});
  auto j3 = spec_of({2, 4, 8, 8, 8},
                    {node("p", "max_pool3d", {ref("x")}, max2d({2, 2, 2}, {2, 2, 2}, 0, 1, false),
                          {2, 4, 4, 4, 4}, 5)},
                    "p", {2, 4, 4, 4, 4});
  auto unbatched = spec_of(
      {16, 32, 32},
      {node("p", "max_pool2d", {ref("x")}, max2d(2, json::array(), 0, 1, false), {16, 16, 16}, 5)},
      "p", {16, 16, 16});
  for (const auto& j : {j1, j2, j3, unbatched}) {
    auto why = family.cannot_implement(spec::parse_spec(j));
    EXPECT_FALSE(why.has_value()) << why->describe();
  }
}

TEST(Pool, RejectsIndicesAdaptiveAndSecondPoolWithLines) {
  PoolFamily family(kData);
  auto attrs = max2d(2, 2, 0, 1, false);
  attrs["return_indices"] = true;
  auto idx =
      spec_of({8, 16, 32, 32}, {node("p", "max_pool2d", {ref("x")}, attrs, {8, 16, 16, 16}, 7)},
              "p", {8, 16, 16, 16});
  auto why = family.cannot_implement(spec::parse_spec(idx));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 7);
  EXPECT_TRUE(has(why->describe(), "return_indices=True")) << why->describe();

  // Adaptive pooling whose output sizes do not divide the input (windows of unequal size).
  auto ad = spec_of(
      {8, 16, 32, 30},
      {node("p", "adaptive_avg_pool2d", {ref("x")}, {{"output_size", {4, 7}}}, {8, 16, 4, 7}, 9)},
      "p", {8, 16, 4, 7});
  auto why2 = family.cannot_implement(spec::parse_spec(ad));
  ASSERT_TRUE(why2.has_value());
  EXPECT_EQ(why2->where().line, 9);
  EXPECT_TRUE(has(why2->describe(), "adaptive_avg_pool2d")) << why2->describe();
  EXPECT_TRUE(has(why2->describe(), "divides")) << why2->describe();

  auto two =
      spec_of({8, 16, 32, 32},
              {node("p", "max_pool2d", {ref("x")}, max2d(2, 2, 0, 1, false), {8, 16, 16, 16}, 4),
               node("q", "max_pool2d", {ref("p")}, max2d(2, 2, 0, 1, false), {8, 16, 8, 8}, 6)},
              "q", {8, 16, 8, 8});
  auto why3 = family.cannot_implement(spec::parse_spec(two));
  ASSERT_TRUE(why3.has_value());
  EXPECT_EQ(why3->where().line, 6);
  EXPECT_TRUE(has(why3->describe(), "second pool")) << why3->describe();

  auto none =
      spec_of({8, 16}, {node("r", "relu", {ref("x")}, json::object(), {8, 16}, 3)}, "r", {8, 16});
  auto why4 = family.cannot_implement(spec::parse_spec(none));
  ASSERT_TRUE(why4.has_value());
  EXPECT_EQ(why4->where().line, 0);
}

// Adaptive pooling with output sizes that divide the input is a fixed pool with kernel = stride =
// in/out (ATen's windows are then equal): global average pooling, a 2x max pool, 1d and 3d.
TEST(Pool, AdaptivePoolsWithDividingOutputsAreFixedWindows) {
  PoolFamily family(kData);
  auto global = spec::parse_spec(
      spec_of({8, 16, 32, 24},
              {node("p", "adaptive_avg_pool2d", {ref("x")}, {{"output_size", 1}}, {8, 16, 1, 1}, 9),
               node("r", "relu", {ref("p")}, json::object(), {8, 16, 1, 1}, 10)},
              "r", {8, 16, 1, 1}));
  auto plan = std::get<PoolPlan>(plan_pool(global, OpTable(kData)));
  EXPECT_FALSE(plan.max);
  EXPECT_EQ(plan.kernel, (std::array<std::int64_t, 3>{1, 32, 24}));
  EXPECT_EQ(plan.stride, plan.kernel);
  EXPECT_EQ(plan.pad, (std::array<std::int64_t, 3>{0, 0, 0}));
  EXPECT_EQ(plan.out, (std::array<std::int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(plan.epilogue.size(), 1u);

  auto half = spec::parse_spec(
      spec_of({4, 8, 64},
              {node("p", "adaptive_max_pool1d", {ref("x")},
                    {{"output_size", 32}, {"return_indices", false}}, {4, 8, 32}, 5)},
              "p", {4, 8, 32}));
  plan = std::get<PoolPlan>(plan_pool(half, OpTable(kData)));
  EXPECT_TRUE(plan.max);
  EXPECT_EQ(plan.kernel[2], 2);
  EXPECT_EQ(plan.stride[2], 2);

  auto cube =
      spec::parse_spec(spec_of({2, 4, 8, 6, 4},
                               {node("p", "adaptive_avg_pool3d", {ref("x")},
                                     {{"output_size", {2, nullptr, 1}}}, {2, 4, 2, 6, 1}, 5)},
                               "p", {2, 4, 2, 6, 1}));
  plan = std::get<PoolPlan>(plan_pool(cube, OpTable(kData)));
  EXPECT_EQ(plan.kernel, (std::array<std::int64_t, 3>{4, 1, 4}));

  // Every candidate renders and compiles (the window loop for a window over 64 elements).
  const auto c = contract::derive(global, "k");
  const auto cands = family.structures(global, c);
  ASSERT_FALSE(cands.empty());
  for (const auto& cand : cands) EXPECT_TRUE(has(cand.summary, "window loop")) << cand.summary;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    for (const auto& cand : cands)
      EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, cand), "");
  }
}

TEST(Pool, RejectsAShapeThatDisagreesWithTheFormula) {
  PoolFamily family(kData);
  // ceil_mode=True on 7 with k2 s2 gives 4, not 3.
  auto j = spec_of({1, 1, 7, 7},
                   {node("p", "max_pool2d", {ref("x")}, max2d(2, 2, 0, 1, true), {1, 1, 3, 3}, 5)},
                   "p", {1, 1, 3, 3});
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 5);
  EXPECT_TRUE(has(why->describe(), "[1, 1, 4, 4]")) << why->describe();
}

TEST(Pool, RejectsReadingThePoolInputAfterThePool) {
  PoolFamily family(kData);
  auto j =
      spec_of({8, 16, 32, 32},
              {node("r", "relu", {ref("x")}, json::object(), {8, 16, 32, 32}, 3),
               node("p", "max_pool2d", {ref("r")}, max2d(2, 2, 0, 1, false), {8, 16, 16, 16}, 4),
               node("s", "sum", {ref("p")}, {{"dim", 1}}, {8, 16, 16}, 8)},
              "s", {8, 16, 16});
  auto why = family.cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 8);
  EXPECT_TRUE(has(why->describe(), "only element-wise ops fuse")) << why->describe();

  // An epilogue op reading the pool's input side: the epilogue sees the pool's result only.
  auto side =
      spec_of({8, 16, 32, 32},
              {node("r", "relu", {ref("x")}, json::object(), {8, 16, 32, 32}, 3),
               node("p", "max_pool2d", {ref("r")}, max2d(2, 2, 0, 1, false), {8, 16, 16, 16}, 4),
               node("m", "mul", {ref("p"), ref("r")}, json::object(), {8, 16, 16, 16}, 9)},
              "m", {8, 16, 16, 16});
  auto side_why = family.cannot_implement(spec::parse_spec(side));
  ASSERT_TRUE(side_why.has_value());
  EXPECT_EQ(side_why->where().line, 9);
  EXPECT_TRUE(has(side_why->describe(), "sees its result only")) << side_why->describe();
}

TEST(Pool, BackendPicksPool) {
  BuiltinBackend backend(kData);
  auto j =
      spec_of({8, 16, 32, 32},
              {node("p", "max_pool2d", {ref("x")}, max2d(3, 2, 1, 1, false), {8, 16, 16, 16}, 5)},
              "p", {8, 16, 16, 16});
  EXPECT_NO_THROW(backend.check_supported(spec::parse_spec(j)));
}

// ---- rendering -------------------------------------------------------------------------

TEST(Pool, MaxPoolWithReluPrologueAndEpilogue) {
  auto j =
      spec_of({32, 64, 112, 112},
              {node("r", "relu", {ref("x")}, json::object(), {32, 64, 112, 112}, 3),
               node("p", "max_pool2d", {ref("r")}, max2d(3, 2, 1, 1, false), {32, 64, 56, 56}, 4),
               node("m", "mul", {ref("p"), num(2.0)}, json::object(), {32, 64, 56, 56}, 5)},
              "m", {32, 64, 56, 56});
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "constexpr int kD = 1, kH = 112, kW = 112;")) << r.device;
  EXPECT_TRUE(has(r.device, "constexpr int kOD = 1, kOH = 56, kOW = 56;"));
  EXPECT_TRUE(has(r.device, "constexpr int kKD = 1, kKH = 3, kKW = 3;"));
  EXPECT_TRUE(has(r.device, "constexpr int kPD = 0, kPH = 1, kPW = 1;"));
  EXPECT_TRUE(has(r.device, "float egg_acc = -INFINITY;"));
  EXPECT_TRUE(has(r.device, "egg_acc = (egg_x > egg_acc || egg_x != egg_x) ? egg_x : egg_acc;"));
  EXPECT_TRUE(has(r.device, "const float egg_a0 = egg_to_float(x[egg_e]);"));
  EXPECT_TRUE(has(r.device, "const float egg_p0 = egg_relu(egg_a0);"));
  EXPECT_TRUE(has(r.device, "const float egg_e0 = (egg_r * 2.0f);"));
  EXPECT_TRUE(has(r.device, "egg_vals[0] = egg_e0;"));
  EXPECT_TRUE(has(r.device, "egg_res[0][egg_q] = egg_vals[0];"));
  EXPECT_TRUE(has(r.device, "#pragma unroll \n")) << r.id;  // small window: fully unrolled
  EXPECT_TRUE(has(r.launch, "egg_k_pool<1, false><<<25088, 256, 0, stream>>>(x, out0, 0);"))
      << r.launch;
  // The second structure (3x3 windows at stride 2 overlap along H) is the tiled one; the third: 4
  // outputs along W per thread, stored as one 16-byte vector.
  EXPECT_TRUE(has(render_first(j, 1).id, ":tile"));
  auto wide = render_first(j, 3);
  EXPECT_TRUE(has(wide.launch, "egg_k_pool<4, true><<<6272, 256, 0, stream>>>(x, out0, 0);"))
      << wide.launch;
  EXPECT_TRUE(has(wide.launch, "egg_k_aligned(out0)"));
}

// max_pool2d of [32, 64, 512, 512] with 4x4 windows at stride 1, padding 1: windows that overlap
// along both H and W (KernelBench level 1's 42).
json overlapping_4x4() {
  return spec_of(
      {32, 64, 512, 512},
      {node("p", "max_pool2d", {ref("x")}, max2d(4, 1, 1, 1, false), {32, 64, 511, 511}, 4)}, "p",
      {32, 64, 511, 511});
}

// Overlapping windows (4x4, stride 1): the second structure reads each window row's span of
// 4 + 3 inputs once into registers for a thread's 4 outputs (16 reads per output otherwise), with
// scalar stores where the output width (511) is no multiple of 4; stage 2 toggles the span off.
// Windows that do not overlap (2x2, stride 2) get no such structure.
TEST(Pool, OverlappingWindowsReadEachRowSpanOnce) {
  PoolFamily family(kData);
  auto j = overlapping_4x4();
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_EQ(cands.size(), 4u);
  EXPECT_EQ(cands[1].id, "pool.max2d:b256:o1:unrolled:tile");
  cands.erase(cands.begin() + 1);  // the tiled structure: Pool.OverlappingRowsAreReadOnceIntoATile
  EXPECT_EQ(cands[1].id, "pool.max2d:b256:o4:unrolled:reuse");
  EXPECT_EQ(cands[2].id, "pool.max2d:b256:o4:unrolled");
  const std::string& d = cands[1].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int kSpan = (OPT - 1) * kSW + (kKW - 1) * kDW + 1;")) << d;
  EXPECT_TRUE(has(d, "const float egg_x = egg_row[egg_q * kSW + egg_kw * kDW];"));
  EXPECT_TRUE(has(d,
                  "egg_accs[egg_q] = (egg_x > egg_accs[egg_q] || egg_x != egg_x) ? egg_x : "
                  "egg_accs[egg_q];"));
  EXPECT_FALSE(has(cands[2].code.device_code, "egg_row[kSpan]"));
  EXPECT_TRUE(has(cands[1].code.launch_body, "egg_k_pool<4, false>")) << cands[1].code.launch_body;
  bool off = false;
  for (const auto& t : family.tunings(s, c, cands[1], "memory")) off = off || !has(t.id, ":reuse");
  EXPECT_TRUE(off);
  auto disjoint = spec_of(
      {32, 64, 512, 512},
      {node("p", "max_pool2d", {ref("x")}, max2d(2, 2, 0, 1, false), {32, 64, 256, 256}, 4)}, "p",
      {32, 64, 256, 256});
  auto ds = spec::parse_spec(disjoint);
  for (const auto& cand : family.structures(ds, contract::derive(ds, "k"))) {
    EXPECT_FALSE(has(cand.id, ":reuse")) << cand.id;
    EXPECT_FALSE(has(cand.id, ":tile")) << cand.id;
  }
}

// 2-d windows overlapping along H (4x4 at stride 1): the tiled structure, second in stage 1, has
// a block per 32 x 128 outputs read its 35 x 131 input tile once into shared memory (-inf outside
// the input), reduce each row along W into a 35 x 128 tile and then along H; its grid covers the
// planes' tiles, and stage 2 toggles it off. An average pool's divisor is the one shared helper's.
TEST(Pool, OverlappingRowsAreReadOnceIntoATile) {
  PoolFamily family(kData);
  auto j = overlapping_4x4();
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  const Candidate& t = cands[1];
  EXPECT_EQ(t.id, "pool.max2d:b256:o1:unrolled:tile");
  const std::string& d = t.code.device_code;
  EXPECT_TRUE(has(d, "constexpr int kTH = 32, kTW = 128;")) << d;
  EXPECT_TRUE(has(d, "__shared__ float egg_in_t[kIH][kIW];"));
  EXPECT_TRUE(has(d, "float egg_x = -INFINITY;"));
  EXPECT_TRUE(has(d, "const float egg_x = egg_in_t[egg_r][egg_q * kSW + egg_kw * kDW];"));
  EXPECT_TRUE(has(d, "const float egg_x = egg_w_t[egg_r * kSH + egg_kh * kDH][egg_q];"));
  EXPECT_TRUE(has(d, "out0[egg_o] = egg_from_float<float>(egg_vals[0]);"));
  EXPECT_TRUE(has(t.summary, "32 x 128 output tile")) << t.summary;
  // 2048 planes x 16 tiles down x 4 across.
  EXPECT_TRUE(has(t.code.launch_body, "egg_k_pool_tile<<<131072, 256, 0, stream>>>(x, out0, 0);"))
      << t.code.launch_body;
  bool off = false;
  for (const auto& u : family.tunings(s, c, t, "memory")) off = off || !has(u.id, ":tile");
  EXPECT_TRUE(off);

  auto avg_j = spec_of(
      {8, 16, 33, 33},
      {node("p", "avg_pool2d", {ref("x")}, avg(3, 1, 1, true, false, nullptr), {8, 16, 33, 33}, 5)},
      "p", {8, 16, 33, 33});
  auto as = spec::parse_spec(avg_j);
  const auto avg_cands = family.structures(as, contract::derive(as, "k"));
  ASSERT_GE(avg_cands.size(), 2u);
  EXPECT_TRUE(has(avg_cands[1].id, ":tile")) << avg_cands[1].id;
  EXPECT_TRUE(has(avg_cands[1].code.device_code, "float egg_x = 0.0f;"));
  EXPECT_TRUE(has(avg_cands[1].code.device_code, "const int egg_div = egg_dn * egg_hn * egg_wn;"));
  EXPECT_TRUE(has(avg_cands[1].code.device_code, "egg_k_pooled(egg_acc, 0, egg_oh * kSH - kPH"));
}

// 1-d windows that overlap (8 taps at dilation 3, stride 1, padding 4; KernelBench level 1's 41
// at a smaller size): the tiled structure, second in stage 1, has a block per row of 1024 outputs
// read its input span of 1024 + 21 once into shared memory; 1-d windows that do not overlap
// (stride 2, window 2) get no tile. The tiled candidate compiles with the real nvcc.
TEST(Pool, Overlapping1dWindowsReadTheirRowSpanOnceIntoATile) {
  PoolFamily family(kData);
  auto j = spec_of({4, 8, 4096},
                   {node("p", "max_pool1d", {ref("x")}, max2d(8, 1, 4, 3, false), {4, 8, 4083}, 5)},
                   "p", {4, 8, 4083});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_GE(cands.size(), 2u);
  const Candidate& t = cands[1];
  EXPECT_EQ(t.id, "pool.max1d:b256:o1:unrolled:tile");
  const std::string& d = t.code.device_code;
  EXPECT_TRUE(has(d, "constexpr int kTH = 1, kTW = 1024;")) << d;
  EXPECT_TRUE(has(d, "constexpr int kKH = 1, kKW = 8;")) << d;
  EXPECT_TRUE(has(t.summary, "1 x 1024 output tile")) << t.summary;
  // 32 planes x 4 tiles along the row (4083 outputs).
  EXPECT_TRUE(has(t.code.launch_body, "egg_k_pool_tile<<<128, 256, 0, stream>>>(x, out0, 0);"))
      << t.code.launch_body;
  if (const auto nvcc = egg::testing::real_nvcc()) {
    EXPECT_EQ(egg::testing::nvcc_compile_error(*nvcc, kData, c, t), "");
  }
  auto disjoint = spec::parse_spec(
      spec_of({4, 8, 4096},
              {node("p", "max_pool1d", {ref("x")}, max2d(2, 2, 0, 1, false), {4, 8, 2048}, 5)}, "p",
              {4, 8, 2048}));
  for (const auto& cand : family.structures(disjoint, contract::derive(disjoint, "k")))
    EXPECT_FALSE(has(cand.id, ":tile")) << cand.id;
}

TEST(Pool, AvgPoolDivisorRules) {
  auto include = spec_of(
      {8, 16, 33, 33},
      {node("p", "avg_pool2d", {ref("x")}, avg(3, 2, 1, true, true, nullptr), {8, 16, 17, 17}, 5)},
      "p", {8, 16, 17, 17});
  auto r = render_first(include);
  EXPECT_TRUE(has(r.device,
                  "const int egg_div = (min(egg_d0 + kKD, kD + kPD) - egg_d0) * (min(egg_h0 + kKH, "
                  "kH + kPH) - egg_h0) *"))
      << r.device;
  EXPECT_TRUE(has(r.device, "egg_acc / float(egg_div)"));
  auto exclude = spec_of(
      {8, 16, 33, 33},
      {node("p", "avg_pool2d", {ref("x")}, avg(3, 2, 1, true, false, nullptr), {8, 16, 17, 17}, 5)},
      "p", {8, 16, 17, 17});
  EXPECT_TRUE(has(render_first(exclude).device, "const int egg_div = egg_dn * egg_hn * egg_wn;"));
  auto over = spec_of(
      {8, 16, 32, 32},
      {node("p", "avg_pool2d", {ref("x")}, avg(2, 2, 0, false, true, 3), {8, 16, 16, 16}, 5)}, "p",
      {8, 16, 16, 16});
  EXPECT_TRUE(has(render_first(over).device, "const int egg_div = 3;"));
}

TEST(Pool, Pool3dHalfAndDilation) {
  auto j = spec_of({4, 8, 16, 32, 32},
                   {node("p", "max_pool3d", {ref("x")}, max2d(3, 2, 1, 2, false), {4, 8, 7, 15, 15},
                         5, "float16")},
                   "p", {4, 8, 7, 15, 15}, "float16");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "constexpr int kDD = 2, kDH = 2, kDW = 2;")) << r.device;
  EXPECT_TRUE(has(r.device, "const __half* __restrict__ x"));
  EXPECT_TRUE(has(r.device, "egg_from_float<__half>(egg_res[0][egg_q])"));
}

TEST(Pool, TuningAndFallbackAreValid) {
  PoolFamily family(kData);
  auto j =
      spec_of({32, 64, 112, 112},
              {node("p", "max_pool2d", {ref("x")}, max2d(3, 2, 1, 1, false), {32, 64, 56, 56}, 4)},
              "p", {32, 64, 56, 56});
  auto s = spec::parse_spec(j);
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_FALSE(cands.empty());
  auto tunes = family.tunings(s, c, cands.front(), "memory");
  EXPECT_GT(tunes.size(), 3u);
  for (const auto& t : tunes) EXPECT_FALSE(t.code.device_code.empty());
  auto fb = family.fallback(s, c, cands.front());
  ASSERT_TRUE(fb.has_value());
  EXPECT_TRUE(has(fb->code.device_code, "#pragma unroll 1")) << fb->id;
  EXPECT_TRUE(has(fb->code.launch_body, "egg_k_pool<1, false>"));
  EXPECT_FALSE(family.fallback(s, c, *fb).has_value());
}

// Writes every candidate of each spec.json under $EGG_POOL_SPEC_DIR to
// $EGG_POOL_OUT_DIR/<spec>/<n>.cu with its header, for compiling with nvcc by hand. Skipped unless
// both are set.
TEST(Pool, DumpEveryCandidateForNvcc) {
  const char* in = std::getenv("EGG_POOL_SPEC_DIR");
  const char* out = std::getenv("EGG_POOL_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_POOL_SPEC_DIR and EGG_POOL_OUT_DIR";
  egg::testing::dump_every_candidate(PoolFamily(kData), kData, in, out);
}

}  // namespace
}  // namespace egg::backend::builtin
