// The rule book: every Megatron-Core validity rule megamem knows, as short named checks grouped
// by topic (one file each under core/src/rules). normalize() runs them in order; each check
// reads the NormalizedConfig resolved so far and either
//   * returns an Error naming the field, the rule and the Megatron-LM file it comes from, when
//     Megatron-Core would fail in the model or the kernels, or
//   * appends a warning to NormalizedConfig::warnings, when the rule is one launcher's or one
//     version's policy (an arguments.py assert another release or launcher does not make):
//     the estimate still comes.
// Parsers (core/src/formats) report only malformed text; the rules live here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "megamem/estimate_types.hpp"
#include "megamem/expected.hpp"

namespace megamem::rules {

using Check = std::optional<Error> (*)(NormalizedConfig&);

// Topics, in the order normalize() runs them (later topics read what earlier ones resolved).
extern const std::span<const Check> model_checks;              // rules/model.cpp
extern const std::span<const Check> hybrid_pattern_checks;     // rules/hybrid.cpp
extern const std::span<const Check> tensor_parallel_checks;    // rules/tensor_parallel.cpp
extern const std::span<const Check> parallel_groups_checks;    // rules/tensor_parallel.cpp
extern const std::span<const Check> moe_checks;                // rules/moe.cpp
extern const std::span<const Check> layer_kind_checks;         // rules/hybrid.cpp
extern const std::span<const Check> sequence_checks;           // rules/sequence.cpp
extern const std::span<const Check> micro_batches_checks;      // rules/micro_batches.cpp
extern const std::span<const Check> pipeline_layout_checks;    // rules/pipeline_layout.cpp
extern const std::span<const Check> recompute_offload_checks;  // rules/recompute_offload.cpp
extern const std::span<const Check> precision_checks;          // rules/precision.cpp

// Helpers shared by the topic files.
std::string str(std::int64_t value);
// "<message> (<source>)": the rule as Megatron states it and the file it lives in.
Error rule_error(const char* field, const std::string& message, const char* source);
// The rule "<name> <value> is not divisible by <divisor_name> <divisor>", unless it divides.
std::optional<Error> must_divide(const char* field, const char* name, std::int64_t value,
                                 const char* divisor_name, std::int64_t divisor,
                                 const char* source);
// A policy of one launcher or version: recorded as a warning, the estimate goes on.
void policy_warning(NormalizedConfig& n, const std::string& message, const char* source);
// The usual policy: one Megatron-LM's arguments.py asserts (validate_args).
inline void arguments_policy(NormalizedConfig& n, const std::string& message) {
  policy_warning(n, message, "megatron/training/arguments.py validate_args");
}
// A check's usual ends: the rule's Error when `breaks`, a recorded warning when `applies`
// (the estimate goes on). Both return what a Check returns.
inline std::optional<Error> error_when(bool breaks, const char* field, const std::string& message,
                                       const char* source) {
  if (!breaks) return std::nullopt;
  return rule_error(field, message, source);
}
inline std::optional<Error> warn_when(NormalizedConfig& n, bool applies, const std::string& message,
                                      const char* source) {
  if (applies) policy_warning(n, message, source);
  return std::nullopt;
}
// Runs checks in order; the first Error stops.
inline std::optional<Error> run_checks(std::span<const Check> checks, NormalizedConfig& n) {
  for (const Check check : checks) {
    if (std::optional<Error> error = check(n)) return error;
  }
  return std::nullopt;
}

}  // namespace megamem::rules
