// Text -> Anchor: a training log or typed-in numbers (see anchor_input.hpp for the contract).
#include "megamem/anchor_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "megamem/megatron_args.hpp"
#include "megamem/megatron_log.hpp"
#include "number_text.hpp"

namespace megamem {
namespace {

constexpr double kMaxAnchorBytes = 16.0 * 1024 * 1024 * 1024 * 1024;  // no GPU holds more

// The factor of a unit as written after a number ("" = bytes).
std::optional<double> unit_factor(std::string_view unit) {
  constexpr std::pair<std::string_view, double> kUnits[] = {
      {"", 1.0},   {"B", 1.0},  {"KiB", 0x1p10}, {"MiB", 0x1p20}, {"GiB", 0x1p30}, {"TiB", 0x1p40},
      {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},     {"TB", 1e12},    {"kB", 1e3}};
  for (const auto& [name, factor] : kUnits) {
    if (unit == name) return factor;
  }
  return std::nullopt;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The typed-in peak is the job's peak: the anchor's rank with the largest estimated peak.
int rank_of_largest_peak(const Estimate& estimated) {
  const auto largest = std::max_element(estimated.ranks.begin(), estimated.ranks.end(),
                                        [](const RankMemory& a, const RankMemory& b) {
                                          return a.peak_allocated_bytes < b.peak_allocated_bytes;
                                        });
  return largest->pp_rank;
}

// The rank typed in (a global rank) or, without one, the rank of the largest estimated peak.
std::optional<Error> place_typed_rank(const TypedAnchor& typed, Anchor& anchor) {
  AnchorMeasurement& m = anchor.measured;
  if (typed.global_rank.empty()) {
    const Expected<Estimate> estimated =
        estimate(anchor.config, {.module_tree = false, .timeline = false});
    if (!estimated) {
      return Error{"anchor_args", "the anchor's configuration does not estimate: " +
                                      estimated.error().field + ": " + estimated.error().message};
    }
    m.pp_rank = rank_of_largest_peak(*estimated);
    m.notes.push_back("no rank given: compared with pipeline rank " + std::to_string(m.pp_rank) +
                      ", the anchor's rank of the largest estimated peak");
    return std::nullopt;
  }
  char* end = nullptr;
  const std::string text(trimmed(typed.global_rank));
  const long long rank = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || rank < 0 ||
      rank >= anchor.config.parallel.world_size) {
    return Error{"anchor_rank", "'" + typed.global_rank + "' is not a global rank of the " +
                                    std::to_string(anchor.config.parallel.world_size) +
                                    " GPUs of the anchor"};
  }
  m.global_rank = rank;
  m.pp_rank = pipeline_rank_of(rank, anchor.config.parallel, false);
  return std::nullopt;
}

}  // namespace

Expected<std::uint64_t> parse_byte_size(std::string_view field, std::string_view text) {
  const std::string_view t = trimmed(text);
  const std::optional<LeadingNumber> number = leading_number(t);
  if (!number) {
    return Error{std::string(field),
                 "'" + std::string(text) +
                     "' is not a byte size (a number "
                     "with an optional unit: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"};
  }
  const std::optional<double> factor = unit_factor(trimmed(t.substr(number->length)));
  if (!factor) {
    return Error{std::string(field), "'" + std::string(text) +
                                         "' has an unknown unit (B, KiB, MiB, "
                                         "GiB, TiB, or KB, MB, GB, TB in powers of 1000)"};
  }
  const double bytes = number->value * *factor;
  if (bytes < 0) return Error{std::string(field), "'" + std::string(text) + "' is negative"};
  if (bytes > kMaxAnchorBytes) {
    return Error{std::string(field), "'" + std::string(text) +
                                         "' is more than any GPU holds (16 TiB): a unit mistake?"};
  }
  return static_cast<std::uint64_t>(std::llround(bytes));
}

Expected<Anchor> anchor_from_log(std::string_view text, std::string source,
                                 std::int64_t vocab_size) {
  LogComparisonOptions options;
  options.vocab_size = vocab_size;
  Expected<LogComparison> compared = compare_megatron_log(text, options);
  if (!compared) return Error{"anchor " + compared.error().field, compared.error().message};
  const std::vector<RankComparison>& ranks = compared->ranks;
  const auto used = std::max_element(
      ranks.begin(), ranks.end(), [](const RankComparison& a, const RankComparison& b) {
        return a.measured.max_allocated_bytes < b.measured.max_allocated_bytes;
      });
  Anchor anchor;
  anchor.config = compared->config.args.config;
  AnchorMeasurement& m = anchor.measured;
  m.source = std::move(source);
  m.world_size = anchor.config.parallel.world_size;
  m.global_rank = used->global_rank;
  m.pp_rank = used->pp_rank;
  m.peak_allocated_bytes = used->measured.max_allocated_bytes;
  m.static_bytes = used->measured.allocated_bytes;
  m.max_reserved_bytes = used->measured.max_reserved_bytes;
  m.iterations = used->measured.iteration;
  if (ranks.size() > 1) {
    m.notes.push_back("the log reports " + std::to_string(ranks.size()) + " ranks; rank " +
                      std::to_string(used->global_rank) + " (the largest max allocated) is used");
  }
  if (std::optional<Error> error = check_anchor_measurement(m, anchor.config)) {
    return Error{"anchor " + error->field,
                 "line " + std::to_string(used->measured.line) + ": " + error->message};
  }
  return anchor;
}

Expected<Anchor> anchor_from_typed(const TypedAnchor& typed) {
  if (trimmed(typed.megatron_args).empty()) {
    return Error{"anchor_args", "the anchor run's Megatron-LM flags are required"};
  }
  if (typed.world_size.empty()) return Error{"anchor_world_size", "is required with anchor_args"};
  if (typed.peak_allocated.empty()) {
    return Error{"anchor_peak_bytes", "is required: the anchor's max allocated memory"};
  }
  char* end = nullptr;
  const long long world_size = std::strtoll(typed.world_size.c_str(), &end, 10);
  if (end != typed.world_size.c_str() + typed.world_size.size() || world_size < 1 ||
      world_size > (1 << 24)) {
    return Error{"anchor_world_size", "'" + typed.world_size + "' is not a number of GPUs"};
  }
  Expected<MegatronArgs> args =
      parse_megatron_args(typed.megatron_args, world_size, typed.vocab_size);
  if (!args) return Error{"anchor_args", args.error().field + ": " + args.error().message};
  Anchor anchor;
  anchor.config = args->config;
  AnchorMeasurement& m = anchor.measured;
  m.world_size = world_size;
  const Expected<std::uint64_t> peak = parse_byte_size("anchor_peak_bytes", typed.peak_allocated);
  if (!peak) return peak.error();
  m.peak_allocated_bytes = *peak;
  const std::pair<const std::string*, std::optional<std::uint64_t>*> optional_sizes[] = {
      {&typed.static_allocated, &m.static_bytes}, {&typed.max_reserved, &m.max_reserved_bytes}};
  const char* names[] = {"anchor_static_bytes", "anchor_reserved_bytes"};
  for (std::size_t i = 0; i < 2; ++i) {
    if (optional_sizes[i].first->empty()) continue;
    const Expected<std::uint64_t> size = parse_byte_size(names[i], *optional_sizes[i].first);
    if (!size) return size.error();
    *optional_sizes[i].second = *size;
  }
  if (std::optional<Error> error = place_typed_rank(typed, anchor)) return *error;
  if (std::optional<Error> error = check_anchor_measurement(m, anchor.config)) return *error;
  return anchor;
}

}  // namespace megamem
