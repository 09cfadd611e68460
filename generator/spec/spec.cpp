#include "spec/spec.h"

#include <fstream>
#include <limits>

#include "util/files.h"

namespace egg::spec {
namespace {

using nlohmann::json;

struct DTypeEntry {
  const char* name;
  DType dtype;
  int size;
};

constexpr DTypeEntry kDTypes[] = {
    {"float32", DType::float32, 4},   {"float16", DType::float16, 2},
    {"bfloat16", DType::bfloat16, 2}, {"float64", DType::float64, 8},
    {"int64", DType::int64, 8},       {"int32", DType::int32, 4},
    {"int8", DType::int8, 1},         {"uint8", DType::uint8, 1},
    {"bool", DType::boolean, 1},
};

[[noreturn]] void malformed(const std::string& what) {
  throw InternalError("malformed spec from the frontend: " + what +
                      " (please report this as a bug in EGG, with the op.py)");
}

// The int field `key` of `j`, `dflt` when it is missing; an integer of int's range, else the spec
// is malformed (a number such as 8.9e24 does not convert to int).
int int_field(const json& j, const char* key, int dflt, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) return dflt;
  if (!it->is_number_integer()) malformed(where + ": " + key + " is not an integer");
  const auto v = it->get<std::int64_t>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    malformed(where + ": " + key + " is out of range");
  return static_cast<int>(v);
}

DType dtype_of(const json& j, const std::string& where) {
  if (!j.is_string()) malformed(where + ": dtype is not a string");
  auto d = parse_dtype(j.get<std::string>());
  if (!d) malformed(where + ": unknown dtype " + j.get<std::string>());
  return *d;
}

Shape shape_of(const json& j, const std::string& where) {
  if (!j.is_array()) malformed(where + ": shape is not a list");
  Shape s;
  for (const auto& v : j) {
    if (!v.is_number_integer()) malformed(where + ": shape holds a non-integer");
    s.push_back(v.get<std::int64_t>());
  }
  return s;
}

Tensor tensor_of(const json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("name")) malformed(where + ": tensor without a name");
  Tensor t;
  t.name = j.at("name").get<std::string>();
  t.shape = shape_of(j.value("shape", json::array()), where + " " + t.name);
  t.dtype = dtype_of(j.value("dtype", json("float32")), where + " " + t.name);
  t.kind = j.value("kind", "");
  return t;
}

Arg arg_of(const json& j, const std::string& where) {
  Arg a;
  if (!j.is_object()) malformed(where + ": argument is not an object");
  if (j.contains("node")) {
    a.kind = Arg::Kind::node;
    a.node = j.at("node").get<std::string>();
  } else if (j.contains("scalar")) {
    a.kind = Arg::Kind::scalar;
    a.scalar = j.at("scalar").get<double>();
  } else if (j.contains("bool")) {
    a.kind = Arg::Kind::boolean;
    a.flag = j.at("bool").get<bool>();
  } else if (j.contains("list")) {
    a.kind = Arg::Kind::list;
    for (const auto& item : j.at("list")) a.items.push_back(arg_of(item, where));
  } else if (j.contains("none")) {
    a.kind = Arg::Kind::none;
  } else {
    a.kind = Arg::Kind::other;
    a.raw = j;
  }
  return a;
}

json arg_json(const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::node:
      return {{"node", a.node}};
    case Arg::Kind::scalar:
      return {{"scalar", a.scalar}};
    case Arg::Kind::boolean:
      return {{"bool", a.flag}};
    case Arg::Kind::none:
      return {{"none", true}};
    case Arg::Kind::other:
      return a.raw;
    case Arg::Kind::list: {
      json items = json::array();
      for (const auto& i : a.items) items.push_back(arg_json(i));
      return {{"list", items}};
    }
  }
  return nullptr;
}

json tensor_json(const Tensor& t) {
  json j = {{"name", t.name}, {"shape", t.shape}, {"dtype", dtype_name(t.dtype)}};
  if (!t.kind.empty()) j["kind"] = t.kind;
  return j;
}

}  // namespace

std::optional<DType> parse_dtype(const std::string& name) {
  for (const auto& e : kDTypes)
    if (name == e.name) return e.dtype;
  return std::nullopt;
}

std::string dtype_name(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.name;
  return "unknown";
}

int dtype_size(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e.size;
  return 0;
}

