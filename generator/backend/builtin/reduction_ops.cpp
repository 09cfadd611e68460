#include "backend/builtin/reduction_ops.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "backend/builtin/op_table.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

constexpr const char* kFile = "templates/reduction/anchors.json";

std::string text_field(const json& entry, const char* key, const std::string& fallback) {
  return table_text(entry, key, fallback, kFile);
}

ReductionMode mode_of(const std::string& op, const std::string& mode) {
  if (mode == "reduce") return ReductionMode::reduce;
  if (mode == "normalize") return ReductionMode::normalize;
  if (mode == "scan") return ReductionMode::scan;
  throw InternalError(std::string(kFile) + ": anchor '" + op + "' has mode '" + mode +
                      "' (reduce, normalize or scan)");
}

}  // namespace

ReductionOps::ReductionOps(const std::filesystem::path& data_dir)
    : table_(render::load_template(data_dir, "reduction/anchors.json")) {
  const json t = json::parse(table_.text, nullptr, false);
  if (t.is_discarded() || !t.is_object() || !t.contains("anchors") || !t["anchors"].is_object() ||
      !t.contains("norms") || !t["norms"].is_object())
    throw InternalError(std::string(kFile) +
                        " is not a JSON object with 'anchors' and 'norms'; check --data-dir");
  for (const auto& [op, e] : t["anchors"].items()) {
    ReductionAnchor a;
    a.mode = mode_of(op, text_field(e, "mode", "reduce"));
    a.reducer = text_field(e, "reducer", "");
    if (a.reducer.empty())
      throw InternalError(std::string(kFile) + ": '" + op + "' has no reducer");
    a.with_indices = text_field(e, "with_indices", "");
    a.indices = e.value("indices", false);
    a.norm = e.value("norm", false);
    a.in = text_field(e, "in", a.in);
    a.row = text_field(e, "row", a.row);
    a.element = text_field(e, "element", "");
    a.element_exp = text_field(e, "element_exp", "");
    a.scan_op = text_field(e, "scan_op", "");
    a.scan_identity = text_field(e, "scan_identity", "");
    if (a.mode == ReductionMode::scan && (a.scan_op.empty() || a.scan_identity.empty()))
      throw InternalError(std::string(kFile) + ": scan '" + op +
                          "' needs scan_op and scan_identity");
    if (e.contains("integer")) {
      const json& i = e["integer"];
      if (!i.is_object())
        throw InternalError(std::string(kFile) + ": '" + op +
                            "' has an 'integer' that is no object");
      a.integer = true;
      a.int_scan_op = text_field(i, "scan_op", "");
      a.int_scan_identity = text_field(i, "scan_identity", "");
      if (a.mode == ReductionMode::scan && (a.int_scan_op.empty() || a.int_scan_identity.empty()))
        throw InternalError(std::string(kFile) + ": scan '" + op +
                            "' needs an integer scan_op and scan_identity");
    }
    anchors_.emplace(op, std::move(a));
  }
  for (const auto& [p, e] : t["norms"].items())
    norms_.emplace(p, NormCase{text_field(e, "in", "egg_x"), text_field(e, "row", ""),
                               text_field(e, "reducer", "")});
  for (const char* p : {"2", "1", "inf", "-inf", "0", "p"})
    if (!norms_.count(p))
      throw InternalError(std::string(kFile) + ": the norms have no case '" + p + "'");
}

const ReductionAnchor* ReductionOps::anchor(const std::string& op) const {
  const auto it = anchors_.find(op);
  return it == anchors_.end() ? nullptr : &it->second;
}

NormCase ReductionOps::norm_case(double p) const {
  std::string key = "p";
  if (std::isinf(p))
    key = p > 0 ? "inf" : "-inf";
  else if (p == 2.0 || p == 1.0 || p == 0.0)
    key = std::to_string(static_cast<int>(p));
  NormCase c = norms_.at(key);
  const std::map<std::string, std::string> fields = {
      {"p", float_literal(p)}, {"inv_p", key == "p" ? float_literal(1.0 / p) : ""}};
  c.in = fill_fields(c.in, fields);
  c.row = fill_fields(c.row, fields);
  return c;
}

}  // namespace egg::backend::builtin
