// Rule book, sequence topic: how sequence and context parallelism split the sequence.
#include "rule_book.hpp"

namespace megamem::rules {
namespace {

// megatron/core/tensor_parallel/mappings.py (_split_along_first_dim): sequence parallelism
// scatters the sequence evenly over TP ranks.
std::optional<Error> sequence_divides_by_tp(NormalizedConfig& n) {
  const int seq = n.config.training.seq_length;
  const int tp = n.config.parallel.tensor_parallel;
  if (!n.sequence_parallel || seq % tp == 0) return std::nullopt;
  return rule_error("seq_length",
                    "seq_length " + str(seq) + " is not divisible by tensor_model_parallel_size " +
                        str(tp) + " (sequence parallel splits the sequence)",
                    "megatron/core/tensor_parallel/mappings.py");
}

// megatron/core/utils.py get_batch_on_this_cp_rank: load-balanced context parallelism cuts
// the sequence into 2 x CP chunks.
std::optional<Error> sequence_divides_by_two_cp(NormalizedConfig& n) {
  const int seq = n.config.training.seq_length;
  const int cp = n.config.parallel.context_parallel;
  if (cp == 1 || seq % (2 * cp) == 0) return std::nullopt;
  return rule_error("seq_length",
                    "seq_length " + str(seq) + " is not divisible by 2 x context_parallel_size = " +
                        str(2 * cp) + " (load-balanced context parallel chunks)",
                    "megatron/core/utils.py get_batch_on_this_cp_rank");
}

constexpr Check kSequenceChecks[] = {sequence_divides_by_tp, sequence_divides_by_two_cp};

}  // namespace

const std::span<const Check> sequence_checks{kSequenceChecks};

}  // namespace megamem::rules
