// The fits verdict and its error band; see megamem/verdict.hpp.
#include "megamem/verdict.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <string_view>
#include <utility>

#include "megamem/estimate_types.hpp"
#include "megamem/units.hpp"
#include "memory/attention_backend.hpp"

namespace megamem {
namespace {

#include "error_bands.inc"

// The features the band is kept for: what changes how well the estimate holds. Each is one
// question about the resolved configuration.
struct FeatureRule {
  const char* name;
  bool (*uses)(const Config&);
};

using N = const Config&;
constexpr FeatureRule kFeatureRules[] = {
    {"tp", [](N n) { return n.parallel.tensor_parallel > 1; }},
    {"pp", [](N n) { return n.parallel.pipeline_parallel > 1; }},
    {"vpp", [](N n) { return n.parallel.virtual_stages_per_pipeline_rank > 1; }},
    {"cp", [](N n) { return n.parallel.context_parallel > 1; }},
    {"ep", [](N n) { return n.parallel.expert_parallel > 1; }},
    {"moe", [](N n) { return n.model.num_experts > 0; }},
    {"mla", [](N n) { return n.model.multi_latent_attention; }},
    {"dsa",
     [](N n) { return n.model.dsa_indexer_topk > 0 && n.model.csa_compress_ratios.empty(); }},
    // DeepSeek-V4 (Megatron-LM dev): compressed sparse attention, and hyper-connections.
    {"dsv4", [](N n) { return !n.model.csa_compress_ratios.empty(); }},
    {"mhc", [](N n) { return n.model.enable_mhc_connections; }},
    {"mtp", [](N n) { return n.model.mtp_num_layers > 0; }},
    {"hybrid", [](N n) { return !n.model.hybrid_layer_pattern.empty(); }},
    {"fp8", [](N n) { return n.training.fp8_recipe != Fp8Recipe::none; }},
    {"fp16", [](N n) { return n.training.params_dtype == DType::fp16; }},
    {"fsdp", [](N n) { return n.parallel.fsdp.impl != FsdpImpl::none; }},
    {"no_dist_opt",
     [](N n) {
       return !n.optimizer.use_distributed_optimizer && n.parallel.fsdp.impl == FsdpImpl::none;
     }},
    {"precision_aware_optimizer", [](N n) { return n.optimizer.use_precision_aware_optimizer; }},
    {"optimizer_muon", [](N n) { return n.optimizer.kind == OptimizerKind::muon; }},
    {"recompute_full",
     [](N n) { return n.training.recompute.granularity == RecomputeGranularity::full; }},
    {"recompute_selective",
     [](N n) { return n.training.recompute.granularity == RecomputeGranularity::selective; }},
    {"activation_offload",
     [](N n) {
       const OffloadConfig& o = n.training.offload;
       return o.fine_grained_activation_offloading || o.cpu_offloading;
     }},
    {"cuda_graph", [](N n) { return n.training.cuda_graph_impl != CudaGraphImpl::none; }},
    {"tp_comm_overlap", [](N n) { return n.training.tp_comm_overlap; }},
    {"ep_overlap", [](N n) { return n.training.overlap_moe_expert_parallel_comm; }},
    {"local_impl", [](N n) { return n.training.transformer_impl == TransformerImpl::local; }},
    {"unfused_attention",
     [](N n) {
       const AttentionBackend backend = resolved_attention_backend(n);
       return backend == AttentionBackend::unfused || backend == AttentionBackend::local;
     }},
    {"long_seq", [](N n) { return n.training.seq_length >= 16384; }},
    // Megatron-Bridge's Gemma 2 / 4 soft-caps (FlexAttention, the capped logits).
    {"softcap",
     [](N n) { return n.model.final_logit_softcapping > 0 || n.model.attn_logit_softcapping > 0; }},
    // Megatron-Bridge's Kimi K3 layers (Kimi Delta Attention, Attention Residuals).
    {"kimi_k3",
     [](N n) { return n.model.attn_res_block_size > 0 || !n.model.kda_layer_pattern.empty(); }},
};

const FeatureBand* band_of(std::string_view feature) {
  // The names as views, measured once: each lookup compares lengths before characters.
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const FeatureBand& band : feature_bands()) out.emplace_back(band.feature);
    return out;
  }();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (feature == names[i]) return &feature_bands()[i];
  }
  return nullptr;
}

}  // namespace

