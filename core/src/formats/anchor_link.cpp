// The anchor in a share link (anchor_input.hpp, docs/share-links.md "The anchor").
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

#include "megamem/anchor_input.hpp"
#include "megamem/share_link.hpp"

namespace megamem {
namespace {

constexpr std::string_view kAnchorKeys[] = {"anchor",          "anchor-peak", "anchor-static",
                                            "anchor-reserved", "anchor-rank", "anchor-pp-rank",
                                            "anchor-iter",     "anchor-name"};

// A whole number from 0 to `limit` (a rank), or nullopt.
std::optional<std::int64_t> rank_number(const std::string& text, std::int64_t limit) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || value < 0 || value >= limit) {
    return std::nullopt;
  }
  return value;
}

// The anchor's measured numbers from its link values (keyed by link key).
std::optional<Error> read_measurement(const std::map<std::string, std::string>& values,
                                      Anchor& anchor) {
  AnchorMeasurement& m = anchor.measured;
  const auto sizes = {std::pair{"anchor-static", &m.static_bytes},
                      std::pair{"anchor-reserved", &m.max_reserved_bytes}};
  for (const auto& [key, size] : sizes) {
    if (!values.count(key)) continue;
    const Expected<std::uint64_t> bytes = parse_byte_size(key, values.at(key));
    if (!bytes) return bytes.error();
    *size = *bytes;
  }
  const Expected<std::uint64_t> peak = parse_byte_size("anchor-peak", values.at("anchor-peak"));
  if (!peak) return peak.error();
  m.peak_allocated_bytes = *peak;
  if (values.count("anchor-rank")) {
    const std::optional<std::int64_t> rank = rank_number(values.at("anchor-rank"), m.world_size);
    if (!rank) return Error{"anchor-rank", "expects a global rank of the anchor's GPUs"};
    m.global_rank = *rank;
  }
  if (values.count("anchor-pp-rank")) {
    const std::optional<std::int64_t> rank =
        rank_number(values.at("anchor-pp-rank"), anchor.config.parallel.pipeline_parallel);
    if (!rank) return Error{"anchor-pp-rank", "expects a pipeline rank of the anchor's layout"};
    m.pp_rank = static_cast<int>(*rank);
  }
  if (values.count("anchor-iter")) {
    const std::optional<std::int64_t> iterations =
        rank_number(values.at("anchor-iter"), std::int64_t{1} << 40);
    if (!iterations || *iterations == 0) {
      return Error{"anchor-iter",
                   "expects the iterations the measured report came after (1 or more)"};
    }
    m.iterations = *iterations;
  }
  if (values.count("anchor-name")) m.source = values.at("anchor-name");
  return check_anchor_measurement(m, anchor.config);
}

}  // namespace

bool is_anchor_link_key(std::string_view key) {
  for (const std::string_view anchor_key : kAnchorKeys) {
    if (key == anchor_key) return true;
  }
  return false;
}

Expected<std::optional<Anchor>> decode_link_anchor(std::string_view link) {
  const Expected<LinkParameters> parameters = link_parameters(link);
  if (!parameters) return parameters.error();
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : *parameters) {
    if (is_anchor_link_key(key)) values[key] = value;
  }
  if (values.empty()) return std::optional<Anchor>();
  if (!values.count("anchor")) return Error{values.begin()->first, "needs anchor= beside it"};
  if (!values.count("anchor-peak")) {
    return Error{"anchor-peak", "is required with anchor=: the anchor's max allocated bytes"};
  }
  const Expected<SharedConfig> shared = decode_share_link(values.at("anchor"));
  if (!shared) {
    return Error{"anchor", shared.error().field + ": " + shared.error().message};
  }
  Anchor anchor;
  anchor.config = shared->config;
  anchor.measured.world_size = anchor.config.parallel.world_size;
  if (std::optional<Error> error = read_measurement(values, anchor)) return *error;
  return std::optional<Anchor>(std::move(anchor));
}

std::string encode_link_anchor(const Anchor& anchor) {
  const AnchorMeasurement& m = anchor.measured;
  std::string query =
      "anchor=" + percent_encode_value(encode_share_query(with_detected_presets(anchor.config))) +
      "&anchor-peak=" + std::to_string(m.peak_allocated_bytes);
  if (m.static_bytes) query += "&anchor-static=" + std::to_string(*m.static_bytes);
  if (m.max_reserved_bytes) query += "&anchor-reserved=" + std::to_string(*m.max_reserved_bytes);
  if (m.global_rank >= 0) query += "&anchor-rank=" + std::to_string(m.global_rank);
  query += "&anchor-pp-rank=" + std::to_string(m.pp_rank);
  // Only a report after one iteration changes what the anchor is compared with.
  if (m.iterations == 1) query += "&anchor-iter=1";
  if (m.source != AnchorMeasurement{}.source) {
    query += "&anchor-name=" + percent_encode_value(m.source);
  }
  return query;
}

}  // namespace megamem
