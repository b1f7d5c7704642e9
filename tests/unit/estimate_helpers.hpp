// Shared by the unit tests: a configuration that must normalize or estimate, failing the
// test with the core's error otherwise.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "megamem/estimate.hpp"

namespace megamem::testing {

inline NormalizedConfig normalized(const Config& c) {
  auto n = normalize(c);
  INFO((n ? std::string() : n.error().field + ": " + n.error().message));
  REQUIRE(n.has_value());
  return n.value();
}

inline Estimate run(const Config& c) {
  auto e = estimate(c);
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  return e.value();
}

}  // namespace megamem::testing
