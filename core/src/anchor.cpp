// The estimate anchored on a measured run (see anchor.hpp for the rule and its refusals).
//
// Index:
//   [SECTION] Is the anchor the same model, and what else differs
//   [SECTION] The anchor's measured numbers
//   [SECTION] Splitting the anchor's difference and carrying it
#include "megamem/anchor.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "megamem/fields.hpp"
#include "memory/attention_backend.hpp"

namespace megamem {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Is the anchor the same model, and what else differs
// ---------------------------------------------------------------------------------------------

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view prefix) { return name.rfind(prefix, 0) == 0; });
}

// An architecture field that decides memory for this model. The preset's display name does
// not; the maximum position count only sizes a learned position embedding; a field that does
// not apply to either model (field_not_applicable) decides nothing.
bool architecture_field_counts(const ConfigField& field, const Config& a, const Config& b) {
  if (field.group != FieldGroup::model || field.name == "model.name") return false;
  if (field.name == "model.max_position_embeddings" &&
      a.model.position_embedding != PositionEmbedding::learned_absolute &&
      b.model.position_embedding != PositionEmbedding::learned_absolute) {
    return false;
  }
  return field_not_applicable(field, a.model).empty() ||
         field_not_applicable(field, b.model).empty();
}

// The first field (by registry order) among those `selected` in which a and b differ.
template <class Selected>
std::string first_difference(const Config& a, const Config& b, Selected selected) {
  for (const ConfigField& field : config_fields()) {
    if (!selected(field)) continue;
    const std::string anchor_text = field_link_text(field, a);
    const std::string target_text = field_link_text(field, b);
    if (anchor_text != target_text) {
      return std::string(field.name) + ": " + anchor_text + " on the anchor, " + target_text +
             " here";
    }
  }
  return "";
}

// Precision, FP8 recipe, the transformer implementation (TE or local), the cross-entropy kernel
// and MoE dispatcher change what the estimator gets wrong (different kernels, different
// buffers): a difference measured under one says nothing about the other. The attention backend
// is compared as resolved (compare_settings), not as the flag: "auto" and "flash" are one kernel
// where TE picks flash.
bool field_rule_cannot_carry(const ConfigField& field) {
  return starts_with_any(field.name,
                         {"training.params_dtype", "training.fp8", "training.transformer_impl",
                          "training.cross_entropy", "training.moe_token_dispatcher"});
}

// The GPU and its software stack decide kernels and workspaces the estimator models only in
// part (TE's cuBLAS workspace, FP8 GEMM layouts, the environment fields: flash-attn, TE's
// release): what an anchor measured beyond the estimate on one GPU is not what another adds.
bool field_is_environment(const ConfigField& field) {
  return field.environment || field.name == "device.name" ||
         field.name == "device.te_cublas_workspace_mib" ||
         field.name == "device.fp8_gemm_any_layout" || field.name == "device.compute_capability" ||
         field.name == "device.nvlink_multicast";
}

