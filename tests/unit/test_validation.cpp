// The validation runner (megamem/validation.hpp) on small hand-made cases files. One TEST_CASE
// per rule of memory-model.md §10.3 and of the report.
#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "megamem/estimate.hpp"
#include "megamem/megatron_args.hpp"
#include "megamem/validation.hpp"

using namespace megamem;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

const std::string kFlags =
    "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
    "--max-position-embeddings 1024 --micro-batch-size 4 --vocab-size 50257 --bf16";

// One entry of a cases file.
std::string case_json(const std::string& id, const std::string& flags, double static_bytes,
                      const std::string& tags = "", int pp_rank = 0,
                      const std::string& source = "test", std::int64_t vocab = 50257,
                      std::int64_t world_size = 8) {
  std::string escaped;
  for (const char c : flags) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "{\"id\": \"" + id + "\", \"source\": \"" + source +
         "\", \"gpu\": \"H100\", \"world_size\": " + std::to_string(world_size) +
         ", \"measured_rank\": {\"pp_rank\": " + std::to_string(pp_rank) +
         "}, \"megatron_args\": \"" + escaped + "\", \"vocab_size\": " + std::to_string(vocab) +
         ", \"measured\": {\"static_bytes\": " + std::to_string(static_bytes) +
         ", \"peak_bytes\": " + std::to_string(2.0 * static_bytes) + "}, \"tags\": [" + tags + "]}";
}

std::string cases_file(const std::vector<std::string>& cases) {
  std::string text = "{\"source_commit\": \"NVIDIA/Megatron-LM d98e8a64ddf3\", \"cases\": [";
  for (std::size_t i = 0; i < cases.size(); ++i) text += (i ? ", " : "") + cases[i];
  return text + "]}";
}

ValidationReport run(const std::vector<std::string>& cases) {
  Expected<ValidationReport> report = run_validation(cases_file(cases));
  if (!report) FAIL(report.error().field + ": " + report.error().message);
  return report.value();
}

// The estimator's static bytes for rank pp_rank of the flags, as the runner should find them.
double predicted_static(const std::string& flags, std::int64_t vocab = 50257, int pp_rank = 0) {
  const Expected<MegatronArgs> args = parse_megatron_args(flags, 8, vocab);
  REQUIRE(args.has_value());
  const Expected<Estimate> estimated = estimate(args->config);
  REQUIRE(estimated.has_value());
  for (const RankMemory& rank : estimated->ranks) {
    if (rank.pp_rank == pp_rank) return static_cast<double>(rank.static_bytes);
  }
  FAIL("no rank " << pp_rank);
  return 0.0;
}

