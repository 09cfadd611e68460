// Sort family: topk and sort planned along any dim (rows strided by the dims after it), their
// (values, indices) read through getitem, what it refuses with lines, the network's order in the
// rendered kernel, and the shared-memory opt-in of long rows. FileCheck style.
#include "backend/builtin/sort.h"

#include <gtest/gtest.h>

#include "spec_fixtures.h"

#include "contract/contract.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using egg::testing::tensor;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json item(const std::string& name, const std::string& of, int k, json shape, const char* dtype) {
  json n = node(name, "getitem", {ref(of), {{"scalar", k}}}, json::object(), shape, 6);
  n["dtype"] = dtype;
  return n;
}

// topk(x, k, dim) of x [8, 300, 32] returning values and indices.
json topk_spec(int k, int dim, bool largest, json shape = {8, 300, 32}) {
  json out_shape = shape;
  out_shape[static_cast<size_t>(dim)] = k;
  json j = spec_around(
      {tensor("x", shape)}, json::array(),
      {node("t", "topk", {ref("x")},
            {{"k", k}, {"dim", dim}, {"largest", largest}, {"sorted", true}}, out_shape, 5),
       item("v", "t", 0, out_shape, "float32"), item("i", "t", 1, out_shape, "int64")});
  j["outputs"] = {{{"name", "out0"}, {"node", "v"}, {"shape", out_shape}, {"dtype", "float32"}},
                  {{"name", "out1"}, {"node", "i"}, {"shape", out_shape}, {"dtype", "int64"}}};
  return j;
}

TEST(Sort, PlansRowsAlongAnyDim) {
  const auto s = spec::parse_spec(topk_spec(16, 1, false));
  const auto a = plan_sort(s);
  ASSERT_TRUE(std::holds_alternative<SortPlan>(a)) << std::get<UserError>(a).describe();
  const SortPlan& p = std::get<SortPlan>(a);
  EXPECT_EQ(p.outer, 8);
  EXPECT_EQ(p.len, 300);
  EXPECT_EQ(p.inner, 32);
  EXPECT_EQ(p.k, 16);
  EXPECT_EQ(p.padded(), 512);
  EXPECT_FALSE(p.descending);
  EXPECT_EQ(p.values, std::vector<std::string>{"v"});
  EXPECT_EQ(p.indices, std::vector<std::string>{"i"});
}

TEST(Sort, RendersTheNetworkInPyTorchsOrder) {
  SortFamily family(kData);
  const auto s = spec::parse_spec(topk_spec(16, 1, true));
  const auto c = contract::derive(s, "k");
  const auto cands = family.structures(s, c);
  ASSERT_EQ(cands.size(), 1u);  // 256 threads: half of 512 keys, the same as the second
  const std::string& d = cands[0].code.device_code;
  EXPECT_TRUE(has(d, "constexpr int egg_k_kP = 512;")) << d;
  EXPECT_TRUE(has(d, "return a_nan && b_nan ? ia < ib : a_nan;"));  // NaN first when largest
  EXPECT_TRUE(has(d, "if (a != b) return a > b;"));
  EXPECT_TRUE(has(d, "const int egg_s = 0;"));
  EXPECT_TRUE(has(d, "out1[egg_o] = static_cast<std::int64_t>(egg_idx[egg_s + egg_t]);"));
  EXPECT_TRUE(has(d, "out0[egg_o] = egg_from_float<float>(egg_key[egg_s + egg_t]);"));
  EXPECT_TRUE(has(d, "egg_host_eval"));
  EXPECT_TRUE(
      has(cands[0].code.launch_body, "egg_k_sort<<<256, 256, 4096, stream>>>(x, out0, out1, 0);"))
      << cands[0].code.launch_body;

  // A row of 8 keys still gets a warp (threads past the 4 pairs of a stage idle).
  const auto tiny = spec::parse_spec(topk_spec(2, 1, true, {8, 8}));
  const auto tc = family.structures(tiny, contract::derive(tiny, "k"));
  ASSERT_EQ(tc.size(), 1u);
  EXPECT_TRUE(has(tc[0].id, "sort.bitonic:b32:p8")) << tc[0].id;

  // A row of 10000 keys (16384 padded: 128 KiB) opts into more shared memory.
  const auto big = spec::parse_spec(topk_spec(4, 1, true, {2, 10000}));
  const auto lc = family.structures(big, contract::derive(big, "k"));
  ASSERT_FALSE(lc.empty());
  EXPECT_TRUE(has(lc[0].code.launch_body, "cudaFuncAttributeMaxDynamicSharedMemorySize, 131072"))
      << lc[0].code.launch_body;
  EXPECT_TRUE(has(lc[0].id, "sort.bitonic:b1024:p16384")) << lc[0].id;
  for (const auto& t : family.tunings(big, contract::derive(big, "k"), lc[0], "memory"))
    EXPECT_TRUE(has(t.id, "sort.bitonic:b")) << t.id;
}

