// Layer placement over pipeline ranks and virtual chunks: layout strings, uneven first/last
// stages, and the even split with embedding/loss accounting.
#include "schedule/layer_placement.hpp"

#include <optional>
#include <string>
#include <utility>

namespace megamem {
namespace {

std::string str(std::int64_t value) { return std::to_string(value); }

// Expands one pass of "(body)*n" then one pass of "x*n", as the regular expressions in
// pipeline_parallel_layer_layout.py (parse_str_to_list) do. Commas are cosmetic; backslashes
// are shell escapes left in scripts ("Et*3\|\(tt\|\)*6L").
Expected<std::string> expand_layout(const std::string& layout) {
  // Real layouts have a few hundred stages and layers; refuse before allocating anything
  // larger, so a hostile link cannot make an estimate allocate gigabytes.
  constexpr std::size_t kMaxEntries = 100000;
  const Error too_long{"pipeline_model_parallel_layout",
                       "pipeline layout expands beyond " + str(kMaxEntries) + " entries"};
  std::string text;
  for (char ch : layout) {
    if (ch != ',' && ch != '\\' && ch != ' ' && ch != '"' && ch != '\'') text += ch;
  }
  auto read_count = [&](const std::string& s, std::size_t pos, std::size_t& end) -> long {
    end = pos;
    long count = 0;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') {
      count = count * 10 + (s[end] - '0');
      if (count > 100000) return -1;
      ++end;
    }
    return end == pos ? -1 : count;
  };
  // Pass 1: (body)*n, body without ')'.
  std::string pass1;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '(') {
      const std::size_t close = text.find(')', i + 1);
      if (close != std::string::npos && close > i + 1 && close + 1 < text.size() &&
          text[close + 1] == '*') {
        std::size_t end = 0;
        const long count = read_count(text, close + 2, end);
        if (count >= 0) {
          const std::string body = text.substr(i + 1, close - i - 1);
          if (pass1.size() + body.size() * static_cast<std::size_t>(count) > kMaxEntries) {
            return too_long;
          }
          for (long k = 0; k < count; ++k) pass1 += body;
          i = end;
          continue;
        }
      }
    }
    pass1 += text[i++];
  }
  // Pass 2: x*n.
  std::string pass2;
  for (std::size_t i = 0; i < pass1.size();) {
    if (i + 1 < pass1.size() && pass1[i + 1] == '*') {
      std::size_t end = 0;
      const long count = read_count(pass1, i + 2, end);
      if (count >= 0) {
        if (pass2.size() + static_cast<std::size_t>(count) > kMaxEntries) return too_long;
        pass2.append(static_cast<std::size_t>(count), pass1[i]);
        i = end;
        continue;
      }
    }
    pass2 += pass1[i++];
  }
  if (pass2.size() > kMaxEntries) return too_long;
  return pass2;
}

constexpr const char* kLayoutField = "pipeline_model_parallel_layout";

// The stages of an expanded layout and how many of each layer kind it holds.
struct LayoutStages {
  std::vector<StagePlacement> stages;
  int embeddings = 0, losses = 0, decoders = 0, mtps = 0;
};

// One stage per '|'-separated group of the expanded layout, in Megatron's stage order.
Expected<LayoutStages> parse_layout_stages(const std::string& expanded) {
  const char* field = kLayoutField;
  LayoutStages layout;
  layout.stages.emplace_back();
  for (char ch : expanded) {
    StagePlacement& stage = layout.stages.back();
    switch (ch) {
      case '|':
        layout.stages.emplace_back();
        break;
      case 'E':
        stage.has_embedding = true;
        ++layout.embeddings;
        break;
      case 'L':
        stage.has_loss = true;
        ++layout.losses;
        break;
      case 't':
        if (layout.mtps > 0) {
          return Error{field, "decoder layers ('t') must come before MTP layers ('m')"};
        }
        ++stage.num_layers;
        ++layout.decoders;
        break;
      case 'm':
        ++stage.num_mtp_layers;
        ++layout.mtps;
        break;
      default:
        return Error{field, std::string("invalid layer character '") + ch +
                                "' (known: E embedding, L loss, t decoder, m MTP, | stage)"};
    }
  }
  return layout;
}