bool is_floating(DType d) {
  return d == DType::float32 || d == DType::float16 || d == DType::bfloat16 || d == DType::float64;
}

const Node* Spec::find_node(const std::string& name) const {
  for (const auto& n : nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const Tensor* Spec::find_tensor(const std::string& name) const {
  for (const auto& t : inputs)
    if (t.name == name) return &t;
  for (const auto& t : params)
    if (t.name == name) return &t;
  return nullptr;
}

const Shape* Spec::shape_of(const std::string& name) const {
  if (const Node* n = find_node(name)) return &n->shape;
  if (const Tensor* t = find_tensor(name)) return &t->shape;
  return nullptr;
}

std::optional<DType> Spec::dtype_of(const std::string& name) const {
  if (const Node* n = find_node(name)) return n->dtype;
  if (const Tensor* t = find_tensor(name)) return t->dtype;
  return std::nullopt;
}

Spec parse_spec(const json& j) {
  if (!j.is_object()) malformed("top level is not an object");
  Spec s;
  s.schema = int_field(j, "schema", 0, "spec");
  if (s.schema != kSchemaVersion)
    malformed("schema " + std::to_string(s.schema) + ", expected " +
              std::to_string(kSchemaVersion));
  try {
    s.op_file = j.value("op_file", "");
    s.model_class = j.value("model_class", "Model");
    s.init_inputs = j.value("init_inputs", json::array());
    for (const auto& t : j.value("inputs", json::array()))
      s.inputs.push_back(tensor_of(t, "input"));
    for (const auto& t : j.value("params", json::array()))
      s.params.push_back(tensor_of(t, "param"));
    for (const auto& n : j.value("nodes", json::array())) {
      Node node;
      node.name = n.at("name").get<std::string>();
      node.op = n.at("op").get<std::string>();
      node.target = n.value("target", node.op);
      for (const auto& a : n.value("args", json::array()))
        node.args.push_back(arg_of(a, node.name));
      node.attrs = n.value("attrs", json::object());
      node.shape = shape_of(n.value("shape", json::array()), node.name);
      node.dtype = dtype_of(n.value("dtype", json("float32")), node.name);
      node.where = {n.value("file", s.op_file), int_field(n, "line", 0, node.name), node.op};
      node.code = n.value("code", "");
      s.nodes.push_back(std::move(node));
    }
    for (const auto& o : j.value("outputs", json::array())) {
      Output out;
      out.name = o.at("name").get<std::string>();
      out.node = o.at("node").get<std::string>();
      out.shape = shape_of(o.value("shape", json::array()), out.name);
      out.dtype = dtype_of(o.value("dtype", json("float32")), out.name);
      s.outputs.push_back(std::move(out));
    }
    for (const auto& d : j.value("deps", json::array())) s.deps.push_back(d.get<std::string>());
    s.reference = j.value("reference", json::object());
  } catch (const json::exception& e) {
    malformed(e.what());
  }
  if (s.outputs.empty()) malformed("no outputs");
  return s;
}

Spec read_spec(const std::filesystem::path& path) {
  auto text = read_file(path);
  if (!text) throw InternalError("the frontend wrote no spec at " + path.string());
  json j = json::parse(*text, nullptr, false);
  if (j.is_discarded()) malformed(path.string() + " is not valid JSON");
  return parse_spec(j);
}

json normalized(const Spec& s) {
  json j;
  j["schema"] = s.schema;
  j["model_class"] = s.model_class;
  j["init_inputs"] = s.init_inputs;
  j["inputs"] = json::array();
  for (const auto& t : s.inputs) j["inputs"].push_back(tensor_json(t));
  j["params"] = json::array();
  for (const auto& t : s.params) j["params"].push_back(tensor_json(t));
  j["nodes"] = json::array();
  for (const auto& n : s.nodes) {
    json args = json::array();
    for (const auto& a : n.args) args.push_back(arg_json(a));
    j["nodes"].push_back({{"name", n.name},
                          {"op", n.op},
                          {"args", args},
                          {"attrs", n.attrs},
                          {"shape", n.shape},
                          {"dtype", dtype_name(n.dtype)}});
  }
  j["outputs"] = json::array();
  for (const auto& o : s.outputs)
    j["outputs"].push_back(
        {{"name", o.name}, {"node", o.node}, {"shape", o.shape}, {"dtype", dtype_name(o.dtype)}});
  return j;
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace egg::spec
