// gpt-oss's attention: learned attention sinks (modules/attention_sinks.cpp) and sliding-window
// layers (modules/sliding_window.cpp), hand-computed from the sources the modules name.
#include <catch2/catch.hpp>
#include <string>

#include "estimate_helpers.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/presets.hpp"
#include "megamem/share_link.hpp"
#include "megamem/step_time.hpp"
#include "memory/activations.hpp"
#include "modules/module_spec.hpp"

using namespace megamem;
using testing::normalized;
using testing::run;

namespace {

// gpt-oss-20b on one H100: TP 1, micro-batch 1, 4096 tokens, bf16.
Config gpt_oss_20b() {
  const Expected<PresetCatalog>& catalog = builtin_presets();
  REQUIRE(catalog.has_value());
  REQUIRE(catalog->find_model("gpt-oss-20b") != nullptr);
  Config c = share_link_defaults();
  c.model = catalog->find_model("gpt-oss-20b")->model;
  c.training.seq_length = 4096;
  c.training.params_dtype = DType::bf16;
  return c;
}

// Bytes of the saved tensor named `tensor` in one MoE layer (0 when it is not saved).
double saved_bytes(const Config& c, const std::string& tensor) {
  double bytes = 0;
  for (const SavedActivation& a : layer_activations(normalized(c), true).saved) {
    if (tensor == a.tensor) bytes += a.bytes;
  }
  return bytes;
}

}  // namespace

TEST_CASE("learnable sinks add a [heads / TP] parameter per layer (TE softmax_offset)") {
  Config c = gpt_oss_20b();
  const std::int64_t with_sinks = run(c).totals.params;
  c.model.softmax_type = SoftmaxType::off_by_one;  // a zero buffer, no parameter
  CHECK(with_sinks - run(c).totals.params == 24 * 64);
  c.model.softmax_type = SoftmaxType::vanilla;
  CHECK(with_sinks - run(c).totals.params == 24 * 64);
}

TEST_CASE("sinks under cuDNN fused attention save what vanilla attention saves") {
  Config c = gpt_oss_20b();
  const double with_sinks = layer_activations(normalized(c), true).kept_bytes;
  c.model.softmax_type = SoftmaxType::vanilla;
  CHECK(layer_activations(normalized(c), true).kept_bytes == Approx(with_sinks));
  // fp32 softmax statistics: 4096 tokens x 64 heads x 4 bytes.
  CHECK(saved_bytes(gpt_oss_20b(), "softmax statistics (fp32)") == Approx(1'048'576.0));
  CHECK(saved_bytes(gpt_oss_20b(), "attention probabilities, sink column") == 0.0);
}

TEST_CASE("deterministic sinks leave unfused attention: s x s probabilities plus a sink column") {
  Config c = gpt_oss_20b();
  c.training.deterministic_mode = true;  // TE: FusedAttention runs sinks only non-deterministic
  // backends.py UnfusedDotProductAttention: bf16 probabilities [1, 64, 4096, 4096] and the
  // sink's extra column [1, 64, 4096, 1].
  CHECK(saved_bytes(c, "attention probabilities") == Approx(64.0 * 4096 * 4096 * 2));
  CHECK(saved_bytes(c, "attention probabilities, sink column") == Approx(64.0 * 4096 * 2));
  c.model.softmax_type = SoftmaxType::vanilla;  // on H100 cuDNN stays deterministic
  CHECK(saved_bytes(c, "attention probabilities") == 0.0);
}

TEST_CASE("FlashAttention has no sinks: --attention-backend flash is refused naming the field") {
  Config c = gpt_oss_20b();
  c.training.attention_backend = AttentionBackend::flash;
  const Expected<NormalizedConfig> n = normalize(c);
  REQUIRE_FALSE(n.has_value());
  CHECK(n.error().field == "attention_backend");
  CHECK(n.error().message.find("sinks") != std::string::npos);
}

TEST_CASE("window layers alternate from the first (utils.py is_layer_window_attention)") {
  const ModelConfig m = gpt_oss_20b().model;
  CHECK(layer_is_windowed(m, 0));  // layer number 1: 1 % 2 != 0
  CHECK_FALSE(layer_is_windowed(m, 1));
  CHECK(layer_is_windowed(m, 22));
  CHECK_FALSE(layer_is_windowed(m, 23));
  ModelConfig all = m;
  all.window_attn_skip_freq = 0;
  CHECK(layer_is_windowed(all, 1));
  all.window_size = 0;
  CHECK_FALSE(layer_is_windowed(all, 0));
}

TEST_CASE("a 128-token window: 126.02 keys per query against 2048 causal, halved over layers") {
  const ModelConfig m = gpt_oss_20b().model;
  // Windowed: W + 1 - W(W + 1) / 2s = 128 - 127 x 128 / 8192 = 126.015625; full: s/2 = 2048.
  CHECK(mean_attended_keys(m, 4096) == Approx((126.015625 + 2048.0) / 2));
  ModelConfig full = m;
  full.window_size = 0;
  CHECK(mean_attended_keys(full, 4096) == Approx(2048.0));
  full.window_size = 8192;  // a window past the sequence is full attention
  CHECK(mean_attended_keys(full, 4096) == Approx(2048.0));
}

TEST_CASE("sliding windows shorten the step, not the memory") {
  Config c = gpt_oss_20b();
  const Estimate windowed = run(c);
  c.model.window_size = 0;
  const Estimate full = run(c);
  const std::uint64_t windowed_peak = windowed.ranks[0].peak_total_bytes;
  CHECK(windowed_peak == full.ranks[0].peak_total_bytes);
  const Expected<StepTime> windowed_time = estimate_step_time(windowed.normalized.config);
  const Expected<StepTime> full_time = estimate_step_time(full.normalized.config);
  REQUIRE(windowed_time.has_value());
  REQUIRE(full_time.has_value());
  CHECK(windowed_time->step_time_s < full_time->step_time_s);
}

TEST_CASE("gpt-oss's attention flags are written and read back (--window-size W,0)") {
  const Config c = gpt_oss_20b();
  const std::string flags = to_megatron_args(c);
  CHECK(flags.find("--softmax-type learnable") != std::string::npos);
  CHECK(flags.find("--window-size 127,0") != std::string::npos);
  CHECK(flags.find("--window-attn-skip-freq 2") != std::string::npos);
  const Expected<MegatronArgs> parsed = parse_megatron_args(flags, 1, 201088);
  INFO(flags << (parsed ? std::string() : " -> " + parsed.error().message));
  REQUIRE(parsed.has_value());
  CHECK(parsed->config.model.softmax_type == SoftmaxType::learnable);
  CHECK(parsed->config.model.window_size == 127);
  CHECK(parsed->config.model.window_attn_skip_freq == 2);
  for (const char* window : {"(127, 0)", "-1,0"}) {
    const std::string text =
        "--num-layers 2 --hidden-size 64 --num-attention-heads 4 "
        "--seq-length 8 --micro-batch-size 1 --window-size '" +
        std::string(window) + "'";
    const Expected<MegatronArgs> read = parse_megatron_args(text, 1, 1000);
    INFO(text << (read ? std::string() : " -> " + read.error().message));
    REQUIRE(read.has_value());
    CHECK(read->config.model.window_size == (window[0] == '(' ? 127 : 0));
  }
  const Expected<MegatronArgs> bidirectional = parse_megatron_args(
      "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 8 "
      "--micro-batch-size 1 --window-size 64,64",
      1, 1000);
  REQUIRE_FALSE(bidirectional.has_value());
  CHECK(bidirectional.error().field == "--window-size");
}
