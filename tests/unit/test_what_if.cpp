// What-if table: each recompute and offload choice priced against the current setting.
#include <algorithm>
#include <catch2/catch.hpp>

#include "megamem/json_output.hpp"
#include "megamem/what_if.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
const WhatIfOption& find(const std::vector<WhatIfOption>& options, const std::string& label) {
  auto it = std::find_if(options.begin(), options.end(),
                         [&](const WhatIfOption& o) { return o.label == label; });
  REQUIRE(it != options.end());
  return *it;
}
}  // namespace

TEST_CASE("what-if lists the current setting first, then each choice with its saving") {
  const auto options = what_if_options(fixtures::llama3_70b_tp8_pp4());
  REQUIRE(options.size() > 5);
  CHECK(options.front().current);
  CHECK(options.front().saving_bytes == 0);
  const WhatIfOption& full = find(options, "full, uniform, 1 layer per group");
  CHECK(full.valid);
  // Rank 0 drops from 36.00 to about 26.3 GiB of allocator memory: ~9.7 GiB saved.
  CHECK(full.saving_bytes > 9LL * 1024 * 1024 * 1024);
  CHECK(full.peak_total_bytes + static_cast<std::uint64_t>(full.saving_bytes) ==
        options.front().peak_total_bytes);
}

TEST_CASE("what-if offers only the recompute modules the model has") {
  const auto dense = what_if_options(fixtures::llama3_70b_tp8_pp4());
  for (const WhatIfOption& option : dense) {
    CHECK(option.label.find("moe") == std::string::npos);
    CHECK(option.label.find("mla_up_proj") == std::string::npos);
  }
}

TEST_CASE("what-if skips the choice that is already current") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.training.recompute.granularity = RecomputeGranularity::full;
  const auto options = what_if_options(c);
  CHECK(std::count_if(options.begin(), options.end(), [](const WhatIfOption& o) {
          return o.label == "full, uniform, 1 layer per group";
        }) == 0);
  CHECK(find(options, "recompute: none").saving_bytes < 0);
}

TEST_CASE("optimizer offload moves optimizer state off the GPU") {
  const auto options = what_if_options(fixtures::llama3_70b_tp8_pp4());
  CHECK(find(options, "optimizer offload 100 %").saving_bytes > 0);
  CHECK(find(options, "optimizer offload 100 %").saving_bytes >
        find(options, "optimizer offload 50 %").saving_bytes);
}

TEST_CASE("what-if is its own call; its current row is estimate()'s peak, and JSON carries it") {
  auto e = estimate(fixtures::llama3_70b_tp8_pp4());
  REQUIRE(e.has_value());
  CHECK(e->what_if.empty());  // estimate() does not price the alternatives
  for (const WhatIfOption& option : what_if_options(fixtures::llama3_70b_tp8_pp4())) {
    e.value().what_if.push_back(option);
  }
  CHECK(e->what_if.front().current);
  CHECK(e->what_if.front().peak_total_bytes ==
        e->ranks[static_cast<std::size_t>(e->limiting_pp_rank)].peak_total_bytes);
  const std::string json = estimate_to_json(*e);
  CHECK(json.find("\"what_if\"") != std::string::npos);
  CHECK(estimate_to_json(*estimate(fixtures::llama3_70b_tp8_pp4())).find("\"what_if\"") ==
        std::string::npos);
}

TEST_CASE("each what-if row carries the step-time change: recompute costs time") {
  const auto options = what_if_options(fixtures::llama3_70b_tp8_pp4());
  CHECK(options.front().step_time_s > 0);
  CHECK(options.front().step_time_change == 0);
  for (const WhatIfOption& option : options) {
    if (option.valid) CHECK(option.step_time_s > 0);
  }
  const WhatIfOption& full = find(options, "full, uniform, 1 layer per group");
  CHECK(full.step_time_change > 0.05);  // a whole forward again: well over 5 %
  CHECK(full.step_time_change ==
        Approx(full.step_time_s / options.front().step_time_s - 1.0).epsilon(1e-12));
}

// hybrid_optimizer.py offloads optimizer state only; param_and_grad_buffer.py keeps a bf16
// grad buffer under --grad-reduce-in-bf16 with or without the precision-aware optimizer.
TEST_CASE("optimizer offload with bf16 grads saves memory and keeps the grad buffer bf16") {
  Config c = fixtures::llama3_70b_tp8_pp4();
  c.optimizer.grad_reduce_in_bf16 = true;
  const auto options = what_if_options(c);
  const WhatIfOption& half = find(options, "optimizer offload 50 %");
  const WhatIfOption& whole = find(options, "optimizer offload 100 %");
  CHECK(half.saving_bytes > 0);
  CHECK(whole.saving_bytes > half.saving_bytes);
  CHECK_FALSE(half.note.empty());
  const auto base = estimate(c);
  const auto offloaded = estimate(whole.config);
  REQUIRE(base.has_value());
  REQUIRE(offloaded.has_value());
  CHECK(offloaded->ranks[0].gradient_bytes == base->ranks[0].gradient_bytes);
}

// Gated DeltaNet's selective module: gdn_norm_out drops the gated norm's rstd and output and
// out_proj's input in each GDN layer (gated_deltanet.cpp; 67,633,152 B per layer at seq 4096,
// micro-batch 1, TP 1, hand-computed in test_qwen3_next.cpp), here 36 GDN layers of 48.
TEST_CASE("what-if lists gdn_norm_out for a Gated DeltaNet model, priced per GDN layer") {
  Config c = fixtures::preset_training("qwen3-next-80b-a3b");
  c.training.micro_batch_size = 1;
  const auto options = what_if_options(c);
  const WhatIfOption& norm_out = find(options, "selective: gdn_norm_out");
  CHECK(norm_out.valid);
  CHECK(norm_out.megatron_flags ==
        "--recompute-granularity selective --recompute-modules gdn_norm_out");
  CHECK(norm_out.saving_bytes > 0);
  const auto base = estimate(c);
  const auto recomputed = estimate(norm_out.config);
  REQUIRE(base.has_value());
  REQUIRE(recomputed.has_value());
  CHECK(base->ranks[0].activation_bytes_per_microbatch -
            recomputed->ranks[0].activation_bytes_per_microbatch ==
        36ULL * 67'633'152ULL);
  const WhatIfOption& all = find(options, "selective: core_attn, layernorm, moe, gdn_norm_out");
  CHECK(all.saving_bytes >= find(options, "selective: core_attn, layernorm, moe").saving_bytes);
}

// Mamba-2 layers have no selective recompute module in Megatron-Core (only full recompute,
// hybrid_block.py), and a model without GDN layers gets no gdn_norm_out row.
TEST_CASE("what-if offers Nemotron-H full recompute and no GDN module") {
  const auto options = what_if_options(fixtures::preset_training("nemotron-nano-9b-v2"));
  for (const WhatIfOption& option : options) {
    CHECK(option.label.find("gdn_norm_out") == std::string::npos);
  }
  CHECK(find(options, "full, uniform, 1 layer per group").saving_bytes > 0);
  CHECK(find(options, "selective: mlp").valid);
}
