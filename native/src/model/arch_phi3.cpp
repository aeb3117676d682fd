// phi3: fused Q/K/V and gate|up projections (model.cpp splits them by rows), Q scaled
// before attention. llama.cpp runs phi3's sliding window as full attention (its converter
// does not describe the window reliably), and so does this engine.
#include "model/arch.h"
#include "model/hparams.h"

namespace leapfrog {

void read_phi3_features(const GgufFile& f, ModelHParams& hp) {
  ArchFeatures& ft = hp.features;
  ft.fused_up_gate = true;
  ft.scale_q = true;
  if (f.get_int(hp.arch + ".expert_count").value_or(0) > 0) {
    f.fail("phi3 mixture-of-experts files are not supported");
  }
  // Long-context files scale RoPE per frequency (rope_factors_long/short, "longrope").
  if (f.tensor("rope_factors_long.weight") || f.tensor("rope_factors_short.weight") ||
      f.tensor("blk.0.rope_factors_long.weight")) {
    f.fail("phi3 long-context RoPE factors (rope_factors_long/short) are not supported");
  }
}

}  // namespace leapfrog
