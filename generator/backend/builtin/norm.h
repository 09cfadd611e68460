// The builtin backend's norm family: [element-wise prologue] → one layer / RMS / group / instance /
// batch norm → [element-wise epilogue], rendered from templates/norm/.
//
// Semantics follow PyTorch: statistics in fp32, biased variance, rstd = rsqrt(var + eps), affine
// after normalization. batch_norm with training=True (KernelBench builds models in training mode)
// normalizes with the batch statistics over (N, spatial) per channel; with training=False it uses
// the running buffers. In training mode PyTorch also updates running_mean/running_var: the kernel
// does not (they are launch() parameters, not outputs of the spec), so only the forward result is
// produced. rms_norm with eps=None uses float32's epsilon (ATen's opmath epsilon, also for
// fp16/bf16).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/builtin/family.h"
#include "backend/builtin/on_chip.h"
#include "backend/builtin/op_table.h"
#include "backend/builtin/planned_family.h"
#include "render/template.h"

namespace egg::backend::builtin {

// Tunable parameters of the norm templates.
struct NormParams {
  // "row": one row per (group of) threads, the row held in registers, read once;
  // "split": partial statistics kernel (split rows) + finalize + normalize/epilogue kernel;
  // "pointwise": running statistics (batch/instance norm in eval mode), one element-wise kernel;
  // "cluster": rows too long for registers kept on chip in the shared memory of a thread block
  // cluster (sm_90; the split structure elsewhere).
  std::string structure = "row";
  int tpr = 256;           // row: threads per row (32..1024)
  int rpb = 1;             // row: rows per block
  int block = 256;         // split/pointwise: threads per block
  int splits = 1;          // split: blocks per statistic in the partial kernel
  int cluster = 0;         // cluster: blocks per row (1-16), each of `block` threads
  bool vectorized = true;  // 16-byte vector path when the pointers are aligned
  nlohmann::json to_json() const;
  static NormParams from_json(const nlohmann::json& j);  // a missing structure reads as "split"
};

// The norm's place in the graph: the node, its input, the element-wise ops computing the input
// (prologue) and after it (epilogue), and the tensors each reads, in spec order.
struct NormGraph {
  const spec::Node* norm = nullptr;
  std::string input;  // the norm's input value (a node or a tensor)
  std::vector<const spec::Node*> pro_steps, epi_steps;
  std::vector<std::string> pro_leaves, epi_leaves;
};

// What the family derives from the spec about the norm (static shapes).
struct NormProblem {
  std::string kind;             // layer_norm | rms_norm | group_norm | instance_norm | batch_norm
  bool center = true;           // subtract the mean (false for rms_norm)
  bool running = false;         // normalize with running statistics (eval mode)
  std::int64_t numel = 0;       // elements of the norm's input
  std::int64_t num_stats = 0;   // independent statistics (rows, or channels for batch norm)
  std::int64_t seg_len = 0;     // contiguous run of one statistic
  std::int64_t segments = 1;    // runs per statistic (N for batch norm, else 1)
  std::int64_t seg_stride = 0;  // elements between runs
  std::int64_t channels = 1;    // C (group/instance/batch norm)
  std::int64_t spatial = 1;     // product of the dims after C
  std::int64_t groups = 1;      // group_norm
  double eps = 1e-5;
  NormGraph graph;
  bool contiguous_rows() const { return segments == 1; }
  std::int64_t stat_count() const { return seg_len * segments; }
};

// The norm family.
class NormFamily : public PlannedFamily<NormProblem, NormParams> {
 public:
  explicit NormFamily(const std::filesystem::path& data_dir);

  std::string name() const override { return "norm"; }
  std::vector<std::pair<std::string, std::string>> key_inputs() const override;
  std::variant<NormProblem, UserError> analyze(const spec::Spec& spec) const override;
  Candidate render(const spec::Spec& spec, const contract::Contract& contract,
                   const NormProblem& problem, const NormParams& params) const override;

 protected:
  std::vector<NormParams> structure_params(const spec::Spec& spec,
                                           const contract::Contract& contract,
                                           const NormProblem& problem) const override;
  std::vector<NormParams> tuning_params(const spec::Spec& spec, const contract::Contract& contract,
                                        const NormProblem& problem, const NormParams& incumbent,
                                        const std::string& bottleneck) const override;
  std::optional<NormParams> fallback_params(const spec::Spec& spec,
                                            const contract::Contract& contract,
                                            const NormProblem& problem,
                                            const NormParams& failed) const override;

 private:
  OpTable ops_;
  render::Template common_;
  render::Template row_;
  render::Template cluster_;
  render::Template split_;
  render::Template pointwise_;
  render::Template launch_;
  render::Template clusters_;   // the host side of a cluster launch (templates/reduction/)
  render::Template keep_pool_;  // the stream-ordered memory kept between calls (templates/common/)
};

// Elements one thread holds in the row structure for a row of `row_len` with these parameters.
int norm_row_items(std::int64_t row_len, int tpr, int vec);
// The row structure's prior: threads per row and rows per block for a row of `row_len`, or nullopt
// when the row does not fit in registers.
std::optional<NormParams> norm_row_prior(std::int64_t row_len, std::int64_t rows, int vec);
// The split structure's prior number of blocks per statistic.
int norm_split_prior(std::int64_t num_stats, std::int64_t stat_count);
// The cluster structure's chunk of a row per block and its shared memory bytes.
struct NormChunk {
  std::int64_t elems = 0, bytes = 0;
};
NormChunk norm_cluster_chunk(std::int64_t row_len, int cluster, int vec);
// Whether cluster params suit a problem: contiguous rows with batch statistics, 1-16 blocks per
// row, every thread with a vector of the chunk, the chunk within shared memory.
bool norm_cluster_valid(const NormProblem& problem, const NormParams& params, int vec);
// The cluster structure's prior for a row too long for registers, its blocks' chunks at most
// `most` bytes, or nullopt when none fits.
std::optional<NormParams> norm_cluster_prior(const NormProblem& problem, int vec,
                                             std::int64_t most = kOnChipMaxBytes);
// Stage-2 parameter sets around the incumbent, best prior first.
std::vector<NormParams> norm_tuning_space(const NormProblem& problem, const NormParams& incumbent,
                                          int vec, const std::string& bottleneck);

}  // namespace egg::backend::builtin