// The estimator's allocator peak, once RankMemory has one.
template <class Rank>
std::optional<double> peak_of(const Rank& rank) {
  if constexpr (requires { rank.peak_allocated_bytes; }) {
    return static_cast<double>(rank.peak_allocated_bytes);
  } else {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("the static tolerance is 5% of the measurement plus 64 MiB") {
  const double measured = 1000.0 * kMiB;
  CHECK(Comparison{measured + 114.0 * kMiB, measured}.within(kStaticTarget));
  CHECK_FALSE(Comparison{measured + 115.0 * kMiB, measured}.within(kStaticTarget));
  CHECK(Comparison{measured - 114.0 * kMiB, measured}.within(kStaticTarget));
  CHECK_FALSE(Comparison{measured - 115.0 * kMiB, measured}.within(kStaticTarget));
  CHECK(tolerance_text(kStaticTarget) == "5% + 64 MiB");
  const Comparison c{1100.0 * kMiB, 1000.0 * kMiB};
  CHECK_THAT(c.error_mib(), WithinRel(100.0));
  CHECK_THAT(c.relative_error_percent(), WithinRel(10.0));
}

TEST_CASE("the peak tolerance is 10% of the measurement plus 128 MiB") {
  const double measured = 1000.0 * kMiB;
  CHECK(Comparison{measured + 228.0 * kMiB, measured}.within(kPeakTarget));
  CHECK_FALSE(Comparison{measured + 229.0 * kMiB, measured}.within(kPeakTarget));
  CHECK(tolerance_text(kPeakTarget) == "10% + 128 MiB");
}

TEST_CASE("error statistics: median and p90 of |relative error|, share within, mean signed") {
  // Relative errors -10%, +1%, +2%, +3%, +20% of 1000 MiB.
  std::vector<Comparison> comparisons;
  for (const double percent : {-10.0, 1.0, 2.0, 3.0, 20.0}) {
    comparisons.push_back({(1000.0 + 10.0 * percent) * kMiB, 1000.0 * kMiB});
  }
  const ErrorStats s = summarize_errors(comparisons, kStaticTarget);
  CHECK(s.count == 5);
  CHECK_THAT(s.median_abs_relative_percent, WithinRel(3.0, 1e-9));
  // Sorted |errors| 1, 2, 3, 10, 20: position 0.9 * 4 = 3.6 -> 10 + 0.6 * 10 = 16.
  CHECK_THAT(s.p90_abs_relative_percent, WithinRel(16.0, 1e-9));
  CHECK_THAT(s.share_within_tolerance, WithinRel(0.8, 1e-9));  // 20% = 200 MiB > 114 MiB
  CHECK_THAT(s.mean_signed_error_mib, WithinRel(32.0, 1e-9));  // (-100+10+20+30+200)/5
  CHECK(summarize_errors({}, kStaticTarget).count == 0);
}

TEST_CASE("a scored case compares the measured rank's predicted static bytes") {
  const double expected = predicted_static(kFlags);
  const ValidationReport report = run({case_json("a", kFlags, expected + 10.0 * kMiB, "\"tp\"")});
  REQUIRE(report.cases.size() == 1);
  const CaseResult& c = report.cases[0];
  CHECK(c.status == CaseStatus::scored);
  CHECK(c.id == "a");
  CHECK(c.tags == std::vector<std::string>{"tp"});
  REQUIRE(c.static_memory.has_value());
  CHECK(c.static_memory->predicted_bytes == expected);
  CHECK_THAT(c.static_memory->error_mib(), WithinAbs(-10.0, 1e-6));
  CHECK(report.scored == 1);
  CHECK(report.static_summary.cases.count == 1);
}

TEST_CASE("cases on GPUs before Hopper use Transformer Engine's 4 MiB cuBLAS workspace") {
  Expected<MegatronArgs> args = parse_megatron_args(kFlags, 8, 50257);
  REQUIRE(args.has_value());
  Config a100 = args->config;
  a100.device.te_cublas_workspace_mib = 4.0;
  const Expected<Estimate> estimated = estimate(a100);
  REQUIRE(estimated.has_value());
  std::string entry = case_json("a100", kFlags, 1e9);
  entry.replace(entry.find("\"H100\""), 6, "\"A100\"");
  const ValidationReport report = run({entry, case_json("h100", kFlags, 1e9)});
  REQUIRE(report.cases[0].static_memory.has_value());
  CHECK(report.cases[0].static_memory->predicted_bytes ==
        static_cast<double>(estimated->ranks[0].static_bytes));
  CHECK(report.cases[1].static_memory->predicted_bytes == predicted_static(kFlags));
  CHECK(report.cases[0].static_memory->predicted_bytes <
        report.cases[1].static_memory->predicted_bytes);
}

TEST_CASE("the measured pipeline rank is the one compared") {
  const std::string flags = kFlags + " --pipeline-model-parallel-size 2";
  const double last = predicted_static(flags, 50257, 1);
  const ValidationReport report = run({case_json("pp", flags, last, "", 1)});
  REQUIRE(report.cases[0].static_memory.has_value());
  CHECK(report.cases[0].static_memory->predicted_bytes == last);
  CHECK(report.cases[0].pp_rank == 1);

  const ValidationReport missing = run({case_json("pp5", flags, last, "", 5)});
  CHECK(missing.cases[0].status == CaseStatus::error);
  CHECK_THAT(missing.cases[0].detail, Contains("pipeline rank 5"));
}

TEST_CASE("peak memory is compared once the estimator predicts it") {
  const Expected<MegatronArgs> args = parse_megatron_args(kFlags, 8, 50257);
  REQUIRE(args.has_value());
  const Expected<Estimate> estimated = estimate(args->config);
  REQUIRE(estimated.has_value());
  const std::optional<double> peak = peak_of(estimated->ranks[0]);
  const ValidationReport report = run({case_json("a", kFlags, 1e9)});
  CHECK(report.cases[0].peak_memory.has_value() == peak.has_value());
  CHECK(report.peak_summary.has_value() == peak.has_value());
  if (peak && report.cases[0].peak_memory) {
    CHECK(report.cases[0].peak_memory->predicted_bytes == *peak);
    CHECK(report.cases[0].peak_memory->measured_bytes == 2e9);
  }
}

TEST_CASE("a case using an unmodeled feature is unsupported and names the feature") {
  for (const std::string& feature : unmodeled_validation_features()) {
    INFO(feature);
    const ValidationReport report = run({case_json("f", kFlags, 1e9, "\"" + feature + "\"")});
    CHECK(report.cases[0].status == CaseStatus::unsupported);
    CHECK_THAT(report.cases[0].detail, Contains(feature));
    CHECK_FALSE(report.cases[0].static_memory.has_value());
    CHECK(report.unsupported == 1);
    CHECK(report.static_summary.cases.count == 0);
  }
}

TEST_CASE("unmodeled features are also found from the flags, not only the tags") {
  const std::vector<std::pair<std::string, std::string>> flag_features = {
      {"--optimizer muon", "optimizer_muon"},
      {"--cuda-graph-impl local", "cuda_graph_local"},
      {"--enable-cuda-graph", "cuda_graph_local"},
      {"--cuda-graph-impl transformer_engine", "cuda_graph"},
      {"--fp8-format hybrid", "fp8"},
      {"--fine-grained-activation-offloading --offload-modules core_attn", "activation_offload"},
      {"--export-te-mcore-model", "modelopt"},
  };
  const std::vector<std::string>& unmodeled = unmodeled_validation_features();
  for (const auto& [flags, feature] : flag_features) {
    INFO(flags);
    const ValidationReport report = run({case_json("f", kFlags + " " + flags, 1e9)});
    const bool listed = std::find(unmodeled.begin(), unmodeled.end(), feature) != unmodeled.end();
    if (listed) {
      CHECK(report.cases[0].status == CaseStatus::unsupported);
      CHECK_THAT(report.cases[0].detail, Contains(feature));
    } else {
      CHECK(report.cases[0].status != CaseStatus::unsupported);
    }
  }
}

TEST_CASE("a case whose flags fail to parse is an error naming the flag") {
  const ValidationReport report = run({case_json("bad", kFlags + " --hidden-size abc", 1e9)});
  CHECK(report.cases[0].status == CaseStatus::error);
  CHECK_THAT(report.cases[0].detail, Contains("--hidden-size"));
  CHECK(report.errors == 1);
  CHECK_THAT(validation_summary_text(report), Contains("error bad:"));
}

TEST_CASE("flags that change memory but are not modeled are noted on scored cases") {
  const ValidationReport report = run({case_json("n",
                                                 kFlags + " --tensor-model-parallel-size 2 "
                                                          "--sequence-parallel --use-nccl-ub",
                                                 1e9)});
  CHECK(report.cases[0].status == CaseStatus::scored);
  CHECK(report.cases[0].unmodeled_flags == std::vector<std::string>{"--use-nccl-ub"});
  CHECK_THAT(validation_report_markdown(report, "cases.json"), Contains("--use-nccl-ub"));
}

TEST_CASE("a distinct configuration counts once, against the median of its measurements") {
  const double p = predicted_static(kFlags);
  const std::string other = kFlags + " --use-distributed-optimizer";
  const double q = predicted_static(other);
  const ValidationReport report = run({
      case_json("a@x", kFlags, p + 10.0 * kMiB, "\"t\""),
      case_json("a@y", kFlags, p + 20.0 * kMiB, "\"t\""),
      case_json("a@z", "  " + kFlags + " ", p + 60.0 * kMiB, "\"t\""),  // spacing differs only
      case_json("b@x", other, q - 40.0 * kMiB, "\"t\", \"dist\""),
  });
  const MetricSummary& s = report.static_summary;
  CHECK(s.cases.count == 4);
  CHECK(s.configs.count == 2);
  // Config a: prediction - median(10, 20, 60) = -20 MiB; config b: +40 MiB.
  CHECK_THAT(s.configs.mean_signed_error_mib, WithinAbs(10.0, 1e-6));
  CHECK_THAT(s.cases.mean_signed_error_mib, WithinAbs((-10.0 - 20.0 - 60.0 + 40.0) / 4, 1e-6));
  REQUIRE(s.per_tag.size() == 2);
  CHECK(s.per_tag[0].tag == "t");  // most frequent first
  CHECK(s.per_tag[0].cases.count == 4);
  CHECK(s.per_tag[0].configs.count == 2);
  CHECK(s.per_tag[1].tag == "dist");
  CHECK(s.per_tag[1].configs.count == 1);
}

TEST_CASE("NullTokenizer entries with golden values before PR 4057 use one more token") {
  const std::string flags =
      "--num-layers 2 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 1 --tokenizer-type NullTokenizer "
      "--vocab-size 131072 --bf16";
  const ValidationReport report = run({
      case_json("old", flags, 1e9, "", 0, "tests (golden values of commit adc69dba2d)", 131072),
      case_json("new", flags, 1e9, "", 0, "tests (golden values of commit 6e091e1b68)", 131072),
  });
  REQUIRE(report.cases[0].static_memory.has_value());
  REQUIRE(report.cases[1].static_memory.has_value());
  CHECK_THAT(report.cases[0].config_key, Contains("vocab=131073"));
  CHECK_THAT(report.cases[1].config_key, Contains("vocab=131072"));
  // 131073 pads to 131200 at TP 1: a larger embedding and output layer.
  CHECK(report.cases[0].static_memory->predicted_bytes == predicted_static(flags, 131073));
  CHECK(report.cases[0].static_memory->predicted_bytes >
        report.cases[1].static_memory->predicted_bytes);
}

TEST_CASE("targets are checked on distinct configurations and end the text summary") {
  const double p = predicted_static(kFlags);
  const ValidationReport good = run({case_json("a", kFlags, p * 1.01)});
  REQUIRE(good.targets.size() >= 2);
  CHECK(good.targets[0].pass);  // |error| ~1% <= 3%
  CHECK(good.targets[1].pass);  // within 5% + 64 MiB
  const std::string text = validation_summary_text(good);
  CHECK_THAT(text, EndsWith(")\n"));
  const std::string last_lines = text.substr(text.find("PASS static"));
  CHECK_THAT(last_lines, Contains("PASS static: median"));
  CHECK_THAT(last_lines, Contains("PASS static: distinct configs within 5% + 64 MiB"));

  const ValidationReport bad = run({case_json("a", kFlags, p * 2.0)});
  CHECK_FALSE(bad.targets[0].pass);
  CHECK_FALSE(bad.targets[1].pass);
  CHECK_THAT(validation_summary_text(bad), Contains("FAIL static: median"));
}

TEST_CASE("the Markdown report names its generator, the source and the targets") {
  const double p = predicted_static(kFlags);
  const ValidationReport report =
      run({case_json("gpt/a@h100", kFlags, p, "\"tp\""),
           case_json("gpt/f@h100", kFlags, p, "\"" + unmodeled_validation_features()[0] + "\"")});
  const std::string md = validation_report_markdown(report, "../shared/validation/x.json");
  CHECK_THAT(md, Contains("generated by `megamem validate --report docs/validation.md`"));
  CHECK_THAT(md, Contains("`../shared/validation/x.json`"));
  CHECK_THAT(md, Contains("NVIDIA/Megatron-LM `d98e8a6`"));
  CHECK_THAT(md, Contains("median \\|relative error\\| over distinct configs <= 3%"));
  CHECK_THAT(md, Contains("within 5% + 64 MiB >= 90%"));
  CHECK_THAT(md, Contains("| gpt/a@h100 | tp | 0 |"));
  CHECK_THAT(md, Contains("unsupported: " + unmodeled_validation_features()[0]));
}

TEST_CASE("the JSON report carries every case and the summaries") {
  const ValidationReport report = run({case_json("a", kFlags, 1e9)});
  const std::string json = validation_report_json(report);
  CHECK_THAT(json, Contains("\"id\": \"a\""));
  CHECK_THAT(json, Contains("\"static\""));
  CHECK_THAT(json, Contains("\"targets\""));
  CHECK_THAT(json, Contains("\"measured_bytes\": 1000000000.0"));
}

TEST_CASE("a malformed cases file is an error") {
  CHECK(run_validation("not json").error().field == "cases");
  CHECK(run_validation("{\"description\": \"x\"}").error().field == "cases");
  CHECK(run_validation("{\"cases\": [1]}").error().field == "cases");
  // A case missing its measurement is reported, not dropped.
  const Expected<ValidationReport> report =
      run_validation("{\"cases\": [{\"id\": \"x\", \"megatron_args\": \"--num-layers 2\"}]}");
  REQUIRE(report.has_value());
  CHECK(report->cases[0].status == CaseStatus::error);
  CHECK(report->errors == 1);
}

TEST_CASE("a run without a static figure is scored on the peak, and reserved where measured") {
  const std::string entry =
      "{\"id\": \"outside/peak_only\", \"gpu\": \"B200\", \"world_size\": 8, "
      "\"measured_rank\": {\"pp_rank\": 0}, \"megatron_args\": \"" +
      kFlags +
      "\", \"vocab_size\": 50257, \"measured\": {\"static_bytes\": null, "
      "\"peak_bytes\": 4294967296, \"max_reserved_bytes\": 4509715660}}";
  Expected<ValidationReport> report = run_validation(cases_file({entry}), kCommunityTargets);
  REQUIRE(report.has_value());
  REQUIRE(report->cases.size() == 1);
  const CaseResult& c = report->cases[0];
  CHECK(c.status == CaseStatus::scored);
  CHECK_FALSE(c.static_memory.has_value());
  REQUIRE(c.peak_memory.has_value());
  REQUIRE(c.reserved_memory.has_value());
  CHECK(c.reserved_memory->measured_bytes == 4509715660.0);
  CHECK(c.reserved_memory->predicted_bytes >= c.peak_memory->predicted_bytes);
  REQUIRE(report->reserved_summary.has_value());
  CHECK_FALSE(report->targets_gate);
  // Issue 12's targets for outside runs: peak median 2 %, every run within 5 % + 256 MiB.
  CHECK(report->peak_summary->target.median_percent == 2.0);
  CHECK(report->peak_summary->target.tolerance_mib == 256.0);
  const std::vector<OutsideReport> outside = {
      {&outside_cases_files().front(), "outside.json", *report}};
  const std::string md = validation_reports_markdown(*report, "ci.json", outside);
  CHECK_THAT(md, Contains("## Outside Megatron's CI: community runs"));
  CHECK_THAT(md, Contains("### reserved memory"));
  CHECK_THAT(md, Contains("reserved predicted"));
}

// A case of the given measured.metric whose figure is `bytes`.
std::string metric_case(const std::string& id, const std::string& metric, double bytes) {
  return "{\"id\": \"" + id +
         "\", \"gpu\": \"H100\", \"world_size\": 8, \"measured_rank\": {\"pp_rank\": 0}, "
         "\"megatron_args\": \"" +
         kFlags + "\", \"vocab_size\": 50257, \"measured\": {\"metric\": \"" + metric +
         "\", \"peak_bytes\": " + std::to_string(bytes) + "}}";
}

TEST_CASE("measured.metric says which of the estimate's figures a measurement is compared with") {
  const ValidationReport report =
      run({metric_case("smi", "nvidia_smi", 8e9), metric_case("reserved", "max_reserved", 7e9),
           metric_case("typo", "max_alocated", 6e9)});
  REQUIRE(report.cases.size() == 3);
  const CaseResult& smi = report.cases[0];
  REQUIRE(smi.device_memory.has_value());
  CHECK_FALSE(smi.peak_memory.has_value());
  CHECK(smi.device_memory->measured_bytes == 8e9);
  REQUIRE(report.cases[1].reserved_memory.has_value());
  // nvidia-smi shows the allocator's reserve and what sits outside it (the same configuration).
  CHECK(smi.device_memory->predicted_bytes >
        report.cases[1].reserved_memory->predicted_bytes + 512.0 * 1024 * 1024);
  CHECK(report.cases[1].reserved_memory->measured_bytes == 7e9);
  CHECK_FALSE(report.cases[1].peak_memory.has_value());
  CHECK(report.cases[2].status == CaseStatus::error);
  CHECK_THAT(report.cases[2].detail, Contains("'max_alocated' is not one megamem scores"));
  REQUIRE(report.device_summary.has_value());
  CHECK(report.device_summary->target.tolerance_mib == 512.0);
  const std::string md = validation_report_markdown(report, "x.json");
  CHECK_THAT(md, Contains(" device memory\n"));
  CHECK_THAT(md, Contains("device predicted"));
  CHECK_THAT(validation_report_json(report), Contains("\"device\""));
}

TEST_CASE("a peak reported after the first iteration is compared with that iteration's estimate") {
  const Expected<MegatronArgs> args = parse_megatron_args(kFlags, 8, 50257);
  REQUIRE(args.has_value());
  const Expected<Estimate> estimated = estimate(args->config);
  REQUIRE(estimated.has_value());
  const RankMemory& rank = estimated->ranks[0];
  // Adam's moments are created by the first step, so its forward and backward lack them.
  REQUIRE(rank.first_iteration_peak_allocated_bytes < rank.peak_allocated_bytes);
  std::string stated = case_json("stated", kFlags, 1e9);
  stated.replace(stated.find("\"peak_bytes\""), 0, "\"after_iterations\": 1, ");
  const std::string bridge = "https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/";
  const ValidationReport report =
      run({stated, case_json("before_3169", kFlags, 1e9, "", 0, bridge + "3107"),
           case_json("after_3169", kFlags, 1e9, "", 0, bridge + "3880"),
           case_json("not_bridge", kFlags, 1e9)});
  REQUIRE(report.cases.size() == 4);
  for (const CaseResult& c : report.cases) REQUIRE(c.peak_memory.has_value());
  const auto first = static_cast<double>(rank.first_iteration_peak_allocated_bytes);
  const auto steady = static_cast<double>(rank.peak_allocated_bytes);
  CHECK(report.cases[0].peak_memory->predicted_bytes == first);
  // The two Bridge runs also get Bridge's settings (no hidden dropout, validation.cpp
  // apply_launcher), so they are compared with each other's estimate.
  Config bridge_config = args->config;
  bridge_config.model.hidden_dropout = 0.0;
  bridge_config.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
  const Expected<Estimate> bridge_estimate = estimate(bridge_config);
  REQUIRE(bridge_estimate.has_value());
  const RankMemory& bridge_rank = bridge_estimate->ranks[0];
  CHECK(report.cases[1].peak_memory->predicted_bytes ==
        static_cast<double>(bridge_rank.first_iteration_peak_allocated_bytes));
  CHECK(report.cases[1].measured_after_iterations == 1);
  CHECK(report.cases[2].peak_memory->predicted_bytes ==
        static_cast<double>(bridge_rank.peak_allocated_bytes));
  CHECK(report.cases[3].peak_memory->predicted_bytes == steady);
  CHECK_THAT(validation_report_markdown(report, "cases.json"),
             Contains("peak after the first iteration"));
}
