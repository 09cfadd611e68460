#include "render/template.h"

#include <gtest/gtest.h>

#include "util/error.h"

namespace egg::render {
namespace {

using nlohmann::json;

TEST(Template, SubstitutesVariablesAndDottedPaths) {
  EXPECT_EQ(render("a {{x}} b {{y.z}}", json{{"x", 1}, {"y", {{"z", "q"}}}}), "a 1 b q");
}

TEST(Template, RepeatsSectionsOverListsWithOuterLookup) {
  json ctx = {{"sep", ","}, {"items", json::array({{{"v", "a"}}, {{"v", "b"}}})}};
  EXPECT_EQ(render("{{#items}}{{v}}{{sep}}{{/items}}", ctx), "a,b,");
}

TEST(Template, InvertedSectionsRenderForFalseAndEmpty) {
  EXPECT_EQ(render("{{^f}}no{{/f}}{{^l}}empty{{/l}}{{^t}}x{{/t}}",
                   json{{"f", false}, {"l", json::array()}, {"t", true}}),
            "noempty");
}

TEST(Template, StandaloneBlockTagLinesVanish) {
  const std::string text = "begin\n  {{#items}}\n  line {{.}}\n  {{/items}}\nend\n";
  EXPECT_EQ(render(text, json{{"items", json::array({1, 2})}}), "begin\n  line 1\n  line 2\nend\n");
}

TEST(Template, NestedStandaloneSections) {
  const std::string text = "{{#a}}\n{{#b}}\nx\n{{/b}}\n{{/a}}\ny\n";
  EXPECT_EQ(render(text, json{{"a", true}, {"b", true}}), "x\ny\n");
}

TEST(Template, CommentsAreDropped) { EXPECT_EQ(render("a{{! note }}b", json::object()), "ab"); }

TEST(Template, MissingVariableNamesTemplateAndLine) {
  try {
    render("line1\nline2 {{nope}}\n", json::object(), "k.tmpl");
    FAIL() << "expected an error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("k.tmpl:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
  }
}

TEST(Template, UnclosedSectionIsAnError) {
  EXPECT_THROW(render("{{#a}}x", json{{"a", true}}), InternalError);
  EXPECT_THROW(render("x {{y", json::object()), InternalError);
}

}  // namespace
}  // namespace egg::render
