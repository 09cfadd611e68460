#include "backend/backend.h"
#include "backend/builtin/builtin_backend.h"
#include "backend/llm/llm_backend.h"

namespace egg::backend {

void check_config(const BackendConfig& config) {
  if (config.name == "builtin") {
    if (!config.model.empty())
      throw UserError("the builtin backend takes no model (got '" + config.model + "')",
                      "drop MODEL/--model, or choose an LLM backend (openai, anthropic)");
    return;
  }
  if (config.name == "openai" || config.name == "anthropic" || config.name == "replay")
    return llm_backend::check_llm_config(config);
  throw UserError("unknown backend '" + config.name + "'",
                  "choose one of: builtin, openai, anthropic, replay");
}

std::unique_ptr<Backend> make_backend(const BackendConfig& config) {
  check_config(config);
  if (config.name == "builtin") {
    return std::make_unique<builtin::BuiltinBackend>(config.data_dir, config.precision,
                                                     config.cudnn, config.wgmma);
  }
  return llm_backend::make_llm_backend(config);
}

}  // namespace egg::backend
