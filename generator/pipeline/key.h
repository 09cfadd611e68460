// The cache key of a generation (BRIEF: "Cache"): schema, generator, normalized spec, arches,
// backend/model/options, template and prompt contents, nvcc version.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "cache/key.h"
#include "pipeline/generate.h"
#include "spec/spec.h"

namespace egg::pipeline {

// Builds the key's fields.
cache::KeyBuilder build_key(const GenerateOptions& o, const std::string& name, const spec::Spec& s,
                            const backend::Backend& backend, const std::vector<std::string>& arches,
                            const std::vector<std::string>& prompt_texts,
                            const std::string& nvcc_version);

}  // namespace egg::pipeline
