// The estimate anchored on a measured run (anchor.hpp, anchor_input.hpp) and Megatron-Bridge's
// memory reports (megatron_log.hpp): one TEST_CASE per rule.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "megamem/anchor.hpp"
#include "megamem/anchor_input.hpp"
#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/megatron_log.hpp"
#include "megamem/share_link.hpp"
#include "megamem/verdict.hpp"

using namespace megamem;

namespace {

constexpr const char* kTinyGpt =
    "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 2 --global-batch-size 16 "
    "--vocab-size 50257 --bf16 --use-distributed-optimizer ";

Config tiny_gpt(const std::string& extra, std::int64_t world_size = 8) {
  Expected<MegatronArgs> args = parse_megatron_args(kTinyGpt + extra, world_size);
  REQUIRE(args);
  return args->config;
}

Estimate estimated(const Config& config) {
  Expected<Estimate> e = estimate(config, {.module_tree = false, .timeline = false});
  REQUIRE(e);
  return std::move(e).value();
}

// An anchor that measured exactly `static_delta` more static memory and `activation_delta`
// more beyond it at the peak than estimated on pipeline rank 0.
AnchorMeasurement measured_as(const Estimate& anchor, double static_delta,
                              double activation_delta) {
  const RankMemory& rank = anchor.ranks[0];
  AnchorMeasurement m;
  m.world_size = anchor.normalized.config.parallel.world_size;
  m.pp_rank = 0;
  m.static_bytes = static_cast<std::uint64_t>(
      static_cast<double>(allocated_after_step_bytes(rank)) + static_delta);
  m.peak_allocated_bytes = static_cast<std::uint64_t>(
      static_cast<double>(rank.peak_allocated_bytes) + static_delta + activation_delta);
  m.max_reserved_bytes =
      m.peak_allocated_bytes + (rank.peak_reserved_bytes - rank.peak_allocated_bytes);
  return m;
}

// Typed-in numbers of the tiny GPT on 8 GPUs at PP 2: a 3 GiB peak on global rank 5.
TypedAnchor typed_tiny_gpt_pp2_rank5() {
  TypedAnchor typed;
  typed.megatron_args = std::string(kTinyGpt) + "--pipeline-model-parallel-size 2";
  typed.world_size = "8";
  typed.peak_allocated = "3 GiB";
  typed.global_rank = "5";
  return typed;
}

}  // namespace

