// Spec JSON fixtures shaped like the frontend's output (docs/SPEC.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace egg::testing {

// True when `text` contains `needle` (for checks on rendered sources).
inline bool has(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// A list given to a fixture as a braced list: `f({tensor("x", ...)})`, a single json element, is
// that element itself under clang (CWG 2137) and a one-element array under gcc. Both become the
// array; `{}` (null) becomes the empty list.
inline nlohmann::json as_list(nlohmann::json j) {
  if (j.is_null()) return nlohmann::json::array();
  return j.is_array() ? j : nlohmann::json::array({j});
}

// A spec node as the frontend writes it (docs/SPEC.md), at `line` of /src/op.py.
inline nlohmann::json node(const std::string& name, const std::string& op, nlohmann::json args,
                           nlohmann::json attrs, nlohmann::json shape, int line,
                           const std::string& dtype = "float32") {
  return {{"name", name},
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

// An input, output or param tensor entry (`kind`: "parameter" or "buffer" for a param).
inline nlohmann::json tensor(const std::string& name, nlohmann::json shape,
                             const std::string& dtype = "float32", const std::string& kind = "") {
  nlohmann::json t = {{"name", name}, {"shape", shape}, {"dtype", dtype}};
  if (!kind.empty()) t["kind"] = kind;
  return t;
}

// Node arguments: a reference to a node or tensor, and None.
inline nlohmann::json ref(const std::string& name) { return {{"node", name}}; }
inline nlohmann::json none() { return {{"none", true}}; }

// A whole spec around `nodes`, its one output the last node.
inline nlohmann::json spec_around(nlohmann::json inputs, nlohmann::json params,
                                  nlohmann::json nodes) {
  nodes = as_list(nodes);
  const nlohmann::json& last = nodes.back();
  return {{"schema", 2},
          {"op_file", "/src/op.py"},
          {"model_class", "Model"},
          {"init_inputs", nlohmann::json::array()},
          {"inputs", as_list(inputs)},
          {"params", as_list(params)},
          {"nodes", nodes},
          {"outputs",
           {{{"name", "out0"},
             {"node", last["name"]},
             {"shape", last["shape"]},
             {"dtype", last["dtype"]}}}},
          {"deps", {"/src/op.py"}},
          {"reference", {{"params", "refs/params.pt"}, {"sets", nlohmann::json::array()}}}};
}

// x[64,1024] * 0.5 + bias[1024] → gelu(tanh), as the quickstart's first op.
inline nlohmann::json gelu_bias_spec(int line = 7) {
  using nlohmann::json;
  auto node = [&](const std::string& name, const std::string& op, json args, json attrs) {
    return json{{"name", name},
                {"op", op},
                {"target", "torch." + op},
                {"args", args},
                {"attrs", attrs},
                {"shape", {64, 1024}},
                {"dtype", "float32"},
                {"file", "/src/op.py"},
                {"line", line},
                {"code", "return gelu(x * 0.5 + self.bias)"}};
  };
  return json{
      {"schema", 2},
      {"op_file", "/src/op.py"},
      {"model_class", "Model"},
      {"init_inputs", {1024}},
      {"inputs", {{{"name", "x"}, {"shape", {64, 1024}}, {"dtype", "float32"}}}},
      {"params",
       {{{"name", "bias"}, {"shape", {1024}}, {"dtype", "float32"}, {"kind", "parameter"}}}},
      {"nodes",
       {node("mul", "mul", {{{"node", "x"}}, {{"scalar", 0.5}}}, json::object()),
        node("add", "add", {{{"node", "mul"}}, {{"node", "bias"}}}, {{"alpha", 1}}),
        node("gelu", "gelu", {{{"node", "add"}}}, {{"approximate", "tanh"}})}},
      {"outputs",
       {{{"name", "out0"}, {"node", "gelu"}, {"shape", {64, 1024}}, {"dtype", "float32"}}}},
      {"deps", {"/src/op.py"}},
      {"reference", {{"params", "refs/params.pt"}, {"sets", json::array()}}}};
}

}  // namespace egg::testing
