// The fusion compiler's loop-level IR (backend/builtin/index_ir.h): the index each layout op asks
// of its operand, and the errors of what it does not take. Its numerics run on the host against
// PyTorch in suite.layout_host (tests/suite/host_eval.py).
#include "backend/builtin/index_ir.h"

#include <gtest/gtest.h>

#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::none;
using egg::testing::ref;
using egg::testing::spec_around;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json tensor(const std::string& name, json shape) {
  return egg::testing::tensor(name, shape, "float32", "");
}

std::string program(const spec::Spec& s) {
  std::map<std::string, std::string> ptr;
  for (const auto& t : s.inputs) ptr[t.name] = t.name;
  for (const auto& t : s.params) ptr[t.name] = t.name;
  const IndexProgram p = build_index_program(s, OpTable(kData), ptr);
  std::string text;
  for (const auto& st : p.statements) text += st + "\n";
  for (const auto& r : p.results) text += "result " + r + "\n";
  return text;
}

TEST(IndexIr, AReshapeOfATransposeReadsTheDigitsOfTheElement) {
  // y.transpose(1, 2).reshape(B, T, C): element i is (b, t, h, d) of the transposed value, digits
  // of i, and reads y[b, h, t, d].
  const auto s = spec::parse_spec(spec_around(
      {tensor("y", {4, 4, 64, 32})}, json::array(),
      {node("t", "transpose", {ref("y")}, {{"dim0", 1}, {"dim1", 2}}, {4, 64, 4, 32}, 5),
       node("r", "reshape", {ref("t")}, {{"shape", {4, 64, 128}}}, {4, 64, 128}, 5)}));
  const std::string p = program(s);
  EXPECT_TRUE(has(p, "const IndexT egg_i1 = ((i / 128) % 64);")) << p;  // t
  EXPECT_TRUE(has(p, "const IndexT egg_i2 = (i / 8192);")) << p;        // b
  EXPECT_TRUE(has(p, "const IndexT egg_i3 = (i % 32);")) << p;          // d
  EXPECT_TRUE(has(p, "const IndexT egg_i4 = ((i / 32) % 4);")) << p;    // h
  EXPECT_TRUE(has(p, "y[egg_i2 * 8192 + egg_i4 * 2048 + egg_i1 * 32 + egg_i3]")) << p;

  // Read at an index that is not the element's own (a slice of the result), the reshape merges
  // and splits the dims it regroups: (b, t, c) → y[b, c / 32, t, c % 32].
  auto j = spec_around(
      {tensor("y", {4, 4, 64, 32})}, json::array(),
      {node("t", "transpose", {ref("y")}, {{"dim0", 1}, {"dim1", 2}}, {4, 64, 4, 32}, 5),
       node("r", "reshape", {ref("t")}, {{"shape", {4, 64, 128}}}, {4, 64, 128}, 5),
       node("z", "slice", {ref("r")}, {{"dim", 2}, {"start", 64}, {"end", nullptr}, {"step", 1}},
            {4, 64, 64}, 6)});
  const std::string q = program(spec::parse_spec(j));
  EXPECT_TRUE(has(q, "const IndexT egg_i3 = (egg_i0 + 64);")) << q;
  EXPECT_TRUE(has(q, "const IndexT egg_i4 = (egg_i3 % 32);")) << q;
  EXPECT_TRUE(has(q, "const IndexT egg_i5 = (egg_i3 / 32);")) << q;
  EXPECT_TRUE(has(q, "y[egg_i2 * 8192 + egg_i5 * 2048 + egg_i1 * 32 + egg_i4]")) << q;
}

TEST(IndexIr, AViewOfTheOutputElementStaysAVectorLoad) {
  // exp(x.view(64, 8, 32)): still element i of x, read by the schedule (no index math).
  const auto s = spec::parse_spec(
      spec_around({tensor("x", {64, 256})}, json::array(),
                  {node("v", "reshape", {ref("x")}, {{"shape", {64, 8, 32}}}, {64, 8, 32}, 5),
                   node("e", "exp", {ref("v")}, json::object(), {64, 8, 32}, 6)}));
  std::map<std::string, std::string> ptr{{"x", "x"}};
  const IndexProgram p = build_index_program(s, OpTable(kData), ptr);
  ASSERT_EQ(p.reads.size(), 1u);
  EXPECT_TRUE(p.reads[0].full);
  EXPECT_FALSE(p.reads[0].indexed);
  EXPECT_EQ(p.results[0], "egg_v0");
  EXPECT_EQ(p.statements.back(), "const float egg_v0 = expf(" + full_value("x") + ");");
}

