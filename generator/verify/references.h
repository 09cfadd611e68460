// The reference outputs of one op, computed by PyTorch and kept on the GPU while its candidates
// are verified: the reference server (python/egg_frontend/refserver.py) in a child process that
// lives as long as the generation. egg-harness asks it for one set at a time (CUDA IPC), so no
// reference tensor goes through the disk and only summaries leave the GPU.
#pragma once

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace egg::verify {

// What the server computes.
struct ReferenceRequest {
  std::filesystem::path python;    // the interpreter that imports torch
  std::filesystem::path data_dir;  // holds python/egg_frontend
  std::filesystem::path op_file;
  std::filesystem::path spec_json;  // the frontend's spec (params, inputs and outputs)
  std::filesystem::path log_dir;    // the server's log goes here
  int seeds = 3;                    // seeded sets beyond the declared one
  std::string device = "cuda";      // where PyTorch computes: cuda, or cpu (accuracy audits)
};

// One op's references.
class References {
 public:
  virtual ~References() = default;
  // The socket egg-harness connects to (`--refs`), once the server is ready: it starts while the
  // first candidates compile. Throws UserError when op.py itself fails there (a forward that
  // raises on a seeded set), InternalError when the server cannot start.
  virtual std::filesystem::path endpoint() = 0;
  // What the server said when it was ready (startup_ms, device, set_bytes, ...); empty before.
  virtual nlohmann::json stats() const = 0;
};

// The real server: `python -m egg_frontend serve` as a child process, ended (with its process
// group) when this object is destroyed, and by the server itself when its stdin closes.
std::unique_ptr<References> start_reference_server(const ReferenceRequest& request);

}  // namespace egg::verify
