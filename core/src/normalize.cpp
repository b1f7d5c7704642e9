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
  const std::span<const rules::Check> topics[] = {
      rules::model_checks,
      rules::hybrid_pattern_checks,
      rules::tensor_parallel_checks,
      rules::parallel_groups_checks,
      rules::moe_checks,
      rules::layer_kind_checks,
      rules::sequence_checks,
      rules::pipeline_layout_checks,
      rules::micro_batches_checks,
      rules::recompute_offload_checks,
      rules::precision_checks,
  };
  NormalizedConfig out;
  out.config = input;
  for (const std::span<const rules::Check> checks : topics) {
    if (std::optional<Error> error = rules::run_checks(checks, out)) return *error;
  }
  return out;
}

}  // namespace megamem
