// Step artifacts: each step's output can be dumped (--dump-dir), replaced by a hand-edited file
// (--override-dir) and resumed from (--from STEP).
//
// Files: spec.json (step spec), stage1.cu and stage2.cu (the stage's winner: the backend's device
// code, a marker line, then the body of launch()), verify.json (step verify's record).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "backend/backend.h"

namespace egg::pipeline {

// The steps, in order.
enum class Step { spec, stage1, stage2, verify, emit };

// "stage1" → Step::stage1; a UserError lists the names otherwise.
Step parse_step(const std::string& name);
// The step's name.
std::string step_name(Step step);

// The line separating device code from launch()'s body in a stage artifact.
inline constexpr const char* kLaunchMarker = "// ---- EGG: body of launch() below this line ----";

// A candidate as a stage artifact file.
std::string candidate_artifact(const backend::Candidate& c);
// Reads a stage artifact; a UserError names the file when the marker is missing.
backend::Candidate read_candidate_artifact(const std::filesystem::path& file,
                                           const std::string& id);

// Where artifacts go and come from.
struct ArtifactDirs {
  std::filesystem::path dump;       // empty: no dump
  std::filesystem::path override_;  // empty: no overrides
  Step from = Step::spec;           // first step to run; earlier ones come from override_

  // Writes `name` into the dump folder, if any.
  void dump_file(const std::string& name, const std::string& content) const;
  // The override file `name`, when the override folder has it.
  std::optional<std::filesystem::path> override_file(const std::string& name) const;
  // True when any override or resume is in effect (the cache is then bypassed).
  bool active() const { return !override_.empty() || from != Step::spec; }
};

}  // namespace egg::pipeline
