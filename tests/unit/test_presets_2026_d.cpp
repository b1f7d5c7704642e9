// Presets of #25, part d: Ministral-3-14B (mistral3 wrapping a ministral3 text_config) imports
// from its config.json as the preset, with the parameter count derived by hand
// (test_presets_2026.cpp estimates it on 8 to 1,024 GPUs).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// https://huggingface.co/mistralai/Ministral-3-14B-Base-2512/blob/main/config.json (revision
// 5b0ceedb, pinned by Megatron-Bridge's examples/models/mistral/ministral3/README.md), the
// fields of its text_config the bridge reads (ministral3_bridge.py provider_bridge): layers,
// hidden and heads as Bridge's docs/models/mistral/ministral3.md lists them, intermediate_size
// and vocab_size as apxml.com/models/ministral-3-14b tabulates config.json. rope_parameters,
// which change no memory: the keys as other projects' Ministral 3 fixtures spell them, with
// Ministral3ModelProvider's YaRN defaults (factor 16 over 16384) and apxml's rope_theta. The
// vision_config is cut to its model_type: megamem does not estimate it.
const char* kMinistral3_14B = R"json({
  "architectures": ["Mistral3ForConditionalGeneration"],
  "model_type": "mistral3",
  "image_token_index": 10,
  "text_config": {
    "model_type": "ministral3",
    "head_dim": 128,
    "hidden_act": "silu",
    "hidden_size": 5120,
    "intermediate_size": 16384,
    "max_position_embeddings": 262144,
    "num_attention_heads": 32,
    "num_hidden_layers": 40,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
    "rope_parameters": {
      "beta_fast": 32.0,
      "beta_slow": 1.0,
      "factor": 16.0,
      "llama_4_scaling_beta": 0.1,
      "mscale": 1.0,
      "mscale_all_dim": 1.0,
      "original_max_position_embeddings": 16384,
      "rope_theta": 1000000000.0,
      "rope_type": "yarn",
      "type": "yarn"
    },
    "sliding_window": null,
    "vocab_size": 131072
  },
  "vision_config": {"model_type": "pixtral"}
})json";

}  // namespace

TEST_CASE("ministral3: Ministral-3-14B's language model imports as the preset, 13,506,073,600") {
  const HfImport hf = import(kMinistral3_14B);
  CHECK(hf.model_type == "ministral3");
  CHECK(hf.model.position_embedding == PositionEmbedding::yarn);
  CHECK(hf.model.num_query_groups == 8);
  CHECK(hf.model.kv_channels == 128);
  CHECK(hf.model.untie_embeddings_and_output_weights);  // text_config has no tie_word_embeddings
  REQUIRE(hf.notes.size() == 1);
  CHECK(hf.notes[0].find("vision encoder") != std::string::npos);
  check_matches_preset(hf.model, "ministral-3-14b");
  // Per layer: q 5120x4096, k and v 5120x1024, o 4096x5120, SwiGLU 3 x 5120x16384, two 5120
  // norms. Plus two 131072 x 5120 vocabulary matrices and the final norm.
  const std::int64_t layer =
      2 * 5120 * 4096 + 2 * 5120 * 1024 + std::int64_t{3} * 5120 * 16384 + 2 * 5120;
  const std::int64_t total = total_params(hf.model);
  CHECK(total == 40 * layer + 2 * std::int64_t{131072} * 5120 + 5120);
  CHECK(total == 13'506'073'600);
  // Model card: "13.5B Language Model" (+0.04%), within the 0.5% aim.
  CHECK(std::abs(static_cast<double>(total) / 13.5e9 - 1.0) <= 0.005);
}

TEST_CASE("ministral3: a text-only ministral3 config imports, tied when it says so") {
  const HfImport hf = import(R"json({"model_type": "ministral3", "num_hidden_layers": 2,
      "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
      "intermediate_size": 128, "vocab_size": 100, "tie_word_embeddings": true,
      "attention_dropout": 0.1})json");
  CHECK(hf.model.position_embedding == PositionEmbedding::yarn);  // the provider's, always
  CHECK_FALSE(hf.model.untie_embeddings_and_output_weights);
  CHECK(hf.model.attention_dropout == 0.0);  // ministral3_provider.py: attention_dropout 0.0
}
