// Text -> Anchor (anchor.hpp): the measured run an estimate is anchored on, from a training log
// or from numbers typed in.
//
// anchor_from_log() reads a Megatron-LM log (or one with Megatron-Bridge's memory reports) as
// `megamem compare` does (compare_megatron_log): the argument dump gives the configuration, the
// memory reports the measurements. Of several reported ranks the one with the largest max
// allocated is used (a note says so); its allocated figure, taken after K iterations, is the
// static memory, its max reserved the reserved peak.
//
// anchor_from_typed() takes Megatron-LM flags, a world size and byte sizes as typed (a number
// with an optional unit: B, KiB, MiB, GiB, TiB, or KB, MB, GB, TB in powers of 1000). The rank
// is a global rank, mapped to its pipeline rank under Megatron's default rank order; without one
// the figures are compared with the anchor's rank of the largest estimated peak (what a
// measurement of "the" peak of a job is).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "megamem/anchor.hpp"
#include "megamem/expected.hpp"

namespace megamem {

// "80 GiB", "81920MiB", "8.5e10", "79.6 GB" -> bytes. Errors name `field`: empty, negative,
// NaN, an unknown unit, over 16 TiB.
Expected<std::uint64_t> parse_byte_size(std::string_view field, std::string_view text);

// source: the name the anchor goes by (the log file's name).
Expected<Anchor> anchor_from_log(std::string_view text, std::string source,
                                 std::int64_t vocab_size = 0);

// The typed-in anchor; empty strings are options not given (flags, world size and peak are
// required).
struct TypedAnchor {
  std::string megatron_args;
  std::string world_size;
  std::string peak_allocated;
  std::string static_allocated;
  std::string max_reserved;
  std::string global_rank;
  std::int64_t vocab_size = 0;  // the tokenizer's vocabulary when the flags do not give it
};

Expected<Anchor> anchor_from_typed(const TypedAnchor& typed);

// The anchor in a share link (docs/share-links.md, "The anchor"): view-like parameters beside
// the configuration, so a link without them means what it did and the configuration's
// decoding skips them. anchor= is the anchor run's configuration as a share-link query
// (percent-encoded: "v%3D1%26model%3D..."), its world size included; anchor-peak, -static and
// -reserved the measured bytes; anchor-rank the global rank measured (when known),
// anchor-pp-rank its pipeline rank; anchor-name the name the anchor goes by (the log's).
// No log text travels: the measured numbers and the configuration are the whole anchor.
bool is_anchor_link_key(std::string_view key);

// The link's anchor (std::nullopt when it has no anchor= key), checked as a typed-in one is
// (check_anchor_measurement). Errors name the parameter.
Expected<std::optional<Anchor>> decode_link_anchor(std::string_view link);

// "anchor=...&anchor-peak=...&...", the parameters decode_link_anchor reads back to the same
// anchor (its notes aside).
std::string encode_link_anchor(const Anchor& anchor);

}  // namespace megamem
