// The two small languages inside Megatron-LM flag values: the Python list expressions of
// --moe-layer-freq (megatron/training/arguments.py, _eval_pattern) and the stage strings of
// --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "megamem/expected.hpp"

namespace megamem::formats {

// The value of a pattern expression: Python's int or list of ints.
struct PatternValue {
  bool is_list = false;
  std::int64_t integer = 0;
  std::vector<std::int64_t> list;
};

// Evaluates an expression over the characters Megatron's _eval_pattern allows (digits, ',',
// '[', ']', '(', ')', '+', '*') with Python's semantics for int and list '+' and '*'.
// Errors name `field`.
Expected<PatternValue> evaluate_pattern_expression(std::string_view text, std::string_view field);

// Expands a layout string the way PipelineParallelLayerLayout.parse_str_to_list does (drop
// commas, unroll "(...)*n", then "x*n") and returns its stages ("|"-separated, letters E, L,
// t, m). Errors name `field`.
Expected<std::vector<std::string>> expand_pipeline_layout(std::string_view layout,
                                                          std::string_view field);

}  // namespace megamem::formats
