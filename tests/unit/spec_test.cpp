#include "spec/spec.h"

#include <gtest/gtest.h>

#include "spec_fixtures.h"

namespace egg::spec {
namespace {

TEST(Spec, ParsesInputsParamsNodesOutputs) {
  Spec s = parse_spec(testing::gelu_bias_spec());
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].shape, (Shape{64, 1024}));
  ASSERT_EQ(s.params.size(), 1u);
  EXPECT_EQ(s.params[0].kind, "parameter");
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].args[1].kind, Arg::Kind::scalar);
  EXPECT_DOUBLE_EQ(s.nodes[0].args[1].scalar, 0.5);
  EXPECT_EQ(s.nodes[2].attrs["approximate"], "tanh");
  EXPECT_EQ(s.nodes[2].where.line, 7);
  EXPECT_EQ(s.outputs[0].node, "gelu");
  EXPECT_NE(s.find_tensor("bias"), nullptr);
  EXPECT_NE(s.find_node("add"), nullptr);
}

TEST(Spec, NormalizedIgnoresLinesAndPaths) {
  auto a = normalized(parse_spec(testing::gelu_bias_spec(7)));
  auto moved = testing::gelu_bias_spec(9);
  moved["op_file"] = "/elsewhere/op.py";
  moved["deps"] = {"/elsewhere/op.py", "/elsewhere/helpers.py"};
  EXPECT_EQ(a.dump(), normalized(parse_spec(moved)).dump());
}

TEST(Spec, NormalizedSeesConstantsAndShapes) {
  auto base = normalized(parse_spec(testing::gelu_bias_spec())).dump();
  auto other = testing::gelu_bias_spec();
  other["nodes"][0]["args"][1]["scalar"] = 0.25;
  EXPECT_NE(base, normalized(parse_spec(other)).dump());
}

TEST(Spec, MalformedSpecIsAnInternalError) {
  auto bad = testing::gelu_bias_spec();
  bad["schema"] = 99;
  EXPECT_THROW(parse_spec(bad), InternalError);
  auto no_out = testing::gelu_bias_spec();
  no_out["outputs"] = nlohmann::json::array();
  EXPECT_THROW(parse_spec(no_out), InternalError);
  auto bad_dtype = testing::gelu_bias_spec();
  bad_dtype["inputs"][0]["dtype"] = "complex128";
  EXPECT_THROW(parse_spec(bad_dtype), InternalError);
  // Numbers that do not fit an int are malformed, not converted (found by fuzz.spec).
  auto huge_schema = testing::gelu_bias_spec();
  huge_schema["schema"] = 8.9e24;
  EXPECT_THROW(parse_spec(huge_schema), InternalError);
  auto huge_line = testing::gelu_bias_spec();
  huge_line["nodes"][0]["line"] = std::int64_t{1} << 40;
  EXPECT_THROW(parse_spec(huge_line), InternalError);
  auto float_line = testing::gelu_bias_spec();
  float_line["nodes"][0]["line"] = 7.5;
  EXPECT_THROW(parse_spec(float_line), InternalError);
}

TEST(Spec, DTypes) {
  EXPECT_EQ(dtype_size(*parse_dtype("bfloat16")), 2);
  EXPECT_TRUE(is_floating(DType::float16));
  EXPECT_FALSE(is_floating(DType::boolean));
  EXPECT_FALSE(parse_dtype("float8").has_value());
}

}  // namespace
}  // namespace egg::spec