TEST(IndexIr, FlipSelectAndSteppedSliceRewriteOneDimEach) {
  const auto s = spec::parse_spec(
      spec_around({tensor("x", {8, 16, 10})}, json::array(),
                  {node("f", "flip", {ref("x")}, {{"dims", {-1}}}, {8, 16, 10}, 5),
                   node("s", "select", {ref("f")}, {{"dim", 1}, {"index", -1}}, {8, 10}, 6),
                   node("z", "slice", {ref("s")},
                        {{"dim", 1}, {"start", 1}, {"end", nullptr}, {"step", 3}}, {8, 3}, 7)}));
  const std::string p = program(s);
  // z[b, j] = x[b, 15, 9 - (1 + 3 j)].
  EXPECT_TRUE(has(p, "const IndexT egg_i2 = egg_i0 * 3;")) << p;
  EXPECT_TRUE(has(p, "const IndexT egg_i3 = (egg_i2 + 1);")) << p;
  EXPECT_TRUE(has(p, "const IndexT egg_i4 = (9 - egg_i3);")) << p;
  EXPECT_TRUE(has(p, "x[egg_i1 * 160 + 150 + egg_i4]")) << p;
}

// Gathers: the index tensor's value becomes the index of the gathered dim (embedding: rows of
// the weight; index_select: one dim); indices must be integers.
TEST(IndexIr, GathersIndexTheSourceByTheIndicesValues) {
  const auto s = spec::parse_spec(spec_around(
      {egg::testing::tensor("ids", {4, 6}, "int64", ""), tensor("w", {100, 8})}, json::array(),
      {node("e", "embedding", {ref("w"), ref("ids")}, json::object(), {4, 6, 8}, 5)}));
  const std::string p = program(s);
  // e[b, t, k] = w[ids[b, t], k]: ids read at the element's leading digits (i / 8).
  EXPECT_TRUE(has(p, "const IndexT egg_i3 = (i / 8);")) << p;
  EXPECT_TRUE(has(p, "const long long egg_v0 = static_cast<long long>(ids[egg_i3]);")) << p;
  EXPECT_TRUE(has(p, "const IndexT egg_i4 = static_cast<IndexT>(egg_v0);")) << p;
  EXPECT_TRUE(has(p, "w[egg_i4 * 8 + egg_i0]")) << p;

  const auto sel = spec::parse_spec(spec_around(
      {tensor("x", {5, 7, 3}), egg::testing::tensor("j", {4}, "int32", "")}, json::array(),
      {node("g", "index_select", {ref("x"), ref("j")}, {{"dim", 1}}, {5, 4, 3}, 6)}));
  const std::string q = program(sel);
  EXPECT_TRUE(has(q, "static_cast<long long>(j[")) << q;
  EXPECT_TRUE(has(q, " * 3 + ")) << q;  // the gathered index scales by dim 1's stride

  OpTable ops(kData);
  const auto floats = spec::parse_spec(
      spec_around({tensor("x", {5, 7, 3}), tensor("j", {4})}, json::array(),
                  {node("g", "index_select", {ref("x"), ref("j")}, {{"dim", 1}}, {5, 4, 3}, 6)}));
  const auto e = index_ir_check(floats, floats.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->where().line, 6);
  EXPECT_TRUE(has(e->describe(), "not int64 or int32")) << e->describe();
}

