// The anchored estimate scored on the validation data (validation.hpp, anchored_pairs): every
// ordered pair of scored runs of one file that are the same model and differ in layout, batch,
// sequence length or recompute; the target's peak raw and anchored on the other run.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/anchor.hpp"
#include "megamem/estimate.hpp"
#include "megamem/fields.hpp"
#include "megamem/validation.hpp"

namespace megamem {
namespace {

// What a field belongs to among the differences the rule is meant to carry across.
std::string_view difference_kind(const ConfigField& field) {
  const std::string_view name = field.name;
  if (field.group == FieldGroup::parallel) return "layout";
  if (name == "training.micro_batch_size" || name == "training.global_batch_size") return "batch";
  if (name == "training.seq_length") return "sequence";
  if (name.rfind("training.recompute", 0) == 0) return "recompute";
  return "";
}

// "layout, batch": the kinds in which two configurations differ, in this order ("" = none).
std::string differs_in(const Config& a, const Config& b) {
  std::string out;
  for (const std::string_view kind : {"layout", "batch", "sequence", "recompute"}) {
    for (const ConfigField& field : config_fields()) {
      if (difference_kind(field) != kind) continue;
      if (field_link_text(field, a) == field_link_text(field, b)) continue;
      out += (out.empty() ? "" : ", ") + std::string(kind);
      break;
    }
  }
  return out;
}

// A scored run with its estimate, measured pipeline rank and measurements.
struct PairRun {
  const CaseResult* result = nullptr;
  std::optional<Estimate> estimated;
};

AnchorMeasurement measurement_of(const CaseResult& run) {
  AnchorMeasurement m;
  m.source = run.id;
  m.world_size = run.config->parallel.world_size;
  m.pp_rank = run.pp_rank;
  m.iterations = run.measured_after_iterations;
  m.peak_allocated_bytes =
      static_cast<std::uint64_t>(std::llround(run.peak_memory->measured_bytes));
  if (run.static_memory) {
    m.static_bytes = static_cast<std::uint64_t>(std::llround(run.static_memory->measured_bytes));
  }
  if (run.reserved_memory) {
    m.max_reserved_bytes =
        static_cast<std::uint64_t>(std::llround(run.reserved_memory->measured_bytes));
  }
  return m;
}

// The runs that can take part: scored, with a measured peak, estimated again here (fast).
std::vector<PairRun> pair_runs(const std::vector<CaseResult>& cases) {
  std::vector<PairRun> runs;
  for (const CaseResult& c : cases) {
    if (c.status != CaseStatus::scored || !c.peak_memory || !c.config) continue;
    Expected<Estimate> estimated = estimate(*c.config, {.module_tree = false, .timeline = false});
    if (!estimated) continue;  // scored cases estimate; kept defensive
    runs.push_back({&c, std::move(estimated).value()});
  }
  return runs;
}

// One ordered pair: the target's measured rank, raw and anchored.
AnchoredPair score_pair(const PairRun& anchor, const PairRun& target, std::string kinds) {
  AnchoredPair pair;
  pair.anchor_id = anchor.result->id;
  pair.target_id = target.result->id;
  pair.differs_in = std::move(kinds);
  pair.raw = *target.result->peak_memory;
  const ErrorBand& band = target.estimated->verdict.band;
  pair.band_percent = std::max(std::abs(band.low_percent), std::abs(band.high_percent));
  const Expected<AnchoredEstimate> anchored =
      anchor_estimate(measurement_of(*anchor.result), *anchor.estimated, *target.estimated);
  if (!anchored) {
    pair.refusal = anchored.error().message;
    return pair;
  }
  // The anchored estimate is a steady peak; a target measured after its first iteration is
  // compared with that iteration's peak plus the same carried difference.
  const auto rank = static_cast<std::size_t>(target.result->pp_rank);
  const RankMemory& raw_rank = target.estimated->ranks[rank];
  const double carried = static_cast<double>(anchored->ranks[rank].anchored_peak_allocated_bytes) -
                         static_cast<double>(raw_rank.peak_allocated_bytes);
  const auto reading = target.result->measured_after_iterations;
  pair.anchored = {static_cast<double>(max_allocated_after_bytes(raw_rank, reading)) + carried,
                   pair.raw.measured_bytes};
  return pair;
}

void summarize_pairs(AnchoredPairsSummary& out, const AccuracyTarget& peak_target) {
  std::vector<Comparison> raw;
  std::vector<Comparison> anchored;
  for (const AnchoredPair& pair : out.pairs) {
    if (!pair.refusal.empty()) {
      ++out.refused;
      continue;
    }
    raw.push_back(pair.raw);
    anchored.push_back(pair.anchored);
    const double worse_points = std::abs(pair.anchored.relative_error_percent()) -
                                std::abs(pair.raw.relative_error_percent());
    if (worse_points > 0) ++out.worse;
    if (worse_points > pair.band_percent) ++out.worse_beyond_band;
  }
  out.raw = summarize_errors(raw, peak_target);
  out.anchored = summarize_errors(anchored, peak_target);
}

}  // namespace

AnchoredPairsSummary anchored_pairs(const std::vector<CaseResult>& cases,
                                    const AccuracyTarget& peak_target) {
  AnchoredPairsSummary out;
  const std::vector<PairRun> runs = pair_runs(cases);
  for (const PairRun& anchor : runs) {
    for (const PairRun& target : runs) {
      if (&anchor == &target) continue;
      const Config& a = anchor.estimated->normalized.config;
      const Config& b = target.estimated->normalized.config;
      if (!model_difference(a, b).empty()) continue;
      std::string kinds = differs_in(a, b);
      if (kinds.empty()) continue;
      out.pairs.push_back(score_pair(anchor, target, std::move(kinds)));
    }
  }
  summarize_pairs(out, peak_target);
  return out;
}

namespace {

std::string cell(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::string stats_row(const ErrorStats& s) {
  if (s.count == 0) return "– | – | –";
  return cell("%.2f%%", s.median_abs_relative_percent) + " | " +
         cell("%.2f%%", s.p90_abs_relative_percent) + " | " +
         cell("%.1f%%", 100.0 * s.share_within_tolerance);
}

// Per kind of difference: the scored pairs' raw and anchored statistics and how many got worse.
void markdown_by_kind(std::string& md, const AnchoredPairsSummary& summary,
                      const AccuracyTarget& target) {
  std::map<std::string, std::vector<const AnchoredPair*>> by_kind;
  for (const AnchoredPair& pair : summary.pairs) by_kind[pair.differs_in].push_back(&pair);
  md +=
      "| differs in | pairs | refused | raw median | raw p90 | raw within | anchored median | "
      "anchored p90 | anchored within | worse | worse beyond band |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [kind, pairs] : by_kind) {
    AnchoredPairsSummary part;
    for (const AnchoredPair* pair : pairs) part.pairs.push_back(*pair);
    summarize_pairs(part, target);
    md += "| " + kind + " | " + std::to_string(pairs.size()) + " | " +
          std::to_string(part.refused) + " | " + stats_row(part.raw) + " | " +
          stats_row(part.anchored) + " | " + std::to_string(part.worse) + " | " +
          std::to_string(part.worse_beyond_band) + " |\n";
  }
}

// A refusal without its numbers: "ran on another GPU or software stack (device.name)".
std::string refusal_reason(const std::string& message) {
  const std::size_t open = message.find(" (");
  if (open == std::string::npos) return message;
  const std::size_t colon = message.find(':', open);
  const std::size_t close = message.find(')', open);
  const std::size_t end = std::min(colon, close);
  return message.substr(0, end == std::string::npos ? open : end) + ")";
}

// How many pairs the rule refused, by reason, most frequent first.
void markdown_refusals(std::string& md, const AnchoredPairsSummary& summary) {
  std::map<std::string, int> counts;
  for (const AnchoredPair& pair : summary.pairs) {
    if (!pair.refusal.empty()) ++counts[refusal_reason(pair.refusal)];
  }
  if (counts.empty()) return;
  std::vector<std::pair<std::string, int>> rows(counts.begin(), counts.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  md += "\nRefused pairs, by reason:\n\n| the anchor ... | pairs |\n|---|---:|\n";
  for (const auto& [reason, count] : rows) {
    md += "| " + reason + " | " + std::to_string(count) + " |\n";
  }
}

// The pairs the rule makes worse by more than the target's band, worst first (at most 20).
void markdown_worst(std::string& md, const AnchoredPairsSummary& summary) {
  std::vector<const AnchoredPair*> worse;
  for (const AnchoredPair& pair : summary.pairs) {
    if (!pair.refusal.empty()) continue;
    const double points = std::abs(pair.anchored.relative_error_percent()) -
                          std::abs(pair.raw.relative_error_percent());
    if (points > pair.band_percent) worse.push_back(&pair);
  }
  if (worse.empty()) return;
  const auto points = [](const AnchoredPair* p) {
    return std::abs(p->anchored.relative_error_percent()) -
           std::abs(p->raw.relative_error_percent());
  };
  std::sort(worse.begin(), worse.end(),
            [&](const AnchoredPair* x, const AnchoredPair* y) { return points(x) > points(y); });
  md +=
      "\nPairs made worse by more than the target's band (worst first, at most 20):\n\n"
      "| anchor | target | differs in | raw | anchored | band |\n|---|---|---|---:|---:|---:|\n";
  for (std::size_t i = 0; i < worse.size() && i < 20; ++i) {
    const AnchoredPair& p = *worse[i];
    md += "| " + p.anchor_id + " | " + p.target_id + " | " + p.differs_in + " | " +
          cell("%+.2f%%", p.raw.relative_error_percent()) + " | " +
          cell("%+.2f%%", p.anchored.relative_error_percent()) + " | " +
          cell("%.1f%%", p.band_percent) + " |\n";
  }
}

}  // namespace

std::string anchored_pairs_markdown(const AnchoredPairsSummary& summary,
                                    const AccuracyTarget& peak_target, std::string_view h2) {
  const int scored = summary.raw.count;
  std::string md = "\n" + std::string(h2) + " Anchored on another run of the same model\n\n";
  md +=
      "Every ordered pair of scored runs above that are the same model (`config.model`) and "
      "differ in layout, batch, sequence length or recompute: the target's peak estimated raw "
      "and anchored on the other run's measured peak (and its static and max reserved figures "
      "where measured), memory-model.md \"Anchoring on a measured run\". " +
      std::to_string(summary.pairs.size()) + " pairs: " + std::to_string(scored) + " scored, " +
      std::to_string(summary.refused) + " refused by the rule.\n\n";
  md += "| peak of the target | pairs | median \\|rel. err\\| | p90 \\|rel. err\\| | within " +
        tolerance_text(peak_target) + " |\n|---|---:|---:|---:|---:|\n";
  md += "| raw | " + std::to_string(scored) + " | " + stats_row(summary.raw) + " |\n";
  md += "| anchored | " + std::to_string(scored) + " | " + stats_row(summary.anchored) + " |\n\n";
  md += "Anchoring made " + std::to_string(summary.worse) + " of " + std::to_string(scored) +
        " pairs worse, " + std::to_string(summary.worse_beyond_band) +
        " by more than the target verdict's error band (max(|low|, |high|), in percentage "
        "points of |relative error|).\n\n";
  markdown_by_kind(md, summary, peak_target);
  markdown_refusals(md, summary);
  markdown_worst(md, summary);
  return md;
}

std::string anchored_pairs_overall_markdown(const std::vector<NamedAnchoredPairs>& files) {
  std::string md =
      "\n## Anchored pairs, all files together\n\n"
      "The scored pairs of each file's \"Anchored on another run of the same model\" section "
      "above, and all of them at once (issue 26 asks the anchored error to be below the raw "
      "one over them all, and no pair worse by more than its verdict's band).\n\n"
      "| file | scored pairs | raw median | raw p90 | anchored median | anchored p90 | worse | "
      "worse beyond band |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  std::vector<Comparison> raw;
  std::vector<Comparison> anchored;
  int worse = 0;
  int beyond = 0;
  const auto row = [&md](const std::string& name, const ErrorStats& r, const ErrorStats& a,
                         int worse_pairs, int beyond_band) {
    md += "| " + name + " | " + std::to_string(r.count) + " | " +
          cell("%.2f%%", r.median_abs_relative_percent) + " | " +
          cell("%.2f%%", r.p90_abs_relative_percent) + " | " +
          cell("%.2f%%", a.median_abs_relative_percent) + " | " +
          cell("%.2f%%", a.p90_abs_relative_percent) + " | " + std::to_string(worse_pairs) + " | " +
          std::to_string(beyond_band) + " |\n";
  };
  for (const NamedAnchoredPairs& file : files) {
    row(file.name, file.summary->raw, file.summary->anchored, file.summary->worse,
        file.summary->worse_beyond_band);
    for (const AnchoredPair& pair : file.summary->pairs) {
      if (!pair.refusal.empty()) continue;
      raw.push_back(pair.raw);
      anchored.push_back(pair.anchored);
    }
    worse += file.summary->worse;
    beyond += file.summary->worse_beyond_band;
  }
  row("all files", summarize_errors(raw, kPeakTarget), summarize_errors(anchored, kPeakTarget),
      worse, beyond);
  return md;
}

}  // namespace megamem
