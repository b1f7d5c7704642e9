// The attention kernel a run ends up with: --attention-backend when given, and for "auto"
// the backend Transformer Engine selects (transformer_engine/pytorch/attention/
// dot_product_attention/utils.py, get_attention_backend).
#pragma once

#include "megamem/config.hpp"

namespace megamem {

// flash and fused keep no s x s scores; unfused and local do.
AttentionBackend resolved_attention_backend(const Config& config);

}  // namespace megamem
