// The loss family's op table (templates/loss/losses.json): per loss op its kind, whether it is a
// row loss, and its CUDA float expressions (an element's loss; a row's state, push and loss) over
// the helpers of templates/loss/losses.cuh. The family's planner reads it; no CUDA is spelled in
// C++.
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "render/template.h"

namespace egg::backend::builtin {

// One loss op's entry. Expressions hold fields ({x}, {y}, attributes) the planner fills.
struct LossEntry {
  std::string kind;  // mse l1 huber smooth_l1 kl_div hinge cross_entropy triplet
  bool rows = false;
  bool gather = false;  // a row loss reading only its target's element (nll): a thread per row
  std::string expr;     // element-wise: the loss of {x} and {y}
  std::map<std::string, double> defaults;                // attributes the spec may leave out
  std::map<std::string, nlohmann::json> variants;        // attribute → {value: expr}
  std::string state, push, row_loss, row_loss_smoothed;  // row losses
};

class LossOps {
 public:
  explicit LossOps(const std::filesystem::path& data_dir);

  // The entry of `op`, or nullptr when the family has no such loss.
  const LossEntry* loss(const std::string& op) const;
  // True for a loss the family knows but does not implement.
  bool unsupported(const std::string& op) const { return unsupported_.count(op) > 0; }
  // "mse_loss, l1_loss, ..." for messages.
  std::string supported() const;
  // An element-wise loss's expression of x and y under the node's attributes (numbers as float
  // literals, a variant's expression where a boolean attribute selects one).
  std::string pointwise(const LossEntry& e, const nlohmann::json& attrs, const std::string& x,
                        const std::string& y) const;
  // The file read, for the cache key.
  std::pair<std::string, std::string> key_input() const { return {table_.name, table_.text}; }

 private:
  render::Template table_;
  std::map<std::string, LossEntry> losses_;
  std::set<std::string> unsupported_;
};

}  // namespace egg::backend::builtin