// The layout must fill whole pipeline ranks and hold exactly the model's layers.
std::optional<Error> check_layout(const LayoutStages& layout, const ParallelConfig& par,
                                  const ModelConfig& model) {
  const char* field = kLayoutField;
  const auto pp = static_cast<std::size_t>(par.pipeline_parallel);
  if (layout.stages.size() % pp != 0) {
    return Error{field, "layout has " + str(static_cast<std::int64_t>(layout.stages.size())) +
                            " stages, not a multiple of pipeline_model_parallel_size " +
                            str(par.pipeline_parallel)};
  }
  if (layout.embeddings != 1 || !layout.stages.front().has_embedding) {
    return Error{field, "the layout must start with exactly one embedding 'E'"};
  }
  if (layout.losses != 1 || !layout.stages.back().has_loss) {
    return Error{field, "the layout must end with exactly one loss 'L'"};
  }
  if (layout.decoders != model.num_layers) {
    return Error{field, "layout has " + str(layout.decoders) +
                            " decoder layers ('t') but num_layers is " + str(model.num_layers)};
  }
  if (layout.mtps != model.mtp_num_layers) {
    return Error{field, "layout has " + str(layout.mtps) +
                            " MTP layers ('m') but mtp_num_layers is " + str(model.mtp_num_layers)};
  }
  return std::nullopt;
}

Expected<std::vector<StagePlacement>> place_from_layout(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  auto expanded = expand_layout(par.pipeline_layout);
  if (!expanded) return expanded.error();
  Expected<LayoutStages> layout = parse_layout_stages(*expanded);
  if (!layout) return layout.error();
  if (auto error = check_layout(*layout, par, normalized.config.model)) return *error;

  std::vector<StagePlacement> stages = std::move(layout).value().stages;
  const auto pp = static_cast<std::size_t>(par.pipeline_parallel);
  int offset = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    stages[s].pp_rank = static_cast<int>(s % pp);
    stages[s].vpp_chunk = static_cast<int>(s / pp);
    stages[s].first_layer = offset;
    offset += stages[s].num_layers;
  }
  return stages;
}

constexpr const char* kTransformerConfig = " (megatron/core/transformer/transformer_config.py)";
constexpr const char* kTransformerBlock = " (megatron/core/transformer/transformer_block.py)";

// Global index of each stage's first layer, in Megatron's stage order; the stages must hold
// exactly the model's layers.
Expected<std::vector<StagePlacement>> number_layers(std::vector<StagePlacement> stages,
                                                    int num_layers) {
  int offset = 0;
  for (StagePlacement& stage : stages) {
    stage.first_layer = offset;
    offset += stage.num_layers;
  }
  if (offset != num_layers) {
    return Error{"num_layers", "pipeline stages hold " + str(offset) + " layers, not num_layers " +
                                   str(num_layers)};
  }
  return stages;
}

// Decoder layers per pipeline rank with --decoder-first/last-pipeline-num-layers: the rest
// splits evenly over the middle stages (transformer_config.py __post_init__).
Expected<std::vector<int>> uneven_rank_layers(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  const int layers = normalized.config.model.num_layers;
  const int pp = par.pipeline_parallel;
  const int first = par.decoder_first_pipeline_num_layers;
  const int last = par.decoder_last_pipeline_num_layers;
  const char* field = "decoder_first_pipeline_num_layers";
  if (par.account_for_embedding_in_pipeline_split || par.account_for_loss_in_pipeline_split) {
    return Error{field, std::string("uneven pipeline stages cannot be combined with "
                                    "account_for_embedding/loss_in_pipeline_split") +
                            kTransformerConfig};
  }
  if (pp == 1) {
    return Error{field,
                 std::string("uneven first/last pipeline stages need pipeline_model_parallel_size "
                             "> 1") +
                     kTransformerConfig};
  }
  const int remaining = layers - first - last;
  const int middle = pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
  if (remaining < 0) {
    return Error{field, "first + last pipeline stage layers exceed num_layers " + str(layers) +
                            kTransformerConfig};
  }
  if (middle > 0 && remaining % middle != 0) {
    return Error{field, "the " + str(remaining) +
                            " layers left after the first/last stages do not divide over the " +
                            str(middle) + " middle pipeline stages" + kTransformerConfig};
  }
  if (middle == 0 && remaining != 0) {
    return Error{field, "first + last pipeline stage layers must add up to num_layers " +
                            str(layers) + " when there are no middle stages" + kTransformerConfig};
  }
  std::vector<int> rank_layers(static_cast<std::size_t>(pp), middle > 0 ? remaining / middle : 0);
  if (first > 0) rank_layers.front() = first;
  if (last > 0) rank_layers.back() = last;
  return rank_layers;
}

