// Lowering of composites no family anchors (backend/builtin/lowering.h): attention as the matmuls,
// scale, mask and softmax PyTorch's reference path computes, reductions over scattered dims as a
// permuted copy, exclusive scans and global pools as reductions, planned onto the families.
#include "backend/builtin/lowering.h"

#include <gtest/gtest.h>

#include "backend/builtin/builtin_backend.h"
#include "spec_fixtures.h"

namespace egg::backend::builtin {
namespace {

using egg::testing::has;
using egg::testing::node;
using egg::testing::ref;
using egg::testing::spec_around;
using nlohmann::json;

const std::filesystem::path kData = EGG_TEST_DATA_DIR;

json tensor(const std::string& name, json shape, const std::string& dtype = "float32") {
  return egg::testing::tensor(name, shape, dtype, "");
}

json attention(json attrs, json mask = json{{"none", true}},
               const std::string& mask_type = "bool") {
  json inputs = {tensor("q", {2, 4, 64, 32}), tensor("k", {2, 4, 80, 32}),
                 tensor("v", {2, 4, 80, 16})};
  if (!mask.contains("none")) inputs.push_back(tensor("m", {64, 80}, mask_type));
  return spec_around(inputs, json::array(),
                     {node("att", "scaled_dot_product_attention",
                           {ref("q"), ref("k"), ref("v"), mask}, attrs, {2, 4, 64, 16}, 12)});
}

std::string ops_of(const spec::Spec& s) {
  std::string out;
  for (const auto& n : s.nodes) out += (out.empty() ? "" : " ") + n.op;
  return out;
}

TEST(Lowering, AttentionIsTwoMatmulsAScaleAndASoftmax) {
  const auto s = lower_composites(
      spec::parse_spec(attention({{"dropout_p", 0.0}, {"is_causal", false}, {"scale", nullptr}})));
  EXPECT_EQ(ops_of(s), "transpose matmul mul softmax matmul");
  EXPECT_EQ(s.nodes[1].shape, (spec::Shape{2, 4, 64, 80}));
  EXPECT_DOUBLE_EQ(s.nodes[2].args[1].scalar, 1.0 / std::sqrt(32.0));  // 1/sqrt(E) by default
  EXPECT_EQ(s.nodes.back().name, "att");                               // readers need no renaming
  EXPECT_EQ(s.nodes.back().where.line, 12);
  // The builtin backend plans it onto its families.
  BuiltinBackend backend(kData);
  const Plan plan = backend.plan(s);
  std::string families;
  for (const auto& seg : plan.segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "gemm reduction gemm ");
}

// sum over dims 0 and 2 of [16, 32, 64], keepdim: the reduced dims moved to the end, the sum over
// the last two, and the keepdim shape as a reshape (a view of the result).
TEST(Lowering, AReductionOverDimsThatAreNotAdjacentReducesAPermutedCopy) {
  auto reduce = [](json attrs, json shape) {
    return lower_composites(
        spec::parse_spec(spec_around({tensor("x", {16, 32, 64})}, json::array(),
                                     {node("s", "sum", {ref("x")}, attrs, std::move(shape), 9)})));
  };
  const auto s = reduce({{"dim", {0, -1}}, {"keepdim", true}, {"dtype", nullptr}}, {1, 32, 1});
  EXPECT_EQ(ops_of(s), "permute sum reshape");
  EXPECT_EQ(s.nodes[0].attrs["dims"], json({1, 0, 2}));
  EXPECT_EQ(s.nodes[0].shape, (spec::Shape{32, 16, 64}));
  EXPECT_EQ(s.nodes[1].attrs["dim"], json({1, 2}));
  EXPECT_FALSE(s.nodes[1].attrs["keepdim"].get<bool>());
  EXPECT_EQ(s.nodes[1].shape, (spec::Shape{32}));
  EXPECT_EQ(s.nodes[2].name, "s");
  EXPECT_EQ(s.nodes[2].shape, (spec::Shape{1, 32, 1}));
  EXPECT_EQ(s.nodes[2].where.line, 9);
  // Without keepdim the sum keeps the node's name; adjacent dims are left alone.
  EXPECT_EQ(ops_of(reduce({{"dim", {0, 2}}, {"keepdim", false}}, {32})), "permute sum");
  EXPECT_EQ(ops_of(reduce({{"dim", {1, 2}}, {"keepdim", false}}, {16})), "sum");
  // The planner makes it a copy and a reduction.
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(s).segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "elementwise reduction ");
}

// A count (a bool mask summed: int64 in PyTorch) is no composite: the reduction family sums the
// mask in long long, exactly at any length, with the comparison as its prologue (one kernel).
TEST(Lowering, ACountStaysOneIntegerSum) {
  const auto s = spec::parse_spec(spec_around(
      {tensor("x", {16, 4096})}, json::array(),
      {node("m", "gt", {ref("x"), json{{"scalar", 0.0}}}, json::object(), {16, 4096}, 8, "bool"),
       node("c", "sum", {ref("m")}, {{"dim", {1}}, {"keepdim", false}, {"dtype", nullptr}}, {16}, 8,
            "int64")}));
  EXPECT_EQ(ops_of(lower_composites(s)), "gt sum");
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(s).segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "reduction ");
}

