#include "backend/backend.h"
#include "backend/builtin/builtin_backend.h"

namespace egg::backend {

std::unique_ptr<Backend> make_backend(const std::string& name, const std::string& model,
                                      const std::filesystem::path& data_dir) {
  if (name == "builtin") {
    if (!model.empty())
      throw UserError("the builtin backend takes no model (got '" + model + "')",
                      "drop MODEL/--model, or choose an LLM backend");
    return std::make_unique<builtin::BuiltinBackend>(data_dir);
  }
  throw UserError("unknown backend '" + name + "'", "this build of EGG provides: builtin");
}

}  // namespace egg::backend
