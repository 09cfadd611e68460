#include "pipeline/artifacts.h"

#include "util/error.h"
#include "util/files.h"

namespace egg::pipeline {

namespace {
constexpr const char* kStepNames[] = {"spec", "stage1", "stage2", "verify", "emit"};
}

Step parse_step(const std::string& name) {
  for (int i = 0; i < 5; ++i)
    if (name == kStepNames[i]) return static_cast<Step>(i);
  throw UserError("unknown step '" + name + "'", "steps are: spec, stage1, stage2, verify, emit");
}

std::string step_name(Step step) { return kStepNames[static_cast<int>(step)]; }

std::string candidate_artifact(const backend::Candidate& c) {
  return "// EGG candidate " + c.id + ": " + c.summary + "\n" + c.code.device_code + "\n" +
         kLaunchMarker + "\n" + c.code.launch_body;
}

backend::Candidate read_candidate_artifact(const std::filesystem::path& file,
                                           const std::string& id) {
  auto text = read_file(file);
  if (!text) throw UserError("cannot read " + file.string(), "check --override-dir");
  size_t marker = text->find(kLaunchMarker);
  if (marker == std::string::npos)
    throw UserError(SourceLocation{file.string(), 0, "override"},
                    "the file has no line '" + std::string(kLaunchMarker) + "'",
                    "keep the marker line: device code above it, the body of launch() below it");
  backend::Candidate c;
  c.id = id;
  c.summary = "hand-edited " + file.filename().string();
  c.code.device_code = text->substr(0, marker);
  c.code.launch_body = text->substr(marker + std::string(kLaunchMarker).size() + 1);
  c.params = {{"override", file.string()}};
  return c;
}

void ArtifactDirs::dump_file(const std::string& name, const std::string& content) const {
  if (!dump.empty()) write_atomic(dump / name, content);
}

std::optional<std::filesystem::path> ArtifactDirs::override_file(const std::string& name) const {
  if (override_.empty()) return std::nullopt;
  auto p = override_ / name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(p, ec)) return p;
  return std::nullopt;
}

}  // namespace egg::pipeline
