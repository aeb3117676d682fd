// starcoder2: LayerNorm with bias, biases on every projection, a plain GELU MLP.
#include "model/arch.h"
#include "model/hparams.h"

namespace leapfrog {

void read_starcoder2_features(const GgufFile&, ModelHParams& hp) {
  hp.features.norm = NormKind::Layer;
  hp.features.ffn = FfnKind::Gelu;
}

}  // namespace leapfrog