// cummax(x, 1).indices: the positions where x equals its running maximum (or is NaN) offered to a
// second running maximum, cast to int64; the values' scan is kept as it is.
TEST(Lowering, CummaxIndicesAreTheRunningMaximumOfThePositionsThatSetIt) {
  const auto s = lower_composites(
      spec::parse_spec(spec_around({tensor("x", {8, 100, 3})}, json::array(),
                                   {node("cm", "cummax", {ref("x")}, {{"dim", 1}}, {8, 100, 3}, 6),
                                    node("i", "getitem", {ref("cm"), json{{"scalar", 1}}},
                                         json::object(), {8, 100, 3}, 6, "int64")})));
  EXPECT_EQ(ops_of(s), "cummax eq isnan logical_or arange reshape where cummax cast");
  EXPECT_EQ(s.nodes[1].args[1].node, "cm");  // the scan node is its values
  EXPECT_EQ(s.nodes[4].shape, (spec::Shape{100}));
  EXPECT_EQ(s.nodes[5].shape, (spec::Shape{100, 1}));  // broadcast over the dim after it
  EXPECT_EQ(s.nodes[7].attrs["dim"], 1);
  EXPECT_EQ(s.nodes.back().name, "i");
  EXPECT_EQ(s.nodes.back().dtype, spec::DType::int64);
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(s).segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "reduction elementwise reduction elementwise ");  // the int64 cast: its own
}

// An exclusive cumsum as PyTorch code writes it: cat([zeros, cumsum(x[:, :-1])], 1). It is the
// exclusive scan of x itself (position i the running sum of x before i): one cumsum node over x
// with `exclusive`, read aligned (vectors), the slice and the fill dropped. Another slice (x[:,
// 1:]) becomes cumsum(cat([zeros, y]), 1) (0 + a is a exactly: the same values), whose slice and
// cat the scan reads through by index. Either way one kernel, no pass of its own for the cat or the
// slice.
TEST(Lowering, AnExclusiveScanScansTheShiftedInput) {
  auto exclusive = [](double fill, const std::string& scan_op, int cat_dim, int start = 0,
                      int end = 1023) {
    return spec::parse_spec(spec_around(
        {tensor("x", {64, 1024})}, json::array(),
        {node("sl", "slice", {ref("x")}, {{"dim", 1}, {"start", start}, {"end", end}, {"step", 1}},
              {64, 1023}, 7),
         node("c", scan_op, {ref("sl")}, {{"dim", 1}, {"dtype", nullptr}}, {64, 1023}, 7),
         node("z", "full", json::array(), {{"fill_value", fill}, {"dtype", nullptr}}, {64, 1}, 8),
         node("cat", "cat", {json{{"list", {ref("z"), ref("c")}}}}, {{"dim", cat_dim}}, {64, 1024},
              8)}));
  };
  const auto s = lower_composites(exclusive(0.0, "cumsum", -1));
  EXPECT_EQ(ops_of(s), "cumsum");
  EXPECT_EQ(s.nodes[0].name, "cat");  // readers and outputs need no renaming
  EXPECT_EQ(s.nodes[0].args[0].node, "x");
  EXPECT_EQ(s.nodes[0].shape, (spec::Shape{64, 1024}));
  EXPECT_EQ(s.nodes[0].attrs["dim"], -1);
  EXPECT_TRUE(s.nodes[0].attrs.value("exclusive", false));
  EXPECT_EQ(ops_of(lower_composites(exclusive(1.0, "cumprod", 1))), "cumprod");
  EXPECT_EQ(ops_of(lower_composites(exclusive(0.0, "cumsum", 1, 0, -1))), "cumsum");  // x[:, :-1]
  // Another slice: the cat in front of the slice, scanned by index.
  const auto other = lower_composites(exclusive(0.0, "cumsum", 1, 1, 1024));
  EXPECT_EQ(ops_of(other), "slice full cat cumsum");
  EXPECT_EQ(other.nodes[2].name, "cat__shifted");
  EXPECT_EQ(other.nodes[2].args[0].items[1].node, "sl");
  EXPECT_EQ(other.nodes[3].name, "cat");
  EXPECT_EQ(other.nodes[3].args[0].node, "cat__shifted");
  EXPECT_FALSE(other.nodes[3].attrs.value("exclusive", false));
  // Not the scan's identity, or the block behind: left alone.
  EXPECT_EQ(ops_of(lower_composites(exclusive(1.0, "cumsum", 1))), "slice cumsum full cat");
  EXPECT_EQ(ops_of(lower_composites(exclusive(0.0, "cumprod", 1))), "slice cumprod full cat");
  BuiltinBackend backend(kData);
  for (const auto& spec : {s, other}) {
    std::string families;
    for (const auto& seg : backend.plan(spec).segments) families += seg.family->name() + " ";
    EXPECT_EQ(families, "reduction ");
  }
}

