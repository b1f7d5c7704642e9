// Real launch scripts (tests/cli/fixtures/launch_scripts, sources in its README) read to the
// run they launch. Native only: the wasm tests do not read files.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "megamem/launch_script.hpp"

using namespace megamem;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(MEGAMEM_CLI_FIXTURES) + "/launch_scripts/" + name);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

MegatronLaunch launch(const std::string& name, std::int64_t vocab_size = 0) {
  const Expected<MegatronLaunch> parsed =
      parse_megatron_launch(fixture(name), {.vocab_size = vocab_size});
  if (!parsed) FAIL(parsed.error().field + ": " + parsed.error().message);
  return *parsed;
}

}  // namespace

TEST_CASE("Megatron-LM's Llama-3-8B FP8 example reads to its run") {
  const MegatronLaunch run = launch("train_llama3_8b_h100_fp8.sh");
  const Config& c = run.args.config;
  CHECK(run.script.program == "pretrain_gpt.py");
  CHECK(c.parallel.world_size == 8);  // GPUS_PER_NODE=8 x NUM_NODES=1
  CHECK(c.model.num_layers == 32);    // $NUM_LAYERS
  CHECK(c.model.hidden_size == 4096);
  CHECK(c.model.ffn_hidden_size == 14336);
  CHECK(c.model.num_query_groups == 8);
  CHECK(c.model.vocab_size == 128256);  // the MOCK branch's --vocab-size
  CHECK(c.training.seq_length == 8192);
  CHECK(c.training.params_dtype == DType::bf16);
  CHECK(c.training.fp8_recipe != Fp8Recipe::none);  // DTYPE_ARGS+=("--fp8-format hybrid" ...)
  CHECK(c.training.fp8_param_gather);
  CHECK(c.model.hidden_dropout == 0.0);
  CHECK(c.parallel.tensor_parallel == 1);
  CHECK(c.parallel.pipeline_parallel == 1);      // its flag is commented out inside the array
  CHECK(c.optimizer.use_distributed_optimizer);  // TRAINING_ARGS+=("${DDP_ARGS[@]}")
  // The mock-data branch is taken (TOKENIZER_ARG defaults to MOCK): its line is used.
  CHECK(std::find(run.script.used_lines.begin(), run.script.used_lines.end(), 125) !=
        run.script.used_lines.end());
  CHECK(run.script.warnings ==
        std::vector<std::string>{"line 44: $PWD is not set in the paste; read as empty"});
}

TEST_CASE("Megatron-LM's GPT-3 175B example reads to its run; script arguments are warnings") {
  const MegatronLaunch run = launch("train_gpt3_175b_distributed.sh", 50257);
  const Config& c = run.args.config;
  CHECK(c.parallel.world_size == 8);
  CHECK(c.model.num_layers == 96);
  CHECK(c.model.hidden_size == 12288);
  CHECK(c.model.num_attention_heads == 96);
  CHECK(c.parallel.tensor_parallel == 8);
  CHECK(c.parallel.pipeline_parallel == 16);
  CHECK(c.training.params_dtype == DType::fp16);
  CHECK(c.training.global_batch_size == 1536);
  CHECK(run.script.ignored_lines == 3);  // #!/bin/bash is a comment; export, WORLD_SIZE, ...
  CHECK(run.script.warnings.front() == "line 15: $1 is not set in the paste; read as empty");
  CHECK(used_lines_text(run.script).rfind("used lines 7, 9-11, 15-19, 21-26, ", 0) == 0);
}

TEST_CASE("Megatron-LM's Mixtral 8x7B example reads to its run") {
  const MegatronLaunch run = launch("train_mixtral_8x7b_distributed.sh", 32000);
  const Config& c = run.args.config;
  CHECK(c.parallel.world_size == 8);  // NNODES=${SLURM_NNODES:-"1"}
  CHECK(c.model.num_experts == 8);
  CHECK(c.model.moe_router_topk == 2);
  CHECK(c.parallel.pipeline_parallel == 4);
  CHECK(c.parallel.expert_parallel == 8);
  CHECK(c.optimizer.use_distributed_optimizer);
  // `if [ -n "${WANDB_API_KEY}" ]`: the variable is unset, so the branch is not read.
  CHECK(std::find(run.script.used_lines.begin(), run.script.used_lines.end(), 104) ==
        run.script.used_lines.end());
}

TEST_CASE("slime's Qwen3-4B scripts: MODEL_ARGS arrays read; slime's defaults apply") {
  const Expected<LaunchScript> script = read_launch_script(fixture("slime-qwen3-4B.sh"));
  REQUIRE(script.has_value());
  CHECK(script->program == "train.py");
  CHECK_FALSE(script->world_size.has_value());  // ray, not torchrun
  const std::vector<std::string>& words = script->megatron_words;
  const auto after = [&](const std::string& flag) {
    const auto it = std::find(words.begin(), words.end(), flag);
    return it == words.end() || it + 1 == words.end() ? std::string() : *(it + 1);
  };
  CHECK(after("--hidden-size") == "2560");
  CHECK(after("--rotary-base") == "1000000");  // "${MODEL_ARGS_ROTARY_BASE:-1000000}"
  CHECK(after("--tensor-model-parallel-size") == "2");
  CHECK(after("--actor-num-gpus-per-node") == "8");  // NUM_GPUS=8 after `[ -z "$NUM_GPUS" ]`
  CHECK(std::find(script->warnings.begin(), script->warnings.end(),
                  "line 54: `source` is not followed (the paste is read alone)") !=
        script->warnings.end());
  // slime/backends/megatron_utils/arguments.py: bf16, the distributed optimizer, and with
  // --use-dynamic-batch-size micro-batches packed to --max-tokens-per-gpu (9216 here); the
  // world is the actor's GPUs (--actor-num-gpus-per-node 8, one node).
  const Expected<MegatronLaunch> parsed = parse_megatron_launch(fixture("slime-qwen3-4B.sh"), {});
  REQUIRE(parsed.has_value());
  const Config& c = parsed->args.config;
  CHECK(c.parallel.world_size == 8);
  CHECK(c.training.params_dtype == DType::bf16);
  CHECK(c.optimizer.use_distributed_optimizer);
  CHECK(c.training.micro_batch_size == 1);
  CHECK(c.training.seq_length == 9216);
}
