// Loss family: can_implement (accepts/rejects with lines), rendering of element-wise and row
// losses, reductions (mean, sum, batchmean, none) with the deterministic one-kernel sum, label
// smoothing and ignore_index, tuning and fallback. FileCheck style.
#include "backend/builtin/loss.h"

#include <gtest/gtest.h>

#include "dump_candidates.h"
#include "spec_fixtures.h"

#include "backend/builtin/builtin_backend.h"
#include "contract/contract.h"

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

json spec_of(json inputs, json nodes, const std::string& out_node, json out_shape,
             const std::string& dtype = "float32") {
  return {
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", json::array()},
      {"inputs", as_list(inputs)},
      {"params", json::array()},
      {"nodes", as_list(nodes)},
      {"outputs", {{{"name", "out0"}, {"node", out_node}, {"shape", out_shape}, {"dtype", dtype}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

json num(double v) { return {{"scalar", v}}; }

json pair_inputs(json shape, const std::string& dtype = "float32") {
  return json::array({tensor("x", shape, dtype), tensor("y", shape, dtype)});
}

json ce_spec(json attrs, json out_shape = json::array(), int line = 5) {
  return spec_of(
      {tensor("logits", {32768, 1000}), tensor("t", {32768}, "int64")},
      {node("l", "cross_entropy", {ref("logits"), ref("t"), none()}, attrs, out_shape, line)}, "l",
      out_shape);
}

struct Rendered {
  std::string device, launch, id;
};

Rendered render_first(const json& j, size_t which = 0) {
  LossFamily family(kData);
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

TEST(Loss, AcceptsEveryLoss) {
  LossFamily family(kData);
  for (const char* op :
       {"mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss", "kl_div", "hinge_embedding_loss"})
    for (const char* red : {"mean", "sum"}) {
      auto j =
          spec_of(pair_inputs({64, 128}),
                  {node("l", op, {ref("x"), ref("y")}, {{"reduction", red}}, json::array(), 5)},
                  "l", json::array());
      auto why = family.cannot_implement(spec::parse_spec(j));
      EXPECT_FALSE(why.has_value()) << op << ": " << why->describe();
    }
  auto none =
      spec_of(pair_inputs({64, 128}),
              {node("l", "mse_loss", {ref("x"), ref("y")}, {{"reduction", "none"}}, {64, 128}, 5)},
              "l", {64, 128});
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(none)).has_value());
  EXPECT_FALSE(family
                   .cannot_implement(spec::parse_spec(ce_spec(
                       {{"reduction", "mean"}, {"ignore_index", -100}, {"label_smoothing", 0.1}})))
                   .has_value());
  auto trip = spec_of(
      {tensor("a", {128, 4096}), tensor("p", {128, 4096}), tensor("n", {128, 4096})},
      {node("l", "triplet_margin_loss", {ref("a"), ref("p"), ref("n")},
            {{"margin", 1.0}, {"p", 2.0}, {"eps", 1e-6}, {"swap", false}, {"reduction", "mean"}},
            json::array(), 5)},
      "l", json::array());
  EXPECT_FALSE(family.cannot_implement(spec::parse_spec(trip)).has_value());
}

TEST(Loss, RejectsWhatItDoesNotImplementWithLines) {
  LossFamily family(kData);
  // Class weights.
  auto w = ce_spec({{"reduction", "mean"}});
  w["inputs"].push_back(tensor("w", {1000}));
  w["nodes"][0]["args"][2] = ref("w");
  auto why = family.cannot_implement(spec::parse_spec(w));
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->where().line, 5);
  EXPECT_TRUE(has(why->describe(), "class weight")) << why->describe();
  // Probability targets.
  auto probs = spec_of(pair_inputs({64, 10}),
                       {node("l", "cross_entropy", {ref("x"), ref("y"), none()},
                             {{"reduction", "mean"}}, json::array(), 6)},
                       "l", json::array());
  auto why2 = family.cannot_implement(spec::parse_spec(probs));
  ASSERT_TRUE(why2.has_value());
  EXPECT_EQ(why2->where().line, 6);
  EXPECT_TRUE(has(why2->describe(), "int64")) << why2->describe();
  // Triplet with p=1.
  auto trip = spec_of({tensor("a", {8, 16}), tensor("p", {8, 16}), tensor("n", {8, 16})},
                      {node("l", "triplet_margin_loss", {ref("a"), ref("p"), ref("n")},
                            {{"p", 1.0}, {"reduction", "mean"}}, json::array(), 7)},
                      "l", json::array());
  auto why3 = family.cannot_implement(spec::parse_spec(trip));
  ASSERT_TRUE(why3.has_value());
  EXPECT_EQ(why3->where().line, 7);
  EXPECT_TRUE(has(why3->describe(), "p=1")) << why3->describe();
  // A loss the family does not implement, and batchmean outside kl_div.
  auto bce = spec_of(pair_inputs({8, 16}),
                     {node("l", "binary_cross_entropy", {ref("x"), ref("y")},
                           {{"reduction", "mean"}}, json::array(), 8)},
                     "l", json::array());
  auto why4 = family.cannot_implement(spec::parse_spec(bce));
  ASSERT_TRUE(why4.has_value());
  EXPECT_EQ(why4->where().line, 8);
  EXPECT_TRUE(has(why4->hint(), "nll_loss")) << why4->hint();  // among the supported
  auto bm = spec_of(
      pair_inputs({8, 16}),
      {node("l", "mse_loss", {ref("x"), ref("y")}, {{"reduction", "batchmean"}}, json::array(), 9)},
      "l", json::array());
  auto why5 = family.cannot_implement(spec::parse_spec(bm));
  ASSERT_TRUE(why5.has_value());
  EXPECT_EQ(why5->where().line, 9);
  // Reading an operand after the loss.
  auto after =
      spec_of(pair_inputs({8, 16}),
              {node("l", "mse_loss", {ref("x"), ref("y")}, {{"reduction", "none"}}, {8, 16}, 4),
               node("a", "add", {ref("l"), ref("x")}, {{"alpha", 1}}, {8, 16}, 10)},
              "a", {8, 16});
  auto why6 = family.cannot_implement(spec::parse_spec(after));
  ASSERT_TRUE(why6.has_value());
  EXPECT_EQ(why6->where().line, 10);
}

TEST(Loss, BackendPicksLoss) {
  BuiltinBackend backend(kData);
  EXPECT_NO_THROW(backend.check_supported(spec::parse_spec(ce_spec({{"reduction", "mean"}}))));
}

// ---- rendering -------------------------------------------------------------------------

TEST(Loss, MseMeanIsAOneKernelDeterministicSum) {
  auto j = spec_of(
      pair_inputs({128, 32768}),
      {node("l", "mse_loss", {ref("x"), ref("y")}, {{"reduction", "mean"}}, json::array(), 5)}, "l",
      json::array());
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const float egg_l = egg_loss_mse(egg_v[0], egg_v[1]);")) << r.device;
  EXPECT_TRUE(has(r.device, "egg_load_vec_once<float, VEC>(x + egg_i * VEC)"));  // read once
  EXPECT_TRUE(has(r.device, "__device__ float2 egg_k_partials[1056];")) << r.id;
  EXPECT_TRUE(has(r.device, "egg_k_partials[blockIdx.x] = egg_t;"));
  // The last block to arrive adds the partials in index order: the only atomic counts arrivals.
  EXPECT_TRUE(has(r.device, "egg_k_finish_last<256>(out0, 0);"));
  EXPECT_TRUE(has(r.device, "egg_last = atomicAdd(&egg_k_arrived, 1u) == gridDim.x - 1;"));
  EXPECT_EQ(r.device.find("atomicAdd"), r.device.rfind("atomicAdd"));
  EXPECT_TRUE(has(r.device, "for (int egg_i = threadIdx.x; egg_i < 1056; egg_i += BLOCK) {"));
  EXPECT_TRUE(has(r.device, "egg_k_arrived = 0;"));  // re-armed for the next launch
  EXPECT_TRUE(has(r.device, "const float egg_r = egg_t.x / 4194304.0f;"));
  EXPECT_TRUE(has(r.launch, "egg_k_pointwise<4><<<1056, 256, 0, stream>>>(x, y, out0, 0);"))
      << r.launch;
  EXPECT_FALSE(has(r.launch, "finish"));  // one kernel
}

TEST(Loss, KlDivBatchmeanWithLogPrologue) {
  auto j = spec_of(pair_inputs({128, 32768}),
                   {node("g", "log", {ref("x")}, json::object(), {128, 32768}, 4),
                    node("l", "kl_div", {ref("g"), ref("y")},
                         {{"reduction", "batchmean"}, {"log_target", false}}, json::array(), 5)},
                   "l", json::array());
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "const float egg_p0 = logf(egg_a0);")) << r.device;
  EXPECT_TRUE(has(r.device, "egg_v[0] = egg_p0;"));
  EXPECT_TRUE(has(r.device, "egg_v[1] = egg_a1;"));
  EXPECT_TRUE(has(r.device, "egg_loss_kl_div(egg_v[0], egg_v[1])"));
  EXPECT_TRUE(has(r.device, "const float egg_r = egg_t.x / 128.0f;"));
}

TEST(Loss, HuberNoneWritesEveryLossWithEpilogue) {
  auto j =
      spec_of(pair_inputs({256, 16384}, "bfloat16"),
              {node("l", "huber_loss", {ref("x"), ref("y")},
                    {{"reduction", "none"}, {"delta", 0.5}}, {256, 16384}, 5, "bfloat16"),
               node("m", "mul", {ref("l"), num(0.5)}, json::object(), {256, 16384}, 5, "bfloat16")},
              "m", {256, 16384}, "bfloat16");
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_loss_huber(egg_v[0], egg_v[1], 0.5f)")) << r.device;
  EXPECT_TRUE(has(r.device, "const float egg_e0 = (egg_r * 0.5f);"));
  EXPECT_TRUE(has(r.device, "out0[egg_o] = egg_from_float<__nv_bfloat16>(egg_e0);"));
  // Eight losses per step stored as one 16-byte vector (the output pointer must be aligned too);
  // the scalar tail stores element by element.
  EXPECT_TRUE(has(r.device, "egg_k_out_vec<VEC>(egg_ls, egg_i * VEC, out0, 0);"));
  EXPECT_TRUE(has(r.device, "egg_store_vec<__nv_bfloat16, VEC>(out0 + egg_o0, out0_o);"));
  EXPECT_TRUE(has(r.device, "egg_k_out(egg_l, egg_e, out0, 0);"));
  EXPECT_TRUE(has(r.launch, "egg_k_aligned(out0)")) << r.launch;
  EXPECT_FALSE(has(r.device, "egg_k_partials"));
  EXPECT_FALSE(has(r.launch, "egg_k_finish"));
  EXPECT_TRUE(has(r.launch, "egg_k_pointwise<8>")) << r.launch;
}

TEST(Loss, CrossEntropyRowsWithSmoothingAndIgnoreIndex) {
  auto r = render_first(
      ce_spec({{"reduction", "mean"}, {"ignore_index", -100}, {"label_smoothing", 0.1}}));
  EXPECT_TRUE(has(r.device, "constexpr int kTpr = 32;")) << r.id;
  EXPECT_TRUE(has(r.device, "EggLossCE egg_st;"));
  EXPECT_TRUE(has(r.device, "const long long egg_t = (long long)(t[egg_row]);")) << r.device;
  EXPECT_TRUE(has(r.device, "if (egg_t == -100LL) {"));
  EXPECT_TRUE(has(r.device,
                  "egg_l = 0.899999976f * (egg_lse - egg_v[0]) + 0.100000001f * (egg_lse - "
                  "egg_st.sx / 1000.0f);"));
  EXPECT_TRUE(
      has(r.device, "const float egg_r = egg_t.x / egg_t.y;"));  // mean over rows not ignored
  EXPECT_TRUE(has(r.launch, "egg_k_rows<4><<<1056, 256, 0, stream>>>(logits, t, out0, 0);"))
      << r.launch;
  auto plain = render_first(ce_spec({{"reduction", "none"}}, {32768}));
  EXPECT_TRUE(has(plain.device, "egg_l = (egg_lse - egg_v[0]);")) << plain.device;
  EXPECT_TRUE(has(plain.device, "egg_k_out(egg_l, egg_row, out0, 0);"));
}

// nll_loss: a thread per row reads its target's element (nothing streamed); class weights scale
// each loss and are what the mean divides by; an ignored row counts nothing.
TEST(Loss, NllReadsEachRowsTargetElementWithClassWeights) {
  auto j = spec_of({tensor("x", {4096, 1000}), tensor("t", {4096}, "int64")},
                   {node("l", "nll_loss", {ref("x"), ref("t"), ref("w")},
                         {{"reduction", "mean"}, {"ignore_index", 3}}, json::array(), 5)},
                   "l", json::array());
  j["params"].push_back(tensor("w", {1000}, "float32", "buffer"));
  auto r = render_first(j);
  EXPECT_TRUE(has(r.id, "loss.nll.rows:t1:")) << r.id;
  EXPECT_TRUE(has(r.device, "constexpr int kTpr = 1;"));
  EXPECT_TRUE(has(r.device, "EggLossNone egg_st;"));
  EXPECT_FALSE(has(r.device, "x_v = egg_load")) << r.device;  // no row is streamed
  EXPECT_TRUE(has(r.device, "if (egg_t == 3LL) {"));
  EXPECT_TRUE(has(r.device, "egg_l = (-egg_v[0]);"));
  EXPECT_TRUE(has(r.device, "egg_n = egg_to_float(w[egg_t]);"));
  EXPECT_TRUE(has(r.device, "const float egg_r = egg_t.x / egg_t.y;"));
  EXPECT_TRUE(has(r.launch, "(x, t, w, out0, 0);")) << r.launch;

  // Without weights, reduction='none': -x[t] per row, written.
  j["nodes"][0]["args"][2] = none();
  j["nodes"][0]["attrs"]["reduction"] = "none";
  j["nodes"][0]["shape"] = {4096};
  j["outputs"][0]["shape"] = {4096};
  auto plain = render_first(j);
  EXPECT_FALSE(has(plain.device, "egg_n = egg_to_float(")) << plain.device;
  EXPECT_TRUE(has(plain.device, "egg_k_out(egg_l, egg_row, out0, 0);"));

  // Weights of another length are named.
  j["nodes"][0]["args"][2] = ref("w");
  j["params"][0]["shape"] = {999};
  auto why = LossFamily(kData).cannot_implement(spec::parse_spec(j));
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(has(why->describe(), "class weight that is not a [1000]")) << why->describe();
}

TEST(Loss, TripletUsesSquaredDistancesWithEps) {
  auto j = spec_of(
      {tensor("a", {4096, 4096}), tensor("p", {4096, 4096}), tensor("n", {4096, 4096})},
      {node("l", "triplet_margin_loss", {ref("a"), ref("p"), ref("n")},
            {{"margin", 1.0}, {"p", 2.0}, {"eps", 1e-6}, {"swap", false}, {"reduction", "sum"}},
            json::array(), 5)},
      "l", json::array());
  auto r = render_first(j);
  EXPECT_TRUE(has(r.device, "egg_st.push(egg_v[0], egg_v[1], egg_v[2], 9.99999997e-07f);"))
      << r.device;
  EXPECT_TRUE(has(r.device, "const float egg_m = 1.0f + egg_dp - egg_dn;"));
  EXPECT_FALSE(has(r.device, "egg_dw"));
  EXPECT_TRUE(has(r.device, "const float egg_r = egg_t.x;"));
}

TEST(Loss, TuningAndFallbackAreValid) {
  LossFamily family(kData);
  auto s = spec::parse_spec(ce_spec({{"reduction", "mean"}}));
  auto c = contract::derive(s, "k");
  auto cands = family.structures(s, c);
  ASSERT_EQ(cands.size(), 2u);
  auto tunes = family.tunings(s, c, cands.front(), "memory");
  EXPECT_GT(tunes.size(), 3u);
  for (const auto& t : tunes) EXPECT_FALSE(t.code.device_code.empty());
  auto fb = family.fallback(s, c, cands.front());
  ASSERT_TRUE(fb.has_value());
  EXPECT_TRUE(has(fb->code.launch_body, "egg_k_rows<1>")) << fb->code.launch_body;
  EXPECT_FALSE(family.fallback(s, c, *fb).has_value());
}

// Writes every candidate of each spec.json under $EGG_LOSS_SPEC_DIR to
// $EGG_LOSS_OUT_DIR/<spec>/<n>.cu with its header, for compiling with nvcc by hand. Skipped unless
// both are set.
// The op→CUDA knowledge is the table's (templates/loss/losses.json).
TEST(LossTable, ExpressionsAndAttributesComeFromTheTable) {
  const LossOps table(kData);
  const LossEntry* huber = table.loss("huber_loss");
  ASSERT_NE(huber, nullptr);
  EXPECT_EQ(table.pointwise(*huber, {{"delta", 0.5}}, "a", "b"), "egg_loss_huber(a, b, 0.5f)");
  EXPECT_EQ(table.pointwise(*huber, nlohmann::json::object(), "a", "b"),
            "egg_loss_huber(a, b, 1.0f)");
  const LossEntry* kl = table.loss("kl_div");
  EXPECT_EQ(table.pointwise(*kl, {{"log_target", true}}, "a", "b"),
            "egg_loss_kl_div_log_target(a, b)");
  EXPECT_EQ(table.pointwise(*kl, {{"log_target", false}}, "a", "b"), "egg_loss_kl_div(a, b)");
  EXPECT_TRUE(table.loss("cross_entropy")->rows);
  EXPECT_EQ(table.loss("triplet_margin_loss")->state, "EggLossTriplet");
  EXPECT_TRUE(table.unsupported("binary_cross_entropy"));
  EXPECT_EQ(table.loss("binary_cross_entropy"), nullptr);
  EXPECT_TRUE(table.loss("nll_loss")->gather);
  EXPECT_NE(table.supported().find("triplet_margin_loss"), std::string::npos);
}

TEST(Loss, DumpEveryCandidateForNvcc) {
  const char* in = std::getenv("EGG_LOSS_SPEC_DIR");
  const char* out = std::getenv("EGG_LOSS_OUT_DIR");
  if (!in || !out) GTEST_SKIP() << "set EGG_LOSS_SPEC_DIR and EGG_LOSS_OUT_DIR";
  egg::testing::dump_every_candidate(LossFamily(kData), kData, in, out);
}

}  // namespace
}  // namespace egg::backend::builtin