// A pool with one window over its whole input plane is the reduction over the pooled dims
// (keepdim: the pool's shape), planned as a reduction, not as the pool family's thread per output
// walking the window: adaptive pooling to 1, a window the input's size without padding, and a
// divisor_override as a sum and a division. A window that leaves part of the plane out, or padding,
// stays a pool.
TEST(Lowering, APoolOverTheWholePlaneIsAReductionOverItsDims) {
  auto pool = [](const std::string& op, json attrs, json in_shape, json out_shape) {
    return lower_composites(spec::parse_spec(
        spec_around({tensor("x", std::move(in_shape))}, json::array(),
                    {node("y", "gelu", {ref("x")}, {{"approximate", "none"}}, {8, 16, 30, 30}, 5),
                     node("p", op, {ref("y")}, std::move(attrs), std::move(out_shape), 6)})));
  };
  auto s = pool("adaptive_avg_pool2d", {{"output_size", {1, 1}}}, {8, 16, 30, 30}, {8, 16, 1, 1});
  EXPECT_EQ(ops_of(s), "gelu mean");
  EXPECT_EQ(s.nodes[1].name, "p");  // readers and outputs need no renaming
  EXPECT_EQ(s.nodes[1].attrs["dim"], json({-2, -1}));
  EXPECT_TRUE(s.nodes[1].attrs["keepdim"].get<bool>());
  EXPECT_EQ(s.nodes[1].shape, (spec::Shape{8, 16, 1, 1}));
  EXPECT_EQ(s.nodes[1].where.line, 6);
  BuiltinBackend backend(kData);
  std::string families;
  for (const auto& seg : backend.plan(s).segments) families += seg.family->name() + " ";
  EXPECT_EQ(families, "reduction ");

  EXPECT_EQ(ops_of(pool("max_pool2d", {{"kernel_size", {30, 30}}, {"stride", json::array()}},
                        {8, 16, 30, 30}, {8, 16, 1, 1})),
            "gelu amax");
  s = pool("avg_pool2d", {{"kernel_size", 30}, {"divisor_override", 7}}, {8, 16, 30, 30},
           {8, 16, 1, 1});
  EXPECT_EQ(ops_of(s), "gelu sum div");
  EXPECT_EQ(s.nodes[1].name, "p__sum");
  EXPECT_DOUBLE_EQ(s.nodes[2].args[1].scalar, 7.0);
  EXPECT_EQ(s.nodes[2].name, "p");
  // Not the whole plane: a smaller window, padding, dilation, an adaptive output above 1.
  EXPECT_EQ(ops_of(pool("avg_pool2d", {{"kernel_size", 29}}, {8, 16, 30, 30}, {8, 16, 1, 1})),
            "gelu avg_pool2d");
  EXPECT_EQ(ops_of(pool("max_pool2d", {{"kernel_size", 30}, {"padding", 1}, {"stride", 31}},
                        {8, 16, 30, 30}, {8, 16, 1, 1})),
            "gelu max_pool2d");
  EXPECT_EQ(ops_of(pool("adaptive_avg_pool2d", {{"output_size", {2, 1}}}, {8, 16, 30, 30},
                        {8, 16, 2, 1})),
            "gelu adaptive_avg_pool2d");
}

