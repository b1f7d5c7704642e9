// Layer placement over pipeline ranks and virtual chunks: layout strings, uneven first/last
// stages, and the even split with embedding/loss accounting.
#include "layer_placement.hpp"

#include <string>

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

Expected<std::vector<StagePlacement>> place_from_layout(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  const ModelConfig& model = normalized.config.model;
  const char* field = "pipeline_model_parallel_layout";
  auto expanded = expand_layout(par.pipeline_layout);
  if (!expanded) return expanded.error();

  std::vector<StagePlacement> stages(1);
  int embeddings = 0, losses = 0, decoders = 0, mtps = 0;
  for (char ch : *expanded) {
    StagePlacement& stage = stages.back();
    switch (ch) {
      case '|':
        stages.emplace_back();
        break;
      case 'E':
        stage.has_embedding = true;
        ++embeddings;
        break;
      case 'L':
        stage.has_loss = true;
        ++losses;
        break;
      case 't':
        if (mtps > 0) return Error{field, "decoder layers ('t') must come before MTP layers ('m')"};
        ++stage.num_layers;
        ++decoders;
        break;
      case 'm':
        ++stage.num_mtp_layers;
        ++mtps;
        break;
      default:
        return Error{field, std::string("invalid layer character '") + ch +
                                "' (known: E embedding, L loss, t decoder, m MTP, | stage)"};
    }
  }
  const auto pp = static_cast<std::size_t>(par.pipeline_parallel);
  if (stages.size() % pp != 0) {
    return Error{field, "layout has " + str(static_cast<std::int64_t>(stages.size())) +
                            " stages, not a multiple of pipeline_model_parallel_size " +
                            str(par.pipeline_parallel)};
  }
  if (embeddings != 1 || !stages.front().has_embedding) {
    return Error{field, "the layout must start with exactly one embedding 'E'"};
  }
  if (losses != 1 || !stages.back().has_loss) {
    return Error{field, "the layout must end with exactly one loss 'L'"};
  }
  if (decoders != model.num_layers) {
    return Error{field, "layout has " + str(decoders) + " decoder layers ('t') but num_layers is " +
                            str(model.num_layers)};
  }
  if (mtps != model.mtp_num_layers) {
    return Error{field, "layout has " + str(mtps) + " MTP layers ('m') but mtp_num_layers is " +
                            str(model.mtp_num_layers)};
  }
  int offset = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    stages[s].pp_rank = static_cast<int>(s % pp);
    stages[s].vpp_chunk = static_cast<int>(s / pp);
    stages[s].first_layer = offset;
    offset += stages[s].num_layers;
  }
  return stages;
}

}  // namespace

Expected<std::vector<StagePlacement>> place_layers(const NormalizedConfig& normalized) {
  const ParallelConfig& par = normalized.config.parallel;
  const ModelConfig& model = normalized.config.model;
  if (!par.pipeline_layout.empty()) return place_from_layout(normalized);

  const int pp = par.pipeline_parallel;
  const int vpp = par.virtual_stages_per_pipeline_rank;
  const int first = par.decoder_first_pipeline_num_layers;
  const int last = par.decoder_last_pipeline_num_layers;
  const bool uneven = first > 0 || last > 0;
  const bool account_embedding = par.account_for_embedding_in_pipeline_split;
  const bool account_loss = par.account_for_loss_in_pipeline_split;

  // Decoder layers per pipeline rank (all its chunks together).
  std::vector<int> rank_layers(static_cast<std::size_t>(pp));
  if (uneven) {
    if (account_embedding || account_loss) {
      return Error{"decoder_first_pipeline_num_layers",
                   "uneven pipeline stages cannot be combined with "
                   "account_for_embedding/loss_in_pipeline_split"};
    }
    if (pp == 1) {
      return Error{"decoder_first_pipeline_num_layers",
                   "uneven first/last pipeline stages need pipeline_model_parallel_size > 1"};
    }
    int remaining = model.num_layers - first - last;
    const int middle = pp - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    if (remaining < 0) {
      return Error{"decoder_first_pipeline_num_layers",
                   "first + last pipeline stage layers exceed num_layers " + str(model.num_layers)};
    }
    // transformer_block.py: the leftover layers must split evenly over the middle stages.
    if (middle > 0 && remaining % middle != 0) {
      return Error{"decoder_first_pipeline_num_layers",
                   "the " + str(remaining) +
                       " layers left after the first/last stages do not "
                       "divide over the " +
                       str(middle) + " middle pipeline stages"};
    }
    if (middle == 0 && remaining != 0) {
      return Error{"decoder_first_pipeline_num_layers",
                   "first + last pipeline stage layers must add up to num_layers " +
                       str(model.num_layers) + " when there are no middle stages"};
    }
    const int per_middle = middle > 0 ? remaining / middle : 0;
    for (int r = 0; r < pp; ++r) rank_layers[static_cast<std::size_t>(r)] = per_middle;
    if (first > 0) rank_layers.front() = first;
    if (last > 0) rank_layers.back() = last;
  } else {
    const int counted = model.num_layers + (account_embedding ? 1 : 0) + (account_loss ? 1 : 0);
    if (counted % pp != 0) {
      return Error{
          "num_layers",
          "num_layers " + str(model.num_layers) +
              (account_embedding || account_loss ? " (plus the embedding/loss accounted as layers)"
                                                 : "") +
              " is not divisible by pipeline_model_parallel_size " + str(pp)};
    }
    for (int& layers : rank_layers) layers = counted / pp;
  }

  std::vector<StagePlacement> stages(static_cast<std::size_t>(pp * vpp));
  for (int r = 0; r < pp; ++r) {
    if (rank_layers[static_cast<std::size_t>(r)] % vpp != 0) {
      return Error{"virtual_stages_per_pipeline_rank",
                   "pipeline rank " + str(r) + " has " +
                       str(rank_layers[static_cast<std::size_t>(r)]) +
                       " layer slots, not divisible by " + str(vpp) + " virtual stages"};
    }
    for (int j = 0; j < vpp; ++j) {
      StagePlacement& stage = stages[static_cast<std::size_t>(j * pp + r)];
      stage.pp_rank = r;
      stage.vpp_chunk = j;
      stage.num_layers = rank_layers[static_cast<std::size_t>(r)] / vpp;
      stage.has_embedding = r == 0 && j == 0;
      stage.has_loss = r == pp - 1 && j == vpp - 1;
      // The embedding (loss) takes one layer slot of the first (last) stage when accounted.
      if (account_embedding && stage.has_embedding) --stage.num_layers;
      if (account_loss && stage.has_loss) --stage.num_layers;
      if (stage.num_layers < 0) {
        return Error{"num_layers", "not enough layers for the embedding/loss accounted stages"};
      }
      if (stage.has_loss) stage.num_mtp_layers = model.mtp_num_layers;
    }
  }
  int offset = 0;
  for (StagePlacement& stage : stages) {
    stage.first_layer = offset;
    offset += stage.num_layers;
  }
  if (offset != model.num_layers) {
    return Error{"num_layers", "pipeline stages hold " + str(offset) + " layers, not num_layers " +
                                   str(model.num_layers)};
  }
  return stages;
}

}  // namespace megamem
