// Units and byte sizes, named once for core, CLI and page: binary sizes (KiB, MiB, GiB, as
// torch.cuda reports memory), decimal ones (GB/s of links, as NVIDIA quotes them) and the
// bytes of one element of each dtype.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "megamem/config.hpp"

namespace megamem {

inline constexpr double kBytesPerKiB = 1024.0;
inline constexpr double kBytesPerMiB = 1024.0 * kBytesPerKiB;
inline constexpr double kBytesPerGiB = 1024.0 * kBytesPerMiB;
inline constexpr double kBytesPerGB = 1e9;

// Bytes of one element: fp32 4, bf16 and fp16 2, fp8 (E4M3/E5M2) 1.
constexpr double dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return 4;
    case DType::bf16:
    case DType::fp16:
      return 2;
    case DType::fp8:
      return 1;
  }
  return 4;
}

// std::llround's rounding (halves away from zero), inline: an estimate rounds a few hundred
// byte counts, and the libm call was ~4 % of its instructions. NaN and values beyond 2^62
// (where the cast would not be defined) go to std::llround itself.
inline std::int64_t round_to_int64(double x) {
  if (!(std::fabs(x) < 0x1p62)) return std::llround(x);
  const auto whole = static_cast<std::int64_t>(x);     // toward zero, exact
  const double rest = x - static_cast<double>(whole);  // x's fraction, exact
  // Without branches: which way a fraction goes is a coin toss to the branch predictor.
  return whole + static_cast<std::int64_t>(rest >= 0.5) - static_cast<std::int64_t>(rest <= -0.5);
}

// A byte count computed in double, rounded, never below zero.
inline std::uint64_t whole_bytes(double bytes) {
  return static_cast<std::uint64_t>(round_to_int64(std::max(0.0, bytes)));
}

template <class Bytes>
constexpr double to_gib(Bytes bytes) {
  return static_cast<double>(bytes) / kBytesPerGiB;
}
template <class Bytes>
constexpr double to_mib(Bytes bytes) {
  return static_cast<double>(bytes) / kBytesPerMiB;
}

}  // namespace megamem
