#include "backend/builtin/families.h"

#include "backend/builtin/attention.h"
#include "backend/builtin/conv.h"
#include "backend/builtin/elementwise.h"
#include "backend/builtin/embedding_bag.h"
#include "backend/builtin/gemm.h"
#include "backend/builtin/loss.h"
#include "backend/builtin/norm.h"
#include "backend/builtin/pool.h"
#include "backend/builtin/reduction.h"
#include "backend/builtin/sort.h"

namespace egg::backend::builtin {

std::vector<std::unique_ptr<Family>> make_families(const std::filesystem::path& data_dir,
                                                   const std::string& precision, Cudnn cudnn,
                                                   bool wgmma) {
  std::vector<std::unique_ptr<Family>> families;
  families.push_back(std::make_unique<GemmFamily>(data_dir, precision, wgmma));
  families.push_back(std::make_unique<NormFamily>(data_dir));
  families.push_back(std::make_unique<ReductionFamily>(data_dir));
  families.push_back(std::make_unique<ConvFamily>(data_dir, cudnn));
  families.push_back(std::make_unique<PoolFamily>(data_dir));
  families.push_back(std::make_unique<LossFamily>(data_dir));
  families.push_back(std::make_unique<SortFamily>(data_dir));
  families.push_back(std::make_unique<AttentionFamily>(data_dir, wgmma));
  families.push_back(std::make_unique<EmbeddingBagFamily>(data_dir));
  families.push_back(std::make_unique<ElementwiseFamily>(data_dir));
  return families;
}

std::vector<std::unique_ptr<Family>> make_fusing_families(const std::filesystem::path& data_dir,
                                                          Cudnn cudnn) {
  std::vector<std::unique_ptr<Family>> families;
  families.push_back(std::make_unique<ConvFamily>(data_dir, cudnn, true));
  return families;
}

}  // namespace egg::backend::builtin