// kthvalue writes the k-th smallest (NaN last); median the lower middle one, or the row's first
// NaN (NaN sorted first to find it); torch.median(x) sorts the whole tensor as one row.
TEST(Sort, KthValueAndMedianPickOneSortedPosition) {
  SortFamily family(kData);
  json kth = topk_spec(1, 1, true);
  kth["nodes"][0]["op"] = "kthvalue";
  kth["nodes"][0]["attrs"] = {{"k", 7}, {"dim", 1}, {"keepdim", true}};
  auto s = spec::parse_spec(kth);
  std::string d = family.structures(s, contract::derive(s, "k"))[0].code.device_code;
  EXPECT_TRUE(has(d, "const int egg_s = 6;")) << d;
  EXPECT_TRUE(has(d, "return a_nan && b_nan ? ia < ib : b_nan;"));
  EXPECT_TRUE(has(d, "if (a != b) return a < b;"));

  json med = kth;
  med["nodes"][0]["op"] = "median";
  med["nodes"][0]["attrs"] = {{"dim", 1}, {"keepdim", false}};
  s = spec::parse_spec(med);
  d = family.structures(s, contract::derive(s, "k"))[0].code.device_code;
  EXPECT_TRUE(has(d, "const int egg_s = egg_key[0] != egg_key[0] ? 0 : 149;")) << d;
  EXPECT_TRUE(has(d, "return a_nan && b_nan ? ia < ib : a_nan;"));

  json whole = spec_around(
      {tensor("x", {40, 50})}, json::array(),
      {node("m", "median", {ref("x")}, {{"dim", nullptr}, {"keepdim", false}}, json::array(), 5)});
  const auto a = plan_sort(spec::parse_spec(whole));
  ASSERT_TRUE(std::holds_alternative<SortPlan>(a)) << std::get<UserError>(a).describe();
  EXPECT_EQ(std::get<SortPlan>(a).len, 2000);
  EXPECT_EQ(std::get<SortPlan>(a).first, 999);
  EXPECT_EQ(std::get<SortPlan>(a).values, std::vector<std::string>{"m"});
}

TEST(Sort, RefusesWhatItDoesNotImplementWithLines) {
  auto expect_refused = [](json j, const std::string& text) {
    const auto a = plan_sort(spec::parse_spec(j));
    ASSERT_TRUE(std::holds_alternative<UserError>(a)) << text;
    const UserError& e = std::get<UserError>(a);
    EXPECT_GT(e.where().line, 0) << e.describe();
    EXPECT_TRUE(has(e.describe(), text)) << e.describe();
  };
  json ints = topk_spec(4, 1, true);
  ints["inputs"][0]["dtype"] = "int64";
  expect_refused(ints, "sorts int64");
  expect_refused(topk_spec(4, 1, true, {2, 20000}), "up to 16384");
  json big_k = topk_spec(4, 1, true);
  big_k["nodes"][0]["attrs"]["k"] = 301;
  expect_refused(big_k, "k must be an integer in [0, 300]");
  json after = topk_spec(4, 1, true);
  after["nodes"].push_back(node("r", "relu", {ref("v")}, json::object(), {8, 4, 32}, 7));
  after["outputs"][0]["node"] = "r";
  expect_refused(after, "as they are");
}

}  // namespace
}  // namespace egg::backend::builtin
