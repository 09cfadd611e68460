#include "backend/builtin/loss_ops.h"

#include "backend/builtin/op_table.h"

namespace egg::backend::builtin {
namespace {

using nlohmann::json;

constexpr const char* kFile = "templates/loss/losses.json";

std::string text(const json& entry, const char* key) { return table_text(entry, key, "", kFile); }

}  // namespace

LossOps::LossOps(const std::filesystem::path& data_dir)
    : table_(render::load_template(data_dir, "loss/losses.json")) {
  const json t = json::parse(table_.text, nullptr, false);
  if (t.is_discarded() || !t.is_object() || !t.contains("losses") || !t["losses"].is_object())
    throw InternalError(std::string(kFile) +
                        " is not a JSON object with 'losses'; check --data-dir");
  for (const auto& [op, e] : t["losses"].items()) {
    LossEntry l;
    l.kind = text(e, "kind");
    l.rows = e.value("rows", false);
    l.gather = e.value("gather", false);
    l.expr = text(e, "expr");
    if (e.contains("defaults"))
      for (const auto& [k, v] : e["defaults"].items()) l.defaults[k] = v.get<double>();
    if (e.contains("variants"))
      for (const auto& [k, v] : e["variants"].items()) l.variants[k] = v;
    l.state = text(e, "state");
    l.push = text(e, "push");
    l.row_loss = text(e, "row_loss");
    l.row_loss_smoothed = text(e, "row_loss_smoothed");
    if (l.kind.empty() || (l.rows ? l.state.empty() || l.push.empty() : l.expr.empty()))
      throw InternalError(std::string(kFile) + ": '" + op +
                          "' needs a kind and, for a row loss, a state and a push, else an expr");
    losses_.emplace(op, std::move(l));
  }
  if (t.contains("unsupported"))
    for (const auto& op : t["unsupported"]) unsupported_.insert(op.get<std::string>());
}

const LossEntry* LossOps::loss(const std::string& op) const {
  const auto it = losses_.find(op);
  return it == losses_.end() ? nullptr : &it->second;
}

std::string LossOps::supported() const {
  std::string list;
  for (const auto& [op, e] : losses_) list += (list.empty() ? "" : ", ") + op;
  return list;
}

std::string LossOps::pointwise(const LossEntry& e, const json& attrs, const std::string& x,
                               const std::string& y) const {
  std::string expr = e.expr;
  for (const auto& [attr, cases] : e.variants) {
    const json v = attrs.contains(attr) ? attrs[attr] : json(false);
    const std::string key = v.is_boolean() ? (v.get<bool>() ? "true" : "false") : v.dump();
    if (cases.contains(key)) expr = cases[key].get<std::string>();
  }
  std::map<std::string, std::string> fields = {{"x", x}, {"y", y}};
  for (const auto& [attr, fallback] : e.defaults)
    fields[attr] = float_literal(
        attrs.contains(attr) && attrs[attr].is_number() ? attrs[attr].get<double>() : fallback);
  return fill_fields(expr, fields);
}

}  // namespace egg::backend::builtin