// Recompute and CUDA graphs change which activations are saved; the activation difference is
// carried per saved byte, which holds only as far as the error lives in the bytes kept.
bool field_changes_saved_activations(const ConfigField& field) {
  return starts_with_any(field.name, {"training.recompute", "training.cuda_graph"});
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The anchor's measured numbers
// ---------------------------------------------------------------------------------------------

// No GPU holds 16 TiB: a larger figure is a unit mistake (bytes typed as KiB, ...).
constexpr std::uint64_t kMaxMeasuredBytes = std::uint64_t{16} << 40;

std::optional<Error> check_peak_and_static(const AnchorMeasurement& m) {
  if (m.peak_allocated_bytes == 0) {
    return Error{"anchor_peak_bytes", "is 0: the anchor's max allocated memory is required"};
  }
  if (m.peak_allocated_bytes > kMaxMeasuredBytes) {
    return Error{"anchor_peak_bytes", "is " + std::to_string(m.peak_allocated_bytes) +
                                          " bytes, more than any GPU holds (16 TiB): a unit "
                                          "mistake?"};
  }
  if (m.static_bytes && *m.static_bytes > m.peak_allocated_bytes) {
    return Error{"anchor_static_bytes",
                 "is " + std::to_string(*m.static_bytes) + " bytes, above the peak " +
                     std::to_string(m.peak_allocated_bytes) +
                     ": memory allocated after a step cannot exceed the step's max allocated"};
  }
  if (m.max_reserved_bytes && *m.max_reserved_bytes < m.peak_allocated_bytes) {
    return Error{"anchor_reserved_bytes",
                 "is " + std::to_string(*m.max_reserved_bytes) + " bytes, below the peak " +
                     std::to_string(m.peak_allocated_bytes) +
                     ": the allocator reserves at least what it allocates"};
  }
  if (m.max_reserved_bytes && *m.max_reserved_bytes > kMaxMeasuredBytes) {
    return Error{"anchor_reserved_bytes", "is more than any GPU holds (16 TiB): a unit mistake?"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Error> check_anchor_measurement(const AnchorMeasurement& measured,
                                              const Config& config) {
  if (std::optional<Error> error = check_peak_and_static(measured)) return error;
  if (measured.world_size != config.parallel.world_size) {
    return Error{"anchor_world_size", "is " + std::to_string(measured.world_size) +
                                          " but the anchor's configuration "
                                          "runs on " +
                                          std::to_string(config.parallel.world_size) + " GPUs"};
  }
  if (measured.pp_rank < 0 || measured.pp_rank >= config.parallel.pipeline_parallel) {
    return Error{"anchor_rank", "pipeline rank " + std::to_string(measured.pp_rank) +
                                    " is not in the anchor's layout (PP " +
                                    std::to_string(config.parallel.pipeline_parallel) + ")"};
  }
  return std::nullopt;
}

std::string model_difference(const Config& anchor, const Config& target) {
  return first_difference(anchor, target, [&](const ConfigField& field) {
    return architecture_field_counts(field, anchor, target);
  });
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Splitting the anchor's difference and carrying it
// ---------------------------------------------------------------------------------------------

double as_double(std::uint64_t bytes) { return static_cast<double>(bytes); }

// What the static difference scales with: the bytes of weights, gradients and optimizer state
// the rank holds (the parameters it owns, priced as this layout stores them).
double parameter_state_bytes(const RankMemory& rank) {
  return as_double(rank.weight_bytes) + as_double(rank.gradient_bytes) +
         as_double(rank.optimizer_bytes);
}

// The anchor's three differences on its measured rank.
void split_differences(const AnchorMeasurement& m, const RankMemory& rank, AnchoredEstimate& out) {
  // A report after the first iteration is compared with that iteration's peak, which lacks
  // the optimizer state its step creates; the difference is carried to the steady peak.
  const std::uint64_t estimated_peak = max_allocated_after_bytes(rank, m.iterations);
  out.anchor_estimated_peak_allocated_bytes = estimated_peak;
  out.anchor_estimated_static_bytes = allocated_after_step_bytes(rank);
  out.anchor_estimated_peak_reserved_bytes = rank.peak_reserved_bytes;
  const double peak_difference = as_double(m.peak_allocated_bytes) - as_double(estimated_peak);
  if (m.static_bytes) {
    out.static_term.measured = true;
    out.static_term.anchor_difference_bytes =
        as_double(*m.static_bytes) - as_double(allocated_after_step_bytes(rank));
  }
  // Without a static figure the whole peak difference counts as activation: the peak is
  // where activations are, and nothing tells the static part apart.
  out.activation_term.measured = true;
  out.activation_term.anchor_difference_bytes =
      peak_difference - out.static_term.anchor_difference_bytes;
  if (m.max_reserved_bytes) {
    out.device_term.measured = true;
    out.device_term.anchor_difference_bytes =
        as_double(*m.max_reserved_bytes) - as_double(rank.peak_reserved_bytes) - peak_difference;
  }
}

std::string rank_text(int pp_rank) { return "pipeline rank " + std::to_string(pp_rank); }

// The share of a carried allocated difference that keeps the anchored peak where the target's
// error band allows (verdict.hpp: error = (estimate - measured) / measured, between low and
// high): inside the range of measurements the band admits around the raw peak, and no further
// from the raw peak than the band's width of the smallest of them. A larger difference is more
// than the estimator's validated error explains: what the anchor measured then includes
// something the target will not have (a checkpoint loaded with resharding, another software
// stack), so only that share of it is carried to another configuration; the anchor's own
// configuration gets what was measured (memory-model.md, "Anchoring on a measured run").
double band_share(double raw_peak_bytes, double carried_bytes, const ErrorBand& band) {
  const double low = band.low_percent / 100.0, high = band.high_percent / 100.0;
  const double edge = carried_bytes > 0 ? low : high;
  const double inside_range = std::abs(raw_peak_bytes * (1.0 / (1.0 + edge) - 1.0));
  const double width = std::max(std::abs(low), std::abs(high));
  const double within_width = width * raw_peak_bytes / (1.0 + std::max(high, 0.0));
  const double most = std::min(inside_range, within_width);
  const double size = std::abs(carried_bytes);
  return size > most ? most / size : 1.0;
}

// One target rank: the carried differences, refused where a term would turn negative.
Expected<AnchoredRank> carry_to_rank(const RankMemory& anchor_rank, const RankMemory& target,
                                     const std::optional<ErrorBand>& band, AnchoredEstimate& out) {
  // A term with nothing to scale by on the anchor is not carried (anchor_estimate warns).
  const double anchor_state_bytes = parameter_state_bytes(anchor_rank);
  const double static_ratio =
      anchor_state_bytes > 0 ? parameter_state_bytes(target) / anchor_state_bytes : 0.0;
  const double activation_ratio =
      anchor_rank.activation_peak_bytes == 0
          ? 0.0
          : as_double(target.activation_peak_bytes) / as_double(anchor_rank.activation_peak_bytes);
  const double carried_peak = out.static_term.anchor_difference_bytes * static_ratio +
                              out.activation_term.anchor_difference_bytes * activation_ratio;
  const double share =
      band ? band_share(as_double(target.peak_allocated_bytes), carried_peak, *band) : 1.0;
  if (share < 1.0) out.band_limited_ranks.push_back(target.pp_rank);
  const double s = out.static_term.anchor_difference_bytes * static_ratio * share;
  const double a = out.activation_term.anchor_difference_bytes * activation_ratio * share;
  const double d = out.device_term.anchor_difference_bytes;
  out.static_term.carried_bytes.push_back(s);
  out.activation_term.carried_bytes.push_back(a);
  out.device_term.carried_bytes.push_back(d);
  const double peak = as_double(target.peak_allocated_bytes) + s + a;
  const double reserved = as_double(target.peak_reserved_bytes) + s + a + d;
  if (as_double(allocated_after_step_bytes(target)) + s < 0) {
    return Error{"anchor",
                 rank_text(target.pp_rank) +
                     ": the carried static difference would make its static memory negative"};
  }
  if (as_double(target.activation_peak_bytes) + a < 0) {
    return Error{"anchor",
                 rank_text(target.pp_rank) +
                     ": the carried activation difference would make its activations negative"};
  }
  if (reserved < peak || !std::isfinite(reserved) || !std::isfinite(peak)) {
    return Error{
        "anchor",
        rank_text(target.pp_rank) +
            ": the carried device difference would put reserved memory below allocated memory"};
  }
  AnchoredRank row;
  row.pp_rank = target.pp_rank;
  row.raw_peak_allocated_bytes = target.peak_allocated_bytes;
  row.anchored_peak_allocated_bytes = static_cast<std::uint64_t>(std::llround(peak));
  row.raw_peak_reserved_bytes = target.peak_reserved_bytes;
  row.anchored_peak_reserved_bytes = static_cast<std::uint64_t>(std::llround(reserved));
  row.raw_peak_total_bytes = target.peak_total_bytes;
  row.anchored_peak_total_bytes =
      static_cast<std::uint64_t>(std::llround(as_double(target.peak_total_bytes) + s + a + d));
  return row;
}

std::string band_limit_warning(const AnchoredEstimate& anchored, const ErrorBand& band) {
  const double estimated = as_double(anchored.anchor_estimated_peak_allocated_bytes);
  const double off_percent = 100.0 * (estimated - as_double(anchored.anchor.peak_allocated_bytes)) /
                             as_double(anchored.anchor.peak_allocated_bytes);
  char text[320];
  std::snprintf(text, sizeof text,
                "the anchor's estimate is %+.1f %% off its measured peak, beyond the %+.1f .. "
                "%+.1f %% band of validated runs like this configuration: on %zu pipeline "
                "rank(s) the anchored peak moves from the raw one only to the band's edge",
                off_percent, band.low_percent, band.high_percent,
                anchored.band_limited_ranks.size());
  return text;
}

std::string backend_name(AttentionBackend backend) {
  constexpr const char* kNames[] = {"auto", "flash", "fused", "unfused", "local"};
  return kNames[static_cast<std::size_t>(backend)];
}

// Refusals and warnings from what differs between the two configurations.
std::optional<Error> compare_settings(const Config& anchor, const Config& target,
                                      std::vector<std::string>& warnings) {
  if (const std::string model = model_difference(anchor, target); !model.empty()) {
    return Error{"anchor", "is another model (" + model + ")"};
  }
  // The MoE dispatcher means nothing to a dense model (ConfigField::moe_only): two dense runs
  // whose flags spell it differently ran the same kernels.
  const bool dense = anchor.model.num_experts == 0 && target.model.num_experts == 0;
  const std::string cannot_carry = first_difference(anchor, target, [&](const ConfigField& field) {
    return field_rule_cannot_carry(field) && !(dense && field.moe_only);
  });
  if (!cannot_carry.empty()) {
    return Error{"anchor", "differs in what the anchored difference depends on (" + cannot_carry +
                               "); measure a run with the same setting"};
  }
  const std::string environment = first_difference(anchor, target, field_is_environment);
  if (!environment.empty()) {
    return Error{"anchor", "ran on another GPU or software stack (" + environment +
                               "); anchor on a run of the GPU you estimate for"};
  }
  // With --attention-backend auto the kernel follows the GPU, determinism and the layout
  // (attention_backend.hpp): compare what each run ends up with, not the flag.
  const AttentionBackend anchor_backend = resolved_attention_backend(anchor);
  const AttentionBackend target_backend = resolved_attention_backend(target);
  if (anchor_backend != target_backend) {
    return Error{"anchor", "runs another attention kernel (" + backend_name(anchor_backend) +
                               " on the anchor, " + backend_name(target_backend) +
                               " here): its activation difference says nothing about this one"};
  }
  const std::string activations = first_difference(anchor, target, field_changes_saved_activations);
  if (!activations.empty()) {
    warnings.push_back("the anchor differs in " + activations +
                       "; its activation difference is carried per saved byte, which the "
                       "setting changes");
  }
  return std::nullopt;
}

}  // namespace

Expected<AnchoredEstimate> anchor_estimate(const AnchorMeasurement& measured,
                                           const Estimate& anchor, const Estimate& target) {
  if (std::optional<Error> error = check_anchor_measurement(measured, anchor.normalized.config)) {
    return *error;
  }
  AnchoredEstimate out;
  out.anchor = measured;
  if (std::optional<Error> error =
          compare_settings(anchor.normalized.config, target.normalized.config, out.warnings)) {
    return *error;
  }
  const RankMemory& anchor_rank = anchor.ranks[static_cast<std::size_t>(measured.pp_rank)];
  split_differences(measured, anchor_rank, out);
  if (anchor_rank.activation_peak_bytes == 0) {
    out.warnings.push_back(
        "the anchor's rank saves no activations at its peak: its activation "
        "difference is not carried");
  }
  if (parameter_state_bytes(anchor_rank) == 0) {
    out.warnings.push_back(
        "the anchor's rank holds no parameters: its static difference is not carried");
  }
  // The anchor's own configuration gets what was measured; another one, at most the band.
  const bool own_configuration =
      first_difference(anchor.normalized.config, target.normalized.config, [](const ConfigField&) {
        return true;
      }).empty();
  std::optional<ErrorBand> band;
  if (!own_configuration) band = error_band(configuration_features(target.normalized.config));
  for (const RankMemory& rank : target.ranks) {
    Expected<AnchoredRank> row = carry_to_rank(anchor_rank, rank, band, out);
    if (!row) return row.error();
    out.ranks.push_back(*row);
  }
  if (!out.band_limited_ranks.empty()) out.warnings.push_back(band_limit_warning(out, *band));
  return out;
}

Expected<AnchoredEstimate> anchor_estimate(const Anchor& anchor, const Estimate& target) {
  Config config = anchor.config;
  if (!anchor.environment_known) {
    Config environment = target.normalized.config;
    config.device = environment.device;
    for (const ConfigField& field : config_fields()) {
      if (field.environment) copy_field(field, environment, config);
    }
  }
  Expected<Estimate> estimated = estimate(config, {.module_tree = false, .timeline = false});
  if (!estimated) {
    return Error{"anchor", "its configuration does not estimate: " + estimated.error().field +
                               ": " + estimated.error().message};
  }
  return anchor_estimate(anchor.measured, *estimated, target);
}

}  // namespace megamem

namespace megamem {

Verdict anchored_verdict(const Estimate& target, const AnchoredEstimate& anchored) {
  // The raw estimate with each rank's peak replaced by its anchored one, judged by the same
  // verdict_of (the band is the configuration's: the anchor does not narrow it).
  Estimate replaced;
  replaced.normalized = target.normalized;
  std::uint64_t limiting_bytes = 0;
  for (const AnchoredRank& rank : anchored.ranks) {
    RankMemory& memory = replaced.ranks.emplace_back();
    memory.pp_rank = rank.pp_rank;
    memory.peak_reserved_bytes = rank.anchored_peak_reserved_bytes;
    memory.peak_total_bytes = rank.anchored_peak_total_bytes;
    // As estimate() picks it: the first rank of the largest peak.
    if (replaced.ranks.size() == 1 || rank.anchored_peak_total_bytes > limiting_bytes) {
      limiting_bytes = rank.anchored_peak_total_bytes;
      replaced.limiting_pp_rank = rank.pp_rank;
    }
  }
  return verdict_of(replaced);
}

}  // namespace megamem
