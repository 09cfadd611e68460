// The harness's side of the reference server (python/egg_frontend/refserver.py): asks for one
// reference set at a time over a Unix socket and maps the server's CUDA IPC handles, so inputs,
// params and reference outputs are read where they are, on the GPU; nothing goes through the disk.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace egg::harness {

// A tensor of the server's, mapped into this process (read only: the candidate never sees it).
struct ServedTensor {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::size_t bytes = 0;
  const void* ptr = nullptr;
};

struct ServedSet {
  int index = 0;
  std::int64_t seed = 0;
  bool declared = false;
  std::vector<ServedTensor> inputs, params, outputs;
  double compute_ms = 0, wait_ms = 0;  // the server's time for this set; waiting for GPU memory
};

// Set k's outputs computed in float64 by the same model (the accuracy rule's reference,
// base/accuracy.h); none, with the reason, where the model does not run in float64.
struct ExactOutputs {
  bool available = false;
  std::vector<ServedTensor> outputs;
  std::string why;
  double compute_ms = 0;
};

// Why the server could not serve; `op_fault` when the op itself failed (a forward that raises on
// a seed), else the server or the connection failed.
struct RefError : std::runtime_error {
  RefError(const std::string& what, bool op_fault) : std::runtime_error(what), op_fault(op_fault) {}
  bool op_fault;
};

class RefClient {
 public:
  // Connects to the server's socket; while a request waits for the server (it may be computing a
  // set, or waiting for GPU memory), the file `pause_marker` exists, so the caller's time limit
  // does not count the wait. Throws RefError.
  RefClient(const std::filesystem::path& socket, std::filesystem::path pause_marker);
  ~RefClient();
  RefClient(const RefClient&) = delete;
  RefClient& operator=(const RefClient&) = delete;

  int sets() const { return sets_; }
  // GPU memory the server needs to compute one more set (0 when its sets stay resident).
  std::size_t need_bytes() const { return need_bytes_; }
  // Set k, mapped (valid until release(k) or another fetch). Throws RefError.
  const ServedSet& fetch(int k);
  // The float64 outputs of the set fetch() holds (mapped until release()). Throws RefError.
  const ExactOutputs& fetch_exact();
  void release();
  double waited_ms() const { return waited_ms_; }  // total time requests waited for the server

 private:
  std::string request(const std::string& line);
  std::vector<ServedTensor> map_tensors(const nlohmann::json& list);
  void unmap();

  int fd_ = -1;
  std::filesystem::path pause_marker_;
  std::string buffer_;
  int sets_ = 0;
  std::size_t need_bytes_ = 0;
  double waited_ms_ = 0;
  ServedSet current_;
  ExactOutputs exact_;
  bool exact_fetched_ = false;
  bool holding_ = false;
  std::map<std::string, void*> mapped_;  // IPC handle (hex) -> base address in this process
};

}  // namespace egg::harness
