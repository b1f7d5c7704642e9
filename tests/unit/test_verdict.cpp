// The verdict (issue 24): fits / borderline / does_not_fit from the estimate and the error
// band its features have in the validation data (core/src/error_bands.inc).
#include <catch2/catch.hpp>

#include "megamem/estimate.hpp"
#include "megamem/verdict.hpp"
#include "model_fixtures.hpp"

using namespace megamem;

namespace {
constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;
}  // namespace

TEST_CASE("the committed band table starts with every validated configuration") {
  const std::vector<FeatureBand>& bands = feature_bands();
  REQUIRE_FALSE(bands.empty());
  CHECK(std::string(bands.front().feature) == "all");
  CHECK(bands.front().runs >= 100);
  for (const FeatureBand& band : bands) {
    CHECK(band.low_percent <= band.high_percent);
    CHECK(band.runs <= bands.front().runs);
    CHECK(std::abs(band.low_percent) <= widest_error_percent());
    CHECK(std::abs(band.high_percent) <= widest_error_percent());
  }
}

TEST_CASE("a band spans every feature it uses; a thinly validated feature widens it") {
  const ErrorBand none = error_band({});
  CHECK(none.thinnest_feature == "all");
  CHECK(none.few_runs_features.empty());
  const ErrorBand tp = error_band({"tp"});
  CHECK(tp.low_percent <= none.low_percent);
  CHECK(tp.high_percent >= none.high_percent);
  const ErrorBand unknown = error_band({"tp", "a_feature_nobody_validated"});
  CHECK(unknown.thinnest_feature == "a_feature_nobody_validated");
  CHECK(unknown.runs == 0);
  REQUIRE(unknown.few_runs_features.size() == 1);
  CHECK(unknown.low_percent == -widest_error_percent());
  CHECK(unknown.high_percent == widest_error_percent());
}

TEST_CASE("fits when the band's top fits, does not fit when its bottom does not") {
  ErrorBand band;
  band.low_percent = -10;  // the estimate may be 10 % under: the real peak up to x 1/0.9
  band.high_percent = 5;   // or 5 % over: down to x 1/1.05
  const std::uint64_t outside = 2 * kGiB;
  auto status = [&](std::uint64_t reserved, std::uint64_t capacity) {
    return fit_status(total_range(band, reserved, reserved + outside), capacity);
  };
  // 70 GiB reserved + 2 outside: 68.67 .. 79.78 GiB.
  const TotalRange range = total_range(band, 70 * kGiB, 72 * kGiB);
  CHECK(range.low_bytes == Approx(2 * kGiB + 70 * kGiB / 1.05).epsilon(1e-9));
  CHECK(range.high_bytes == Approx(2 * kGiB + 70 * kGiB / 0.9).epsilon(1e-9));
  CHECK(status(70 * kGiB, 80 * kGiB) == FitStatus::fits);
  CHECK(status(70 * kGiB, 75 * kGiB) == FitStatus::borderline);
  CHECK(status(70 * kGiB, 68 * kGiB) == FitStatus::does_not_fit);
}

TEST_CASE("estimate() carries the verdict of every rank, the worst one overall") {
  Config c = fixtures::llama3_70b();
  c.parallel.world_size = 64;
  c.parallel.tensor_parallel = 4;
  c.parallel.pipeline_parallel = 8;
  auto e = estimate(c);
  REQUIRE(e.has_value());
  const Verdict& v = e->verdict;
  REQUIRE(v.ranks.size() == e->ranks.size());
  CHECK(v.limiting_pp_rank == e->limiting_pp_rank);
  CHECK(v.capacity_bytes == static_cast<std::uint64_t>(c.device.capacity_gib * kGiB));
  FitStatus worst = FitStatus::fits;
  for (std::size_t i = 0; i < v.ranks.size(); ++i) {
    const RankMemory& rank = e->ranks[i];
    const RankVerdict& r = v.ranks[i];
    CHECK(r.pp_rank == rank.pp_rank);
    CHECK(r.headroom_bytes == static_cast<std::int64_t>(v.capacity_bytes) -
                                  static_cast<std::int64_t>(rank.peak_total_bytes));
    CHECK(r.low_total_bytes <= rank.peak_total_bytes + 1);
    CHECK(r.high_total_bytes + 1 >= rank.peak_total_bytes);
    worst = std::max(worst, r.status);
  }
  CHECK(v.status == worst);
  CHECK(v.band.features == std::vector<std::string>{"tp", "pp"});

  c.device.capacity_gib = 8;  // far below any rank's peak
  auto small = estimate(c);
  REQUIRE(small.has_value());
  CHECK(small->verdict.status == FitStatus::does_not_fit);
  CHECK(small->verdict.headroom_bytes < 0);
}