// A squeeze-excitation's convolutions of a pooled [2, 96, 1, 1]: a product of the reshaped input
// and weight whose result keeps the convolution's shape, so the ReLU after it is its epilogue.
TEST(Lowering, AConvolutionOfOnePositionIsAProductWithItsEpilogue) {
  auto conv = [](json weight_shape, json attrs, json in_shape = {2, 96, 1, 1},
                 json out_shape = {2, 24, 1, 1}) {
    return lower_composites(spec::parse_spec(spec_around(
        {tensor("x", std::move(in_shape))},
        {egg::testing::tensor("w", std::move(weight_shape), "float32", "parameter"),
         egg::testing::tensor("b", {24}, "float32", "parameter")},
        {node("c", "conv2d", {ref("x"), ref("w"), ref("b")}, std::move(attrs), out_shape, 7),
         node("r", "relu", {ref("c")}, json::object(), out_shape, 8)})));
  };
  const json plain = {{"stride", {1, 1}}, {"padding", {0, 0}}, {"dilation", {1, 1}}, {"groups", 1}};
  const auto s = conv({24, 96, 1, 1}, plain);
  EXPECT_EQ(ops_of(s), "reshape reshape linear reshape add relu");
  EXPECT_EQ(s.nodes[0].shape, (spec::Shape{2, 96}));
  EXPECT_EQ(s.nodes[1].shape, (spec::Shape{24, 96}));
  EXPECT_EQ(s.nodes[2].shape, (spec::Shape{2, 24, 1, 1}));
  EXPECT_EQ(s.nodes[2].where.line, 7);
  EXPECT_EQ(s.nodes[3].shape, (spec::Shape{24, 1, 1}));  // the bias, broadcasting over channels
  EXPECT_EQ(s.nodes[4].name, "c");                       // readers need no renaming
  BuiltinBackend backend(kData);
  const Plan plan = backend.plan(s);
  ASSERT_EQ(plan.segments.size(), 1u);
  EXPECT_EQ(plan.segments[0].family->name(), "gemm");
  EXPECT_EQ(plan.segments[0].nodes, (std::vector<std::string>{"c__product", "c", "r"}));
  EXPECT_EQ(plan.aliases.size(), 3u);  // the reshaped input, weight and bias: no copies
  // Stride and dilation change nothing at one position; padding, a wider kernel, groups or more
  // positions keep the convolution.
  EXPECT_EQ(ops_of(conv({24, 96, 1, 1}, {{"stride", {2, 2}}, {"padding", "valid"}})),
            "reshape reshape linear reshape add relu");
  json padded = plain;
  padded["padding"] = {1, 1};
  EXPECT_EQ(ops_of(conv({24, 96, 1, 1}, padded, {2, 96, 1, 1}, {2, 24, 3, 3})), "conv2d relu");
  EXPECT_EQ(ops_of(conv({24, 96, 3, 3}, plain, {2, 96, 3, 3})), "conv2d relu");
  json grouped = plain;
  grouped["groups"] = 2;
  EXPECT_EQ(ops_of(conv({24, 48, 1, 1}, grouped)), "conv2d relu");
  EXPECT_EQ(ops_of(conv({24, 96, 1, 1}, plain, {2, 96, 4, 4}, {2, 24, 4, 4})), "conv2d relu");
}

