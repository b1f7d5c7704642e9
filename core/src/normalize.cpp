// normalize(): resolves Megatron's derived defaults, places the layers, and runs the rule book
// (core/src/rules, one file per topic) on the result.
#include <string>

#include "megamem/estimate.hpp"
#include "rules/rule_book.hpp"

namespace megamem {

namespace rules {

std::string str(std::int64_t value) { return std::to_string(value); }

Error rule_error(const char* field, const std::string& message, const char* source) {
  return Error{field, message + " (" + source + ")"};
}

std::optional<Error> must_divide(const char* field, const char* name, std::int64_t value,
                                 const char* divisor_name, std::int64_t divisor,
                                 const char* source) {
  if (value % divisor == 0) return std::nullopt;
  return rule_error(field,
                    std::string(name) + " " + str(value) + " is not divisible by " + divisor_name +
                        " " + str(divisor),
                    source);
}

void policy_warning(NormalizedConfig& n, const std::string& message, const char* source) {
  n.warnings.push_back(message + " (" + source + ")");
}

}  // namespace rules

Expected<NormalizedConfig> normalize(const Config& input) {
  // Topic order matters: each reads what the earlier ones resolved (defaults, DP, stages).
  static constexpr rules::Check kTopics[] = {
      rules::check_model,
      rules::check_hybrid_pattern,
      rules::check_tensor_parallel,
      rules::check_parallel_groups,
      rules::check_moe,
      rules::resolve_layer_kinds,
      rules::check_sequence,
      rules::check_pipeline_layout,
      rules::check_micro_batches,
      rules::check_recompute_offload,
      rules::check_precision,
  };
  NormalizedConfig out;
  out.config = input;
  if (std::optional<Error> error = rules::run_checks(kTopics, out)) return *error;
  return out;
}

}  // namespace megamem