const char* fit_status_name(FitStatus status) {
  switch (status) {
    case FitStatus::fits:
      return "fits";
    case FitStatus::borderline:
      return "borderline";
    case FitStatus::does_not_fit:
      return "does_not_fit";
  }
  return "fits";
}

const std::vector<FeatureBand>& feature_bands() {
  static const std::vector<FeatureBand> bands(std::begin(kFeatureBands), std::end(kFeatureBands));
  return bands;
}

double widest_error_percent() { return kWidestErrorPercent; }

std::vector<std::string> configuration_features(const Config& config) {
  std::vector<std::string> out;
  out.reserve(std::size(kFeatureRules));
  for (const FeatureRule& rule : kFeatureRules) {
    if (rule.uses(config)) out.emplace_back(rule.name);
  }
  return out;
}

ErrorBand error_band(std::vector<std::string> features) {
  ErrorBand band;
  band.features = std::move(features);
  const FeatureBand* all = band_of("all");
  band.low_percent = all != nullptr ? all->low_percent : -kWidestErrorPercent;
  band.high_percent = all != nullptr ? all->high_percent : kWidestErrorPercent;
  band.runs = all != nullptr ? all->runs : 0;
  for (const std::string& feature : band.features) {
    const FeatureBand* row = band_of(feature);
    const int runs = row != nullptr ? row->runs : 0;
    if (runs < band.runs) {
      band.runs = runs;
      band.thinnest_feature = feature;
    }
    if (runs < kMinBandRuns) {
      band.few_runs_features.push_back(feature);
      band.low_percent =
          std::min(band.low_percent, runs > 0 ? row->min_percent : -kWidestErrorPercent);
      band.high_percent =
          std::max(band.high_percent, runs > 0 ? row->max_percent : kWidestErrorPercent);
      continue;
    }
    band.low_percent = std::min(band.low_percent, row->low_percent);
    band.high_percent = std::max(band.high_percent, row->high_percent);
  }
  return band;
}

TotalRange total_range(const ErrorBand& band, std::uint64_t peak_reserved_bytes,
                       std::uint64_t peak_total_bytes) {
  return {total_at_error(band.high_percent, peak_reserved_bytes, peak_total_bytes),
          total_at_error(band.low_percent, peak_reserved_bytes, peak_total_bytes)};
}

std::uint64_t total_at_error(double error_percent, std::uint64_t peak_reserved_bytes,
                             std::uint64_t peak_total_bytes) {
  // estimated = measured x (1 + error): an estimate that runs low (negative error) means
  // more real memory.
  const auto reserved = static_cast<double>(peak_reserved_bytes);
  const double outside = static_cast<double>(peak_total_bytes) - reserved;
  return whole_bytes(outside + reserved / (1.0 + error_percent / 100.0));
}

FitStatus fit_status(const TotalRange& range, std::uint64_t capacity_bytes) {
  if (range.high_bytes <= capacity_bytes) return FitStatus::fits;
  if (range.low_bytes > capacity_bytes) return FitStatus::does_not_fit;
  return FitStatus::borderline;
}

Verdict verdict_of(const Estimate& estimate) {
  Verdict verdict;
  verdict.capacity_bytes =
      whole_bytes(estimate.normalized.config.device.capacity_gib * kBytesPerGiB);
  verdict.band = error_band(configuration_features(estimate.normalized.config));
  verdict.limiting_pp_rank = estimate.limiting_pp_rank;
  verdict.ranks.reserve(estimate.ranks.size());
  for (const RankMemory& rank : estimate.ranks) {
    const TotalRange range =
        total_range(verdict.band, rank.peak_reserved_bytes, rank.peak_total_bytes);
    RankVerdict r{.pp_rank = rank.pp_rank,
                  .status = fit_status(range, verdict.capacity_bytes),
                  .headroom_bytes = static_cast<std::int64_t>(verdict.capacity_bytes) -
                                    static_cast<std::int64_t>(rank.peak_total_bytes),
                  .low_total_bytes = range.low_bytes,
                  .high_total_bytes = range.high_bytes};
    verdict.status = std::max(verdict.status, r.status);
    if (rank.pp_rank == estimate.limiting_pp_rank) verdict.headroom_bytes = r.headroom_bytes;
    verdict.ranks.push_back(r);
  }
  return verdict;
}

}  // namespace megamem