// A depthwise 3x3 convolution, stride 2, padding 1, of a pooled [2, 96, 1, 1]: its one output
// position reads the kernel's centre alone, so it is x times each channel's centre weight.
TEST(Lowering, ADepthwiseConvolutionOfOnePositionScalesByTheTapItReads) {
  auto conv = [](json attrs, json bias = json{{"none", true}}) {
    return lower_composites(spec::parse_spec(
        spec_around({tensor("x", {2, 96, 1, 1})},
                    {egg::testing::tensor("w", {96, 1, 3, 3}, "float32", "parameter"),
                     egg::testing::tensor("b", {96}, "float32", "parameter")},
                    {node("c", "conv2d", {ref("x"), ref("w"), std::move(bias)}, std::move(attrs),
                          {2, 96, 1, 1}, 7)})));
  };
  const json attrs = {
      {"stride", {2, 2}}, {"padding", {1, 1}}, {"dilation", {1, 1}}, {"groups", 96}};
  const auto s = conv(attrs);
  EXPECT_EQ(ops_of(s), "select select select reshape mul");
  EXPECT_EQ(s.nodes[0].attrs, json({{"dim", 3}, {"index", 1}}));
  EXPECT_EQ(s.nodes[1].attrs, json({{"dim", 2}, {"index", 1}}));
  EXPECT_EQ(s.nodes[2].attrs, json({{"dim", 1}, {"index", 0}}));
  EXPECT_EQ(s.nodes[3].shape, (spec::Shape{96, 1, 1}));
  EXPECT_EQ(s.nodes[4].name, "c");
  EXPECT_EQ(s.nodes[4].where.line, 7);
  BuiltinBackend backend(kData);
  EXPECT_EQ(backend.plan(s).segments.at(0).family->name(), "elementwise");
  EXPECT_EQ(ops_of(conv(attrs, ref("b"))), "select select select reshape mul reshape add");
  // Dilation 2 with padding 2 reads the centre too; padding 0 reads the corner tap.
  json dilated = attrs;
  dilated["dilation"] = {2, 2};
  dilated["padding"] = {2, 2};
  EXPECT_EQ(conv(dilated).nodes[0].attrs["index"], 1);
  json corner = attrs;
  corner["padding"] = {0, 0};
  EXPECT_EQ(conv(corner).nodes[0].attrs["index"], 0);
  // No tap reaches the input (padding 3 of a 3-wide kernel), or groups that are not the channels:
  // the convolution stays.
  json outside = attrs;
  outside["padding"] = {3, 3};
  EXPECT_EQ(ops_of(conv(outside)), "conv2d");
  json grouped = attrs;
  grouped["groups"] = 48;
  EXPECT_EQ(ops_of(conv(grouped)), "conv2d");
}

TEST(Lowering, MasksAndCausalityBecomeWhereAndAdd) {
  auto s = lower_composites(spec::parse_spec(
      attention({{"dropout_p", 0.0}, {"is_causal", false}, {"scale", 0.5}}, ref("m"))));
  EXPECT_EQ(ops_of(s), "transpose matmul mul where softmax matmul");
  EXPECT_DOUBLE_EQ(s.nodes[2].args[1].scalar, 0.5);
  EXPECT_EQ(s.nodes[3].args[0].node, "m");  // kept where the mask is true
  s = lower_composites(
      spec::parse_spec(attention({{"dropout_p", 0.0}, {"is_causal", false}}, ref("m"), "float32")));
  EXPECT_EQ(ops_of(s), "transpose matmul mul add softmax matmul");
  s = lower_composites(
      spec::parse_spec(attention({{"dropout_p", 0.0}, {"is_causal", true}, {"scale", nullptr}})));
  EXPECT_EQ(ops_of(s), "transpose matmul mul full tril where softmax matmul");
  EXPECT_EQ(s.nodes[3].shape, (spec::Shape{64, 80}));
  EXPECT_NO_THROW(BuiltinBackend(kData).check_supported(s));
}

TEST(Lowering, DropoutIsNamedWithItsLine) {
  try {
    lower_composites(spec::parse_spec(attention({{"dropout_p", 0.1}, {"is_causal", false}})));
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_EQ(e.where().line, 12);
    EXPECT_TRUE(has(e.describe(), "dropout_p")) << e.describe();
    EXPECT_TRUE(has(e.hint(), "eval mode")) << e.hint();
  }
}

}  // namespace
}  // namespace egg::backend::builtin