// Decoder-layer slots per pipeline rank of the even split: L (+ embedding, + loss when
// accounted as layers) over PP (transformer_block.py get_num_layers_to_build).
Expected<std::vector<int>> even_rank_layers(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  const int layers = normalized.config.model.num_layers;
  const int pp = par.pipeline_parallel;
  const bool accounted =
      par.account_for_embedding_in_pipeline_split || par.account_for_loss_in_pipeline_split;
  const int counted = layers + (par.account_for_embedding_in_pipeline_split ? 1 : 0) +
                      (par.account_for_loss_in_pipeline_split ? 1 : 0);
  if (counted % pp != 0) {
    return Error{"num_layers",
                 "num_layers " + str(layers) +
                     (accounted ? " (plus the embedding/loss accounted as layers)" : "") +
                     " is not divisible by pipeline_model_parallel_size " + str(pp) +
                     kTransformerBlock};
  }
  return std::vector<int>(static_cast<std::size_t>(pp), counted / pp);
}

}  // namespace

Expected<std::vector<StagePlacement>> place_layers(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  if (!par.pipeline_layout.empty()) return place_from_layout(normalized);
  const bool uneven =
      par.decoder_first_pipeline_num_layers > 0 || par.decoder_last_pipeline_num_layers > 0;
  Expected<std::vector<int>> rank_layers =
      uneven ? uneven_rank_layers(normalized) : even_rank_layers(normalized);
  if (!rank_layers) return rank_layers.error();

  const int pp = par.pipeline_parallel;
  const int vpp = par.virtual_stages_per_pipeline_rank;
  std::vector<StagePlacement> stages(static_cast<std::size_t>(pp * vpp));
  for (int r = 0; r < pp; ++r) {
    const int slots = (*rank_layers)[static_cast<std::size_t>(r)];
    if (slots % vpp != 0) {
      return Error{"virtual_stages_per_pipeline_rank",
                   "pipeline rank " + str(r) + " has " + str(slots) +
                       " layer slots, not divisible by " + str(vpp) + " virtual stages" +
                       kTransformerBlock};
    }
    for (int j = 0; j < vpp; ++j) {
      StagePlacement& stage = stages[static_cast<std::size_t>(j * pp + r)];
      stage.pp_rank = r;
      stage.vpp_chunk = j;
      stage.num_layers = slots / vpp;
      stage.has_embedding = r == 0 && j == 0;
      stage.has_loss = r == pp - 1 && j == vpp - 1;
      // The embedding (loss) takes one layer slot of the first (last) stage when accounted.
      if (par.account_for_embedding_in_pipeline_split && stage.has_embedding) --stage.num_layers;
      if (par.account_for_loss_in_pipeline_split && stage.has_loss) --stage.num_layers;
      if (stage.num_layers < 0) {
        return Error{"num_layers", "not enough layers for the embedding/loss accounted stages"};
      }
      if (stage.has_loss) stage.num_mtp_layers = normalized.config.model.mtp_num_layers;
    }
  }
  return number_layers(std::move(stages), normalized.config.model.num_layers);
}

}  // namespace megamem
