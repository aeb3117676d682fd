// granite: llama's graph with four multipliers from the metadata.
#include "model/arch.h"
#include "model/hparams.h"

namespace leapfrog {

void read_granite_features(const GgufFile& f, ModelHParams& hp) {
  const std::string a = hp.arch + ".";
  ArchFeatures& ft = hp.features;
  // llama.cpp requires logit_scale and reads the others when present (0 = not applied).
  ft.logit_scale = static_cast<float>(f.require_float(a + "logit_scale"));
  if (ft.logit_scale == 0) f.fail("metadata key '" + a + "logit_scale' is 0");
  ft.residual_scale = static_cast<float>(f.get_float(a + "residual_scale").value_or(0));
  ft.embedding_scale = static_cast<float>(f.get_float(a + "embedding_scale").value_or(0));
  ft.attention_scale = static_cast<float>(f.get_float(a + "attention.scale").value_or(0));
  if (f.get_int(a + "expert_count").value_or(0) > 0) {
    f.fail("granite mixture-of-experts files are not supported");
  }
}

}  // namespace leapfrog
