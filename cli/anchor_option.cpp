// estimate's anchor options (anchor_option.hpp).
#include "anchor_option.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "megamem/anchor_input.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/units.hpp"

namespace megamem::cli {
namespace {

// The typed-in options, by TypedAnchor member.
TypedAnchor typed_anchor(const ParsedOptions& options) {
  const auto value = [&](const char* name) {
    const auto it = options.values.find(name);
    return it == options.values.end() ? std::string() : it->second;
  };
  TypedAnchor typed;
  typed.megatron_args = value("--anchor-args");
  typed.world_size = value("--anchor-world-size");
  typed.peak_allocated = value("--anchor-peak-bytes");
  typed.static_allocated = value("--anchor-static-bytes");
  typed.max_reserved = value("--anchor-reserved-bytes");
  typed.global_rank = value("--anchor-rank");
  return typed;
}

bool any_typed(const ParsedOptions& options) {
  for (const std::string& name : anchor_value_options()) {
    if (name != "--anchor" && options.values.count(name)) return true;
  }
  return false;
}

Expected<Anchor> anchor_of(const ParsedOptions& options) {
  const auto log = options.values.find("--anchor");
  if (log == options.values.end()) return anchor_from_typed(typed_anchor(options));
  if (any_typed(options)) {
    return Error{"--anchor", "takes a log; the --anchor-* numbers are for an anchor without one"};
  }
  Expected<std::string> text = read_log_file(log->second, "--anchor");
  if (!text) return text.error();
  return anchor_from_log(*text, std::filesystem::path(log->second).filename().string());
}

std::string gib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", bytes / kBytesPerGiB);
  return text;
}

std::string signed_gib_text(double bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%+.2f", bytes / kBytesPerGiB);
  return text;
}

void print_anchor_line(const AnchoredEstimate& a) {
  const AnchorMeasurement& m = a.anchor;
  std::cout << "\nanchored on " << m.source << " (" << m.world_size << " GPUs, ";
  if (m.global_rank >= 0) std::cout << "rank " << m.global_rank << ", ";
  std::cout << "pipeline rank " << m.pp_rank << "): max allocated "
            << gib_text(static_cast<double>(m.peak_allocated_bytes)) << " GiB measured, "
            << gib_text(static_cast<double>(a.anchor_estimated_peak_allocated_bytes))
            << " estimated\n";
  std::cout << "differences on the anchor (measured - estimated, GiB): static "
            << (a.static_term.measured ? signed_gib_text(a.static_term.anchor_difference_bytes)
                                       : std::string("(not measured)"))
            << ", activation " << signed_gib_text(a.activation_term.anchor_difference_bytes)
            << ", device "
            << (a.device_term.measured ? signed_gib_text(a.device_term.anchor_difference_bytes)
                                       : std::string("(not measured)"))
            << "\n";
}

}  // namespace

std::set<std::string> anchor_value_options() {
  return {"--anchor",
          "--anchor-args",
          "--anchor-world-size",
          "--anchor-peak-bytes",
          "--anchor-static-bytes",
          "--anchor-reserved-bytes",
          "--anchor-rank"};
}

Expected<std::string> read_log_file(const std::string& path, const std::string& field) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return Error{field, "cannot read '" + path + "': " + error.message()};
  if (size > kMaxMegatronLogBytes) {
    return Error{field, "'" + path + "' is " + std::to_string(size >> 20) +
                            " MiB; megamem reads logs up to " +
                            std::to_string(kMaxMegatronLogBytes >> 20) +
                            " MiB (keep the first part: the argument dump and the memory "
                            "reports are near the start)"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{field, "cannot read '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The --url link's anchor (anchor= and anchor-*), or none.
Expected<std::optional<Anchor>> link_anchor(const ParsedOptions& options) {
  const auto url = options.values.find("--url");
  if (url == options.values.end()) return std::optional<Anchor>();
  Expected<std::optional<Anchor>> anchor = decode_link_anchor(url->second);
  if (!anchor) return Error{"--url: " + anchor.error().field, anchor.error().message};
  return anchor;
}

Expected<std::optional<AnchoredEstimate>> anchored_from_options(const ParsedOptions& options,
                                                                const Estimate& target) {
  const bool given = options.values.count("--anchor") || any_typed(options);
  // An anchor given by options replaces the link's: the options say what to do with this link.
  Expected<std::optional<Anchor>> anchor = link_anchor(options);
  if (given) {
    Expected<Anchor> from_options = anchor_of(options);
    if (!from_options) return from_options.error();
    anchor = std::optional<Anchor>(std::move(from_options).value());
  }
  if (!anchor) return anchor.error();
  if (!*anchor) return std::optional<AnchoredEstimate>();
  Expected<AnchoredEstimate> anchored = anchor_estimate(**anchor, target);
  if (!anchored) return anchored.error();
  return std::optional<AnchoredEstimate>(std::move(anchored).value());
}

void print_anchored(const AnchoredEstimate& a) {
  print_anchor_line(a);
  std::cout << "rank  raw peak alloc  anchored  carried: static  activation  device  "
               "raw peak  anchored peak\n";
  for (std::size_t i = 0; i < a.ranks.size(); ++i) {
    const AnchoredRank& r = a.ranks[i];
    char line[200];
    std::snprintf(line, sizeof(line), "%4d  %14s  %8s  %15s  %10s  %6s  %8s  %13s\n", r.pp_rank,
                  gib_text(static_cast<double>(r.raw_peak_allocated_bytes)).c_str(),
                  gib_text(static_cast<double>(r.anchored_peak_allocated_bytes)).c_str(),
                  signed_gib_text(a.static_term.carried_bytes[i]).c_str(),
                  signed_gib_text(a.activation_term.carried_bytes[i]).c_str(),
                  signed_gib_text(a.device_term.carried_bytes[i]).c_str(),
                  gib_text(static_cast<double>(r.raw_peak_total_bytes)).c_str(),
                  gib_text(static_cast<double>(r.anchored_peak_total_bytes)).c_str());
    std::cout << line;
  }
  std::cout << "GiB per GPU; peak alloc = max_memory_allocated(); peak = what nvidia-smi shows\n";
  for (const std::string& note : a.anchor.notes) std::cout << "anchor: " << note << "\n";
}

}  // namespace megamem::cli