TEST(IndexIr, WhatItDoesNotTakeIsNamedWithItsLine) {
  OpTable ops(kData);
  auto reversed = spec::parse_spec(
      spec_around({tensor("x", {8, 16})}, json::array(),
                  {node("z", "slice", {ref("x")},
                        {{"dim", 1}, {"start", 0}, {"end", nullptr}, {"step", 0}}, {8, 16}, 7)}));
  auto e = index_ir_check(reversed, reversed.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->where().line, 7);
  EXPECT_TRUE(has(e->describe(), "slice step")) << e->describe();

  auto whole = spec::parse_spec(
      spec_around({tensor("x", {8, 16})}, json::array(),
                  {node("sp", "split", {ref("x")}, {{"split_size", 8}, {"dim", 1}}, {8, 8}, 4),
                   node("r", "relu", {ref("sp")}, json::object(), {8, 8}, 9)}));
  e = index_ir_check(whole, whole.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->where().line, 9);
  EXPECT_TRUE(has(e->describe(), "pieces")) << e->describe();

  auto vector =
      spec::parse_spec(spec_around({tensor("x", {16})}, json::array(),
                                   {node("u", "triu", {ref("x")}, {{"diagonal", 0}}, {16}, 3)}));
  e = index_ir_check(vector, vector.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(has(e->describe(), "two or more dims")) << e->describe();

  auto flat =
      spec::parse_spec(spec_around({tensor("x", {8, 16})}, json::array(),
                                   {node("u", "upsample_nearest", {ref("x")},
                                         {{"scales", nullptr}, {"exact", false}}, {8, 32}, 5)}));
  e = index_ir_check(flat, flat.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->where().line, 5);
  EXPECT_TRUE(has(e->describe(), "spatial dims after (N, C)")) << e->describe();
}

// torch.gather reads its index at the output's own index; reflect and replicate pads read an
// index inside the input.
TEST(IndexIr, GatherAndReflectPadReadIndicesInside) {
  const auto gather = spec::parse_spec(spec_around(
      {tensor("x", {4, 16, 8}), egg::testing::tensor("idx", {4, 5, 8}, "int64", "")}, json::array(),
      {node("g", "gather", {ref("x"), ref("idx")}, {{"dim", 1}}, {4, 5, 8}, 5)}));
  const std::string g = program(gather);
  // The index, read at element i, comes in as a long long value (the schedule loads it).
  EXPECT_TRUE(has(g, "static_cast<IndexT>(egg_e_idx)")) << g;
  EXPECT_TRUE(has(g, " * 8 + ")) << g;

  const auto reflect = spec::parse_spec(spec_around(
      {tensor("x", {2, 3, 8})}, json::array(),
      {node("p", "pad", {ref("x")}, {{"pad", {2, 3}}, {"mode", "reflect"}, {"value", nullptr}},
            {2, 3, 13}, 5)}));
  const std::string r = program(reflect);
  EXPECT_TRUE(has(r, " < 0 ? -egg_i")) << r;
  EXPECT_TRUE(has(r, " > 7 ? 14 - egg_i")) << r;
  EXPECT_FALSE(has(r, " : 0.0f")) << r;  // no fill value: every index reads the input

  const auto replicate = spec::parse_spec(spec_around(
      {tensor("x", {2, 3, 8})}, json::array(),
      {node("p", "pad", {ref("x")}, {{"pad", {2, 3}}, {"mode", "replicate"}, {"value", nullptr}},
            {2, 3, 13}, 5)}));
  EXPECT_TRUE(has(program(replicate), "static_cast<IndexT>(0)), static_cast<IndexT>(7))"));

  OpTable ops(kData);
  const auto wide = spec::parse_spec(spec_around(
      {tensor("x", {2, 3, 8})}, json::array(),
      {node("p", "pad", {ref("x")}, {{"pad", {8, 0}}, {"mode", "reflect"}, {"value", nullptr}},
            {2, 3, 16}, 6)}));
  const auto e = index_ir_check(wide, wide.nodes[0], ops);
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(has(e->describe(), "below the dim's size")) << e->describe();
}

// An arange is start + step * its index, a leaf like full.
TEST(IndexIr, AnArangeIsStartPlusStepTimesItsIndex) {
  auto j = spec_around(
      {tensor("x", {4, 6})}, json::array(),
      {node("a", "arange", json::array(), {{"start", 1}, {"end", 13}, {"step", 2}}, {6}, 5),
       node("s", "add", {ref("x"), ref("a")}, {{"alpha", 1}}, {4, 6}, 5)});
  j["nodes"][0]["dtype"] = "int64";
  const std::string p = program(spec::parse_spec(j));
  // An int64 arange in long long arithmetic, converted where it meets the float x.
  EXPECT_TRUE(has(p, "const long long egg_v0 = 1LL + 2LL * static_cast<long long>(egg_i0);")) << p;
  EXPECT_TRUE(has(p, "(egg_e_x + 1.0f * static_cast<float>(egg_v0))")) << p;
}

// Integer arithmetic is exact in long long: Python's floor division and remainder, comparisons
// of integers without a conversion, and the result used as a gather's index.
TEST(IndexIr, IntegerArithmeticIsExactAndIndexes) {
  auto j = spec_around(
      {tensor("x", {4, 16}), egg::testing::tensor("idx", {4, 1}, "int64", "")}, json::array(),
      {node("m", "mul", {ref("idx"), json{{"scalar", 3}}}, json::object(), {4, 1}, 5),
       node("r", "remainder", {ref("m"), json{{"scalar", 16}}}, json::object(), {4, 1}, 5),
       node("q", "div", {ref("idx"), json{{"scalar", 2}}}, {{"rounding_mode", "floor"}}, {4, 1}, 6),
       node("g", "gather", {ref("x"), ref("r")}, {{"dim", 1}}, {4, 1}, 7),
       node("c", "gt", {ref("q"), ref("idx")}, json::object(), {4, 1}, 8),
       node("o", "add", {ref("g"), ref("c")}, {{"alpha", 1}}, {4, 1}, 9)});
  for (int k : {0, 1, 2}) j["nodes"][k]["dtype"] = "int64";
  j["nodes"][4]["dtype"] = "bool";
  j["outputs"][0]["node"] = "o";
  j["outputs"][0]["shape"] = {4, 1};
  const std::string p = program(spec::parse_spec(j));
  // idx, read at the element itself, comes in as a long long (egg_e_idx), never as a float.
  EXPECT_TRUE(has(p, "const long long egg_v0 = (egg_e_idx * 3LL);")) << p;
  EXPECT_TRUE(has(p, "egg_iremainder(egg_v0, 16LL)")) << p;
  EXPECT_TRUE(has(p, "static_cast<IndexT>(egg_v1)")) << p;
  EXPECT_TRUE(has(p, "egg_ifloor_divide(egg_e_idx, 2LL)")) << p;
  EXPECT_TRUE(has(p, "const float egg_v4 = (egg_v3 > egg_e_idx ? 1.0f : 0.0f);")) << p;
  std::map<std::string, std::string> ptr{{"x", "x"}, {"idx", "idx"}};
  const IndexProgram prog = build_index_program(spec::parse_spec(j), OpTable(kData), ptr);
  for (const auto& r : prog.reads) {
    // x is read at the gathered column (by pointer), idx at the element itself, as an integer.
    EXPECT_EQ(r.full, r.tensor == "idx") << r.tensor;
    EXPECT_EQ(r.integer, r.tensor == "idx") << r.tensor;
    EXPECT_EQ(full_type(r), r.tensor == "idx" ? "long long" : "float");
  }
}

// Dropout draws at its value's own element: i where the output is that value, the flat index of
// its (transposed) position where it is not; it reads the [seed, offset] input by pointer.
TEST(IndexIr, DropoutDrawsAtItsOwnElement) {
  auto j = spec_around(
      {tensor("x", {4, 6}), egg::testing::tensor("egg_rng", {2}, "int64", "rng")}, json::array(),
      {node("d", "dropout", {ref("x"), ref("egg_rng")}, {{"p", 0.25}, {"stream", 3}}, {4, 6}, 5),
       node("t", "transpose", {ref("d")}, {{"dim0", 0}, {"dim1", 1}}, {6, 4}, 5)});
  const std::string p = program(spec::parse_spec(j));
  // t[i] = d[i % 4][i / 4]: d's element (i % 4) * 6 + i / 4.
  EXPECT_TRUE(has(p,
                  "egg_dropout(egg_v0, egg_rng, 3u, static_cast<std::int64_t>(egg_i2), "
                  "12582912u, 1.33333337f)"))
      << p;
  EXPECT_TRUE(has(p, "egg_i2 = egg_i0 * 6 + egg_i1;")) << p;

  j["nodes"].erase(1);
  j["outputs"][0]["node"] = "d";
  j["outputs"][0]["shape"] = {4, 6};
  EXPECT_TRUE(has(program(spec::parse_spec(j)), "static_cast<std::int64_t>(i), 12582912u")) << p;

  // Without the random state it reads, or with p outside [0, 1], it is named.
  for (auto bad : {json{{"p", 1.5}, {"stream", 0}}, json{{"p", 0.5}}}) {
    j["nodes"][0]["attrs"] = bad;
    const auto s = spec::parse_spec(j);
    const auto e = index_ir_check(s, s.nodes[0], OpTable(kData));
    ASSERT_TRUE(e.has_value());
    EXPECT_TRUE(has(e->describe(), "dropout(x, egg_rng)")) << e->describe();
  }
  j["nodes"][0]["attrs"] = {{"p", 0.5}, {"stream", 0}};
  j["inputs"][1]["kind"] = "";
  const auto s = spec::parse_spec(j);
  EXPECT_TRUE(index_ir_check(s, s.nodes[0], OpTable(kData)).has_value());
}

// Bicubic: the unclamped source index (scale 0.5 for a factor of 2), its floor, four taps clamped
// to the input and ATen's cubic convolution weights.
TEST(IndexIr, BicubicTakesFourClampedTapsPerDim) {
  const auto s = spec::parse_spec(
      spec_around({tensor("x", {2, 3, 8, 6})}, json::array(),
                  {node("u", "upsample_cubic", {ref("x")},
                        {{"scales", {2.0, 2.0}}, {"align_corners", false}}, {2, 3, 16, 12}, 5)}));
  const std::string p = program(s);
  EXPECT_TRUE(has(p, "= 0.5f * (static_cast<float>(egg_i1) + 0.5f) - 0.5f;")) << p;
  EXPECT_TRUE(has(p, "egg_cubic_far(")) << p;
  EXPECT_TRUE(has(p, "egg_cubic_near(1.0f - ")) << p;
  EXPECT_TRUE(has(p, " > 7 ? IndexT(7) : ")) << p;
  EXPECT_TRUE(has(p, " > 5 ? IndexT(5) : ")) << p;
}

// Advanced indexing: x[r, :, c] puts the broadcast index shape first (indexed dims apart), and a
// negative index counts from the end; a boolean mask is refused with what to write instead.
TEST(IndexIr, AdvancedIndexingReadsEachIndexTensorAtTheBroadcastIndex) {
  auto j = spec_around({tensor("x", {4, 6, 5}), egg::testing::tensor("r", {3, 1}, "int64"),
                        egg::testing::tensor("c", {1, 2}, "int64")},
                       json::array(),
                       {node("g", "index", {ref("x"), {{"list", {ref("r"), none(), ref("c")}}}},
                             json::object(), {3, 2, 6}, 5)});
  const std::string p = program(spec::parse_spec(j));
  // The result's dims: (i / 12) % 3 and (i / 6) % 2 index r [3, 1] and c [1, 2]; i % 6 is x's
  // dim 1.
  EXPECT_TRUE(has(p, "< 0 ? egg_i")) << p;
  EXPECT_TRUE(has(p, " + 4 : ")) << p;
  EXPECT_TRUE(has(p, " + 5 : ")) << p;
  EXPECT_TRUE(has(p, "x[")) << p;

  j["inputs"][1]["dtype"] = "bool";
  const auto s = spec::parse_spec(j);
  const auto e = index_ir_check(s, s.nodes[0], OpTable(kData));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(has(e->describe(), "boolean mask")) << e->describe();
  EXPECT_TRUE(has(e->hint(), "torch.where")) << e->hint();
}

// Upsampling reads the source index PyTorch computes in float: nearest by a scale factor of 2
// (1 / 2 = 0.5) and to a size (in / out); bilinear as the lerp of four reads.
TEST(IndexIr, UpsamplingReadsPyTorchsSourceIndex) {
  const auto nearest = spec::parse_spec(
      spec_around({tensor("x", {2, 3, 8, 6})}, json::array(),
                  {node("u", "upsample_nearest", {ref("x")},
                        {{"scales", {2.0, 2.0}}, {"exact", false}}, {2, 3, 16, 12}, 5)}));
  const std::string p = program(nearest);
  EXPECT_TRUE(has(p, "floorf((static_cast<float>(egg_i1)) * 0.5f)), static_cast<IndexT>(7))")) << p;
  const auto sized = spec::parse_spec(
      spec_around({tensor("x", {2, 3, 8, 6})}, json::array(),
                  {node("u", "upsample_nearest", {ref("x")}, {{"scales", nullptr}, {"exact", true}},
                        {2, 3, 10, 6}, 5)}));
  const std::string q = program(sized);
  EXPECT_TRUE(has(q, "floorf((static_cast<float>(egg_i1) + 0.5f) * 0.800000012f)")) << q;
  EXPECT_TRUE(has(q, "floorf((static_cast<float>(egg_i0) + 0.5f) * 1.0f)")) << q;

  const auto bilinear = spec::parse_spec(
      spec_around({tensor("x", {2, 3, 8, 6})}, json::array(),
                  {node("u", "upsample_linear", {ref("x")},
                        {{"scales", nullptr}, {"align_corners", true}}, {2, 3, 15, 11}, 5)}));
  const std::string b = program(bilinear);
  EXPECT_TRUE(has(b, "= 0.5f * static_cast<float>(egg_i1);")) << b;  // (8 - 1) / (15 - 1)
  EXPECT_TRUE(has(b, "< 7 ? 1 : 0))")) << b;
  size_t loads = 0;
  for (size_t at = b.find("egg_to_float(x["); at != std::string::npos;
       at = b.find("egg_to_float(x[", at + 1))
    ++loads;
  EXPECT_EQ(loads, 4u) << b;
}

}  // namespace
}  // namespace egg::backend::builtin