TEST_CASE("Bridge's memory report is read as a memory report, in GB of 1e9 bytes") {
  // src/megatron/bridge/training/utils/train_utils.py training_log: "[Rank {}] {}" with
  // "(after {iteration} iterations) memory (GB)" and " | {metric}: {value}" per MEMORY_KEYS.
  const std::string log =
      "------------------------ arguments ------------------------\n"
      "  num_layers ...................................... 4\n"
      "-------------------- end of arguments ---------------------\n"
      "p4_v2_perf/0 [Rank 1] (after 2 iterations) memory (GB) | mem-allocated-gigabytes: 63.66 | "
      "mem-active-gigabytes: 63.66 | mem-inactive-gigabytes: 20.563 | mem-reserved-gigabytes: "
      "182.2 | mem-max-allocated-gigabytes: 153.4 | mem-max-active-gigabytes: 169.96 | "
      "mem-max-inactive-gigabytes: 32.473 | mem-max-reserved-gigabytes: 182.2 | "
      "mem-alloc-retires: 0 | mem-allocated-count: 433[Rank 3] (after 2 iterations) memory (GB) | "
      "mem-allocated-gigabytes: 61.881 | mem-reserved-gigabytes: 182.24 | "
      "mem-max-allocated-gigabytes: 153.47 | mem-max-reserved-gigabytes: 182.24 | "
      "mem-alloc-retires: 0\n"
      "[Rank 5] (after 2 iterations) memory (GB) | mem-allocated-gigabytes: 61.881 | mem-allo\n";
  const Expected<MegatronLog> read = read_megatron_log(log);
  REQUIRE(read);
  REQUIRE(read->memory_reports.size() == 2);
  const LogMemoryReport& first = read->memory_reports[0];
  CHECK(first.global_rank == 1);
  CHECK(first.iteration == 2);
  CHECK(first.bridge);
  CHECK(first.allocated_bytes == 63'660'000'000u);
  CHECK(first.max_allocated_bytes == 153'400'000'000u);
  CHECK(first.reserved_bytes == 182'200'000'000u);
  CHECK(first.max_reserved_bytes == 182'200'000'000u);
  CHECK(read->memory_reports[1].global_rank == 3);
  CHECK(read->memory_reports[1].max_allocated_bytes == 153'470'000'000u);
  // The cut-off report of rank 5 is skipped with a note.
  REQUIRE(read->notes.size() == 1);
  CHECK(read->notes[0].find("cut off") != std::string::npos);
}

TEST_CASE("An anchor on its own configuration gives back what it measured") {
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  const AnchorMeasurement m = measured_as(anchor, 300e6, 500e6);
  const Expected<AnchoredEstimate> a = anchor_estimate(m, anchor, anchor);
  REQUIRE(a);
  CHECK(a->static_term.anchor_difference_bytes == Approx(300e6).margin(2));
  CHECK(a->activation_term.anchor_difference_bytes == Approx(500e6).margin(2));
  CHECK(a->device_term.anchor_difference_bytes == Approx(0).margin(2));
  CHECK(a->ranks[0].anchored_peak_allocated_bytes == m.peak_allocated_bytes);
  CHECK(a->ranks[0].anchored_peak_reserved_bytes == *m.max_reserved_bytes);
  CHECK(a->warnings.empty());
}

TEST_CASE("The static difference is carried per byte of parameter state on the rank") {
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  const Estimate target = estimated(tiny_gpt("--tensor-model-parallel-size 4"));
  // A small share of the anchor's peak: inside the band, so carried whole.
  const double delta = 0.01 * static_cast<double>(anchor.ranks[0].peak_allocated_bytes);
  const Expected<AnchoredEstimate> a =
      anchor_estimate(measured_as(anchor, delta, 0), anchor, target);
  REQUIRE(a);
  const auto state = [](const RankMemory& r) {
    return static_cast<double>(r.weight_bytes + r.gradient_bytes + r.optimizer_bytes);
  };
  CHECK(a->band_limited_ranks.empty());
  CHECK(a->static_term.carried_bytes[0] ==
        Approx(delta * state(target.ranks[0]) / state(anchor.ranks[0])).epsilon(1e-6));
  CHECK(a->device_term.carried_bytes[0] == Approx(0).margin(2));
}

TEST_CASE("The activation difference is carried per saved activation byte at the peak") {
  const Estimate anchor = estimated(tiny_gpt(""));
  const Estimate target = estimated(tiny_gpt("--micro-batch-size 4 --global-batch-size 32"));
  const double delta = -0.002 * static_cast<double>(anchor.ranks[0].peak_allocated_bytes);
  const Expected<AnchoredEstimate> a =
      anchor_estimate(measured_as(anchor, 0, delta), anchor, target);
  REQUIRE(a);
  const double ratio = static_cast<double>(target.ranks[0].activation_peak_bytes) /
                       static_cast<double>(anchor.ranks[0].activation_peak_bytes);
  CHECK(ratio > 1.5);
  CHECK(a->band_limited_ranks.empty());
  CHECK(a->activation_term.carried_bytes[0] == Approx(delta * ratio).epsilon(1e-6));
  CHECK(a->ranks[0].anchored_peak_allocated_bytes < a->ranks[0].raw_peak_allocated_bytes);
}

// Issue #26: anchors resumed with resharding or on another stack measured 7-32 % beyond their
// estimate, and carried it whole to other layouts (up to +39 % on a target estimated within
// 0.2 %). Beyond the band the estimator's validated error explains, only the band is carried.
TEST_CASE("An anchor off by more than the band moves another layout at most to the band's edge") {
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  const Estimate target = estimated(tiny_gpt("--tensor-model-parallel-size 4"));
  const double anchor_peak = static_cast<double>(anchor.ranks[0].peak_allocated_bytes);
  const AnchorMeasurement m = measured_as(anchor, 0, 0.5 * anchor_peak);
  const Expected<AnchoredEstimate> a = anchor_estimate(m, anchor, target);
  REQUIRE(a);
  const ErrorBand band = error_band(configuration_features(target.normalized.config));
  REQUIRE(band.low_percent < 0);
  const double raw = static_cast<double>(a->ranks[0].raw_peak_allocated_bytes);
  const double anchored = static_cast<double>(a->ranks[0].anchored_peak_allocated_bytes);
  CHECK(anchored > raw);
  CHECK(anchored <= raw / (1.0 + band.low_percent / 100.0) + 1);
  CHECK(anchored - raw <= std::max(-band.low_percent, band.high_percent) / 100.0 * raw + 1);
  CHECK(a->band_limited_ranks == std::vector<int>{0});
  REQUIRE_FALSE(a->warnings.empty());
  CHECK(a->warnings.back().find("band") != std::string::npos);
  // Its own configuration gets what was measured.
  const Expected<AnchoredEstimate> own = anchor_estimate(m, anchor, anchor);
  REQUIRE(own);
  CHECK(own->ranks[0].anchored_peak_allocated_bytes == m.peak_allocated_bytes);
  CHECK(own->band_limited_ranks.empty());
}

TEST_CASE("Without a static figure the whole peak difference is activation") {
  const Estimate anchor = estimated(tiny_gpt(""));
  AnchorMeasurement m = measured_as(anchor, 100e6, 100e6);
  m.static_bytes.reset();
  m.max_reserved_bytes.reset();
  const Expected<AnchoredEstimate> a = anchor_estimate(m, anchor, anchor);
  REQUIRE(a);
  CHECK_FALSE(a->static_term.measured);
  CHECK_FALSE(a->device_term.measured);
  CHECK(a->activation_term.anchor_difference_bytes == Approx(200e6).margin(2));
}

TEST_CASE("An anchor of another model is refused, naming the first field that differs") {
  const Estimate anchor = estimated(tiny_gpt(""));
  Config other = tiny_gpt("");
  other.model.hidden_size = 768;
  other.model.num_attention_heads = 12;
  const Expected<AnchoredEstimate> a =
      anchor_estimate(measured_as(anchor, 0, 0), anchor, estimated(other));
  REQUIRE_FALSE(a);
  CHECK(a.error().field == "anchor");
  CHECK(a.error().message.find("another model (model.hidden_size: 512 on the anchor, 768 here)") !=
        std::string::npos);
}

TEST_CASE("An anchor of another precision or dispatcher is refused; recompute only warns") {
  const Estimate anchor = estimated(tiny_gpt(""));
  Config fp16 = tiny_gpt("");
  fp16.training.params_dtype = DType::fp16;
  const Expected<AnchoredEstimate> refused =
      anchor_estimate(measured_as(anchor, 0, 0), anchor, estimated(fp16));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("training.params_dtype") != std::string::npos);
  const Estimate recompute = estimated(
      tiny_gpt("--recompute-granularity full --recompute-method uniform --recompute-num-layers 1"));
  const Expected<AnchoredEstimate> warned =
      anchor_estimate(measured_as(anchor, 0, 0), anchor, recompute);
  REQUIRE(warned);
  REQUIRE(warned->warnings.size() == 1);
  CHECK(warned->warnings[0].find("training.recompute.granularity") != std::string::npos);
}

TEST_CASE("A carried difference that would make a term negative is refused") {
  // An anchor that measured no static memory at all, carried to a layout holding twice the
  // parameter state per GPU: the carried static difference exceeds the target's static memory.
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  AnchorMeasurement m = measured_as(anchor, 0, 0);
  m.static_bytes = 0;
  m.max_reserved_bytes.reset();
  const Expected<AnchoredEstimate> a = anchor_estimate(m, anchor, estimated(tiny_gpt("")));
  REQUIRE_FALSE(a);
  CHECK(a.error().field == "anchor");
  CHECK(a.error().message.find("static memory negative") != std::string::npos);
}

TEST_CASE("Anchor numbers no run can have are refused, naming the number") {
  const Config config = tiny_gpt("");
  AnchorMeasurement m;
  m.world_size = 8;
  CHECK(check_anchor_measurement(m, config)->field == "anchor_peak_bytes");
  m.peak_allocated_bytes = 2'000'000'000;
  m.static_bytes = 3'000'000'000;
  CHECK(check_anchor_measurement(m, config)->field == "anchor_static_bytes");
  m.static_bytes = 1'000'000'000;
  m.max_reserved_bytes = 1'500'000'000;
  CHECK(check_anchor_measurement(m, config)->field == "anchor_reserved_bytes");
  m.max_reserved_bytes.reset();
  m.world_size = 16;
  CHECK(check_anchor_measurement(m, config)->field == "anchor_world_size");
  m.world_size = 8;
  m.pp_rank = 1;
  CHECK(check_anchor_measurement(m, config)->field == "anchor_rank");
  m.pp_rank = 0;
  CHECK_FALSE(check_anchor_measurement(m, config));
}

TEST_CASE("Byte sizes are read with binary and decimal units") {
  CHECK(*parse_byte_size("f", "80 GiB") == 80ull << 30);
  CHECK(*parse_byte_size("f", "79.6GB") == 79'600'000'000ull);
  CHECK(*parse_byte_size("f", "8.5e10") == 85'000'000'000ull);
  CHECK(*parse_byte_size("f", " 512 MiB ") == 512ull << 20);
  for (const char* bad : {"", "-1", "nan", "inf", "3 GB/s", "GiB", "20 TiB", "1e400"}) {
    const Expected<std::uint64_t> parsed = parse_byte_size("f", bad);
    REQUIRE_FALSE(parsed);
    CHECK(parsed.error().field == "f");
    CHECK_FALSE(parsed.error().message.empty());
  }
}

TEST_CASE("A typed-in rank is a global rank, mapped to its pipeline rank") {
  TypedAnchor typed = typed_tiny_gpt_pp2_rank5();
  const Expected<Anchor> anchor = anchor_from_typed(typed);
  REQUIRE(anchor);
  CHECK(anchor->measured.global_rank == 5);
  CHECK(anchor->measured.pp_rank == 1);  // tp-cp-ep-dp-pp: 8 GPUs, PP 2 -> ranks 4..7 on pp 1
  CHECK(anchor->measured.source == "typed in");
  typed.global_rank = "x";
  CHECK(anchor_from_typed(typed).error().field == "anchor_rank");
}

TEST_CASE(
    "An anchor of unknown GPU is taken to have run on the target's; a known other GPU is "
    "refused") {
  const Config config = tiny_gpt("");
  Config a100 = config;
  a100.device.compute_capability = 80;
  a100.device.te_cublas_workspace_mib = 4.0;
  const Estimate target = estimated(a100);
  Anchor anchor;
  anchor.config = config;
  anchor.measured = measured_as(target, 0, 0);
  const Expected<AnchoredEstimate> assumed = anchor_estimate(anchor, target);
  REQUIRE(assumed);
  CHECK(assumed->ranks[0].anchored_peak_allocated_bytes == anchor.measured.peak_allocated_bytes);
  anchor.environment_known = true;
  const Expected<AnchoredEstimate> refused = anchor_estimate(anchor, target);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().message.find("another GPU or software stack") != std::string::npos);
}

TEST_CASE("A share link carries the anchor as its configuration and measured numbers") {
  TypedAnchor typed = typed_tiny_gpt_pp2_rank5();
  typed.static_allocated = "1 GiB";
  typed.max_reserved = "4 GiB";
  const Expected<Anchor> typed_in = anchor_from_typed(typed);
  REQUIRE(typed_in);
  Anchor anchor = *typed_in;
  anchor.measured.source = "run 7.log";
  const std::string link = "https://x/?v=1&model=llama-3-70b&" + encode_link_anchor(anchor);
  // The configuration's decoding skips the anchor: the link means what it did without it.
  REQUIRE(decode_share_link(link));
  CHECK(decode_share_link(link)->config.model.num_layers ==
        decode_share_link("v=1&model=llama-3-70b")->config.model.num_layers);
  const Expected<std::optional<Anchor>> read = decode_link_anchor(link);
  REQUIRE(read);
  REQUIRE(*read);
  const AnchorMeasurement& m = (*read)->measured;
  CHECK(share_link_differences((*read)->config, anchor.config).empty());
  CHECK(m.source == "run 7.log");
  CHECK(m.world_size == 8);
  CHECK(m.global_rank == 5);
  CHECK(m.pp_rank == 1);
  CHECK(m.peak_allocated_bytes == 3ull << 30);
  CHECK(m.static_bytes == 1ull << 30);
  CHECK(m.max_reserved_bytes == 4ull << 30);
  // Nor is it the page's language or anything else of the view.
  CHECK(decode_link_view(link)->language.empty());
  CHECK(decode_link_view(link + "&lang=zh")->language == "zh");
  // Written again, the same parameters.
  CHECK(encode_link_anchor(**read) == encode_link_anchor(anchor));
  CHECK_FALSE(*decode_link_anchor("v=1&model=llama-3-70b"));
  std::string bad_rank = link;
  bad_rank.replace(bad_rank.find("anchor-rank=5"), 13, "anchor-rank=99");
  CHECK(decode_link_anchor(bad_rank).error().field == "anchor-rank");
  CHECK(decode_link_anchor("v=1&anchor-peak=1GiB").error().field == "anchor-peak");
}

TEST_CASE("The anchored verdict judges the anchored peaks under the raw estimate's band") {
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  const Expected<AnchoredEstimate> a =
      anchor_estimate(measured_as(anchor, 300e6, 500e6), anchor, anchor);
  REQUIRE(a);
  const Verdict verdict = anchored_verdict(anchor, *a);
  CHECK(verdict.capacity_bytes == anchor.verdict.capacity_bytes);
  CHECK(verdict.band.low_percent == anchor.verdict.band.low_percent);
  CHECK(verdict.headroom_bytes ==
        static_cast<std::int64_t>(verdict.capacity_bytes) -
            static_cast<std::int64_t>(a->ranks[0].anchored_peak_total_bytes));
  CHECK(verdict.headroom_bytes < anchor.verdict.headroom_bytes);
}

TEST_CASE("A report after one iteration is compared with the first iteration's peak") {
  const Estimate anchor = estimated(tiny_gpt("--tensor-model-parallel-size 2"));
  const RankMemory& rank = anchor.ranks[0];
  REQUIRE(rank.first_iteration_peak_allocated_bytes < rank.peak_allocated_bytes);
  AnchorMeasurement m = measured_as(anchor, 0, 0);
  m.static_bytes.reset();
  m.max_reserved_bytes.reset();
  m.peak_allocated_bytes = rank.first_iteration_peak_allocated_bytes;
  m.iterations = 1;
  const Expected<AnchoredEstimate> a = anchor_estimate(m, anchor, anchor);
  REQUIRE(a);
  // Exactly the first iteration's estimate: nothing to carry, the steady peak stands.
  CHECK(a->activation_term.anchor_difference_bytes == Approx(0).margin(2));
  CHECK(a->ranks[0].anchored_peak_allocated_bytes == rank.peak_allocated_bytes);
  // The link keeps what the report came after.
  Anchor linked{.config = anchor.normalized.config, .measured = m, .environment_known = false};
  const std::string link = "v=1&" + encode_link_anchor(linked);
  CHECK(link.find("anchor-iter=1") != std::string::npos);
  CHECK((*decode_link_anchor(link))->measured.iterations == 1);
  CHECK(decode_link_anchor(link + "0").value()->measured.iterations == 10);
  std::string zero = link;
  zero.replace(zero.find("anchor-iter=1"), 13, "anchor-iter=0");
  CHECK(decode_link_anchor(zero).error().field == "anchor-iter");
}
