// The launch-script reader (launch_script.hpp): each bash construct a pasted Megatron-LM
// launch script uses, the lines it reports, and what is a warning or an error. One TEST_CASE
// per rule; the real scripts are in test_launch_script_fixtures.cpp.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "megamem/launch_script.hpp"
#include "messages.hpp"

using namespace megamem;

namespace {

using Words = std::vector<std::string>;

LaunchScript read(const std::string& text) {
  const Expected<LaunchScript> script = read_launch_script(text);
  if (!script) FAIL(script.error().field + ": " + script.error().message);
  return *script;
}

Error read_error(const std::string& text) {
  const Expected<LaunchScript> script = read_launch_script(text);
  REQUIRE_FALSE(script.has_value());
  return script.error();
}

bool has_warning(const LaunchScript& script, const std::string& text) {
  for (const std::string& warning : script.warnings) {
    if (warning.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("a bare list of flags reads as it is") {
  const LaunchScript script = read("--num-layers 32 --hidden-size 4096 --bf16");
  CHECK(script.megatron_words == Words{"--num-layers", "32", "--hidden-size", "4096", "--bf16"});
  CHECK(script.program.empty());
  CHECK(script.used_lines == std::vector<int>{1});
  CHECK(script.warnings.empty());
}

TEST_CASE("one flag per line without backslashes continues the command") {
  const LaunchScript script = read("--num-layers 32\n--hidden-size 4096\n\n--bf16\n");
  CHECK(script.megatron_words == Words{"--num-layers", "32", "--hidden-size", "4096", "--bf16"});
  CHECK(script.used_lines == std::vector<int>{1, 2, 4});
}

TEST_CASE("comments: whole lines and trailing, not inside quotes or words") {
  const LaunchScript script = read(
      "# train it\n"
      "python pretrain_gpt.py --num-layers 32 \\\n"
      "  --moe-layer-freq '[1]*4 # not a comment' \\\n"
      "  --wandb-exp-name run#3 # a comment\n");
  CHECK(script.program == "pretrain_gpt.py");
  CHECK(script.megatron_words == Words{"--num-layers", "32", "--moe-layer-freq",
                                       "[1]*4 # not a comment", "--wandb-exp-name", "run#3"});
  CHECK(script.used_lines == std::vector<int>{2, 3, 4});
  CHECK(script.ignored_lines == 0);
}

TEST_CASE("a Python expression after a flag needs no quotes (as pasted from a log)") {
  const LaunchScript script = read(
      "ARGS=(--moe-layer-freq ([0]*1+[1]*3))\n"
      "python pretrain_gpt.py --num-layers 4 ${ARGS[@]} --pattern=([1]*2) \\\n"
      "  --moe-layer-freq ([0]*1+[1]*3)\n"
      "(cd /tmp && ls)\n");
  CHECK(script.megatron_words == Words{"--num-layers", "4", "--moe-layer-freq", "([0]*1+[1]*3)",
                                       "--pattern=([1]*2)", "--moe-layer-freq", "([0]*1+[1]*3)"});
}

TEST_CASE("backslash continuations join lines, also with CRLF line ends") {
  const LaunchScript script =
      read("torchrun pretrain_gpt.py \\\r\n  --num-layers 2\\\n4 \\\n  --bf16\r\n");
  CHECK(script.megatron_words == Words{"--num-layers", "24", "--bf16"});
}

TEST_CASE("variables defined in the paste expand: plain, exported, braced, quoted") {
  const LaunchScript script = read(
      "TP=8\n"
      "export PP=4\n"
      "GPT_ARGS=\"--num-layers 80 --hidden-size 8192\"\n"
      "unused=1\n"
      "python pretrain_gpt.py ${GPT_ARGS} --tensor-model-parallel-size $TP "
      "--pipeline-model-parallel-size ${PP}\n");
  CHECK(script.megatron_words == Words{"--num-layers", "80", "--hidden-size", "8192",
                                       "--tensor-model-parallel-size", "8",
                                       "--pipeline-model-parallel-size", "4"});
  CHECK(script.used_lines == std::vector<int>{1, 2, 3, 5});
  CHECK(script.ignored_lines == 1);
  CHECK(script.warnings.empty());
}

TEST_CASE("a quoted variable holding several flags is read as flags, with a warning") {
  const LaunchScript script = read(
      "GPT_ARGS=\"--num-layers 80 --hidden-size 8192\"\n"
      "python pretrain_gpt.py \"${GPT_ARGS}\"\n");
  CHECK(script.megatron_words == Words{"--num-layers", "80", "--hidden-size", "8192"});
  CHECK(has_warning(script, "line 2: \"--num-layers 80"));
}

TEST_CASE("bash arrays: ( ... ) over lines with comments, +=, and [@] quoted or not") {
  const LaunchScript script = read(
      "MODEL_ARGS=(\n"
      "  --num-layers 80  # eighty\n"
      "  # --hidden-size 1\n"
      "  --step-batch-size-schedule \"0:16 2.4B:320\"\n"
      ")\n"
      "MODEL_ARGS+=( --hidden-size 8192 )\n"
      "EMPTY=()\n"
      "python pretrain_gpt.py \"${MODEL_ARGS[@]}\" \"${EMPTY[@]}\" ${MODEL_ARGS[0]}\n");
  CHECK(script.megatron_words == Words{"--num-layers", "80", "--step-batch-size-schedule",
                                       "0:16 2.4B:320", "--hidden-size", "8192", "--num-layers"});
  CHECK(script.used_lines == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
}

TEST_CASE("unquoted array elements split on blanks, as bash does") {
  const LaunchScript script = read(
      "DTYPE_ARGS=()\n"
      "DTYPE_ARGS+=(\"--fp8-format hybrid\" \"--fp8-param-gather\")\n"
      "python pretrain_gpt.py ${DTYPE_ARGS[@]} --num-layers 2\n");
  CHECK(script.megatron_words ==
        Words{"--fp8-format", "hybrid", "--fp8-param-gather", "--num-layers", "2"});
}

TEST_CASE("the command with the most Megatron flags is the one read") {
  const LaunchScript script = read(
      "echo --num-layers 1\n"
      "mkdir -p /tmp/ckpt\n"
      "ARGS=\"--num-layers 24 --hidden-size 1024\"\n"
      "torchrun --nproc_per_node 8 pretrain_gpt.py ${ARGS} > log.txt 2>&1\n"
      "python tools/report.py --log log.txt\n");
  CHECK(script.program == "pretrain_gpt.py");
  CHECK(script.megatron_words == Words{"--num-layers", "24", "--hidden-size", "1024"});
  CHECK(script.used_lines == std::vector<int>{3, 4});
  CHECK(script.ignored_lines == 3);
  CHECK(script.world_size == 8);
}

TEST_CASE("the launcher's --nproc_per_node x --nnodes is the world size") {
  const LaunchScript script = read(
      "GPUS_PER_NODE=8\n"
      "DISTRIBUTED_ARGS=(--nproc_per_node $GPUS_PER_NODE --nnodes=4 --master_port 6000)\n"
      "torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py --num-layers 2\n");
  CHECK(script.world_size == 32);
  CHECK(script.megatron_words == Words{"--num-layers", "2"});
  const LaunchScript elastic =
      read("torchrun --nproc_per_node 8 --nnodes 1:4 pretrain_gpt.py --num-layers 2\n");
  CHECK_FALSE(elastic.world_size.has_value());
  CHECK(has_warning(elastic, "line 1: the launcher's --nproc_per_node 8 --nnodes 1:4"));
}

TEST_CASE("defaults: ${1:-x}, ${NAME-x}, ${NAME:+x}; the script's own arguments are unset") {
  const LaunchScript script = read(
      "CKPT=${1:-\"checkpoints/llama3\"}\n"
      "LAYERS=${LAYERS:-32}\n"
      "EXTRA=${LAYERS:+--bf16}\n"
      "python pretrain_gpt.py --num-layers $LAYERS --save $CKPT $EXTRA --load $2\n");
  CHECK(script.megatron_words ==
        Words{"--num-layers", "32", "--save", "checkpoints/llama3", "--bf16", "--load"});
  CHECK(has_warning(script, "line 4: $2 is not set in the paste; read as empty"));
  CHECK(script.warnings.size() == 1);
}

TEST_CASE("${X:}, ${} and ${X?} are warnings read as empty, not a crash (fuzz_launch_script)") {
  const LaunchScript script = read(
      "A=${HOME:}\nB=\"${}\"\nC=${HOME?}\n"
      "python pretrain_gpt.py --num-layers 2 --save x$A$B$C\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--save", "x"});
  CHECK(has_warning(script, "line 1: ${HOME:} is not supported; read as empty"));
  CHECK(has_warning(script, "line 2: ${} is not supported; read as empty"));
  CHECK(has_warning(script, "line 3: ${HOME?} is not supported; read as empty"));
}

TEST_CASE("arithmetic of integers and variables is evaluated, anything else is a warning") {
  const LaunchScript script = read(
      "GPUS=8\nNODES=4\n"
      "WORLD=$(($GPUS*NODES))\n"
      "HALF=$(( (WORLD - 2) / 2 % 7 ))\n"
      "BAD=$((2**3))\n"
      "python pretrain_gpt.py --num-layers $WORLD --hidden-size $HALF --seq-length x$BAD\n");
  CHECK(script.megatron_words ==
        Words{"--num-layers", "32", "--hidden-size", "1", "--seq-length", "x"});
  CHECK(has_warning(script, "line 5: $((2**3)) is not integer arithmetic"));
  const LaunchScript zero = read("python pretrain_gpt.py --num-layers $((1/0))x\n");
  CHECK(zero.megatron_words == Words{"--num-layers", "x"});
}

TEST_CASE("command substitution is not run: a warning naming the line, read as empty") {
  const LaunchScript script = read(
      "\n"
      "NODES=$(scontrol show hostnames | wc -l)\n"
      "STAMP=`date`\n"
      "python pretrain_gpt.py --num-layers 2 --nnodes-seen \"$NODES\" --tag $STAMP\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--nnodes-seen", "", "--tag"});
  CHECK(has_warning(script, "line 2: command substitution $(scontrol show hostnames"));
  CHECK(has_warning(script, "line 3: command substitution `date`"));
  CHECK(script.warnings.front().rfind("line 2:", 0) == 0);
}

TEST_CASE("unset variables are warnings naming the line of the word") {
  const LaunchScript script =
      read("python pretrain_gpt.py \\\n  --num-layers 2 \\\n  --save $CKPT\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--save"});
  CHECK(script.warnings == Words{"line 3: $CKPT is not set in the paste; read as empty"});
}

TEST_CASE("if/elif/else follows conditions on strings and integers") {
  const LaunchScript script = read(
      "DTYPE=bf16\nPP=4\n"
      "if [[ \"$DTYPE\" == \"fp8\" ]]; then\n  ARGS=(--fp8-format hybrid)\n"
      "elif [ $PP -gt 2 ] && [ -n \"$DTYPE\" ]; then\n  ARGS=(--bf16)\n"
      "else\n  ARGS=(--fp16)\nfi\n"
      "python pretrain_gpt.py --num-layers 2 ${ARGS[@]}\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--bf16"});
  CHECK(script.used_lines == std::vector<int>{1, 2, 3, 5, 6, 10});
  CHECK(script.warnings.empty());
}

TEST_CASE("a condition that cannot be evaluated reads its first branch, with a warning") {
  const LaunchScript script = read(
      "if [ -f /data/tokenizer.model ]; then\n  TOK=--vocab-size\nelse\n  TOK=--bf16\nfi\n"
      "python pretrain_gpt.py --num-layers 2 $TOK 32000\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--vocab-size", "32000"});
  CHECK(has_warning(script, "line 1: the condition is not evaluated; its first branch is read"));
}

TEST_CASE("loops and source are warnings; their bodies are read once") {
  const LaunchScript script = read(
      "source ./env.sh\n"
      "for i in 1 2; do\n  ARGS+=(--bf16)\ndone\n"
      "python pretrain_gpt.py --num-layers 2 ${ARGS[@]}\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--bf16"});
  CHECK(has_warning(script, "line 1: `source` is not followed"));
  CHECK(has_warning(script, "line 2: `for` is not followed"));
}

TEST_CASE("UTF-8 in comments and values passes through unharmed") {
  const LaunchScript script = read(
      "# 训练 Qwen3：张量并行 8，流水线并行 4\n"
      "NAME=\"实验-α\"  # 备注\n"
      "python pretrain_gpt.py --num-layers 2 --wandb-exp-name \"$NAME\"\n");
  CHECK(script.megatron_words == Words{"--num-layers", "2", "--wandb-exp-name", "实验-α"});
  CHECK(script.used_lines == std::vector<int>{2, 3});
}

TEST_CASE("errors: an unterminated quote names its line; no flags at all") {
  CHECK(read_error("A=1\nB=\"open\n\npython x.py").message.find("line 2: unterminated \"") == 0);
  CHECK(read_error("X=$(echo\n").message.find("line 1: unterminated $(") == 0);
  const Error none = read_error("echo hello # --num-layers 2\n");
  CHECK(none.field == "megatron_args");
  CHECK(none.message.find("no command in the paste passes Megatron-LM flags") == 0);
}

TEST_CASE("a runaway expansion is an error naming the line, not a hang") {
  std::string text = "A=(x)\n";
  for (int i = 0; i < 40; ++i) text += "A+=(\"${A[@]}\" \"${A[@]}\")\n";
  text += "python pretrain_gpt.py --num-layers 2\n";
  const Error error = read_error(text);
  CHECK(error.message.find("expand to more than 64 MiB") != std::string::npos);
  CHECK(error.message.rfind("line ", 0) == 0);
}

TEST_CASE("used_lines_text names ranges and the ignored count") {
  LaunchScript script;
  script.used_lines = {12, 13, 14, 20, 22, 23};
  script.ignored_lines = 3;
  CHECK(used_lines_text(script) == "used lines 12-14, 20, 22-23; ignored 3 lines");
  script.used_lines = {1};
  script.ignored_lines = 1;
  CHECK(used_lines_text(script) == "used line 1; ignored 1 line");
}

TEST_CASE("parse_megatron_launch: given world size, else the launcher's, else the default") {
  const std::string text =
      "torchrun --nproc_per_node 4 --nnodes 2 pretrain_gpt.py --num-layers 4 --hidden-size 64 "
      "--num-attention-heads 4 --seq-length 128 --micro-batch-size 1 --vocab-size 1000\n";
  const Expected<MegatronLaunch> launcher = parse_megatron_launch(text, {});
  REQUIRE(launcher.has_value());
  CHECK(launcher->args.config.parallel.world_size == 8);
  const Expected<MegatronLaunch> given = parse_megatron_launch(text, {.world_size = 16});
  REQUIRE(given.has_value());
  CHECK(given->args.config.parallel.world_size == 16);
  CHECK(given->script.warnings ==
        Words{"the launcher runs 8 GPUs (--nproc_per_node x --nnodes); the estimate is for the "
              "16 given"});
  const std::string bare = text.substr(text.find("--num-layers"));
  const Expected<MegatronLaunch> fallback = parse_megatron_launch(bare, {.default_world_size = 2});
  REQUIRE(fallback.has_value());
  CHECK(fallback->args.config.parallel.world_size == 2);
  const Expected<MegatronLaunch> none = parse_megatron_launch(bare, {});
  REQUIRE_FALSE(none.has_value());
  CHECK(none.error().field == "world_size");
}

namespace {
const std::string kTinyMoe =
    "pretrain_gpt.py --num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
    "--micro-batch-size 1 --vocab-size 1000 --num-experts 8 --bf16 ";
// slime's MoE model scripts: --moe-layer-freq built by a loop and printf -v.
const std::string kLoopFreq =
    "arr=()\nfor ((i=0; i<4; i++)); do\n  arr+=(1)\ndone\n"
    "printf -v FREQ \"[%s]\" \"$(IFS=', '; echo \"${arr[*]}\")\"\n";
}  // namespace

// The reader runs neither loops nor printf -v: the flag arrives without its value. Megatron
// saw the real one, so the run is estimated with Megatron's default and a warning.
TEST_CASE("a flag whose value comes from code not run falls back to Megatron's default") {
  for (const char* freq : {"$FREQ", "\"$FREQ\""}) {
    const std::string text = kLoopFreq + "torchrun --nproc_per_node 8 " + kTinyMoe +
                             "--moe-layer-freq " + freq + " --disable-bias-linear\n";
    INFO(text);
    const Expected<MegatronLaunch> parsed = parse_megatron_launch(text, {});
    REQUIRE(parsed.has_value());
    CHECK(parsed->args.config.model.num_experts == 8);
    const Words& warnings = parsed->script.warnings;
    CHECK(std::count(warnings.begin(), warnings.end(),
                     "--moe-layer-freq has no value here (its variable comes from code megamem "
                     "does not run); Megatron's default is used: give the value") == 1);
  }
  // In a plain list of flags a missing value is a typo: still an error.
  const Expected<MegatronLaunch> typo =
      parse_megatron_launch(kTinyMoe.substr(16) + "--moe-layer-freq", {.world_size = 8});
  REQUIRE_FALSE(typo.has_value());
  CHECK(typo.error().field == "--moe-layer-freq");
}

TEST_CASE("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True in the script is read") {
  const std::string text =
      "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"
      "torchrun --nproc_per_node 8 " +
      kTinyMoe + "\n";
  const Expected<MegatronLaunch> parsed = parse_megatron_launch(text, {});
  REQUIRE(parsed.has_value());
  CHECK(parsed->script.allocator_conf == "expandable_segments:True");
  CHECK(parsed->args.config.runtime.expandable_segments);
  const Expected<MegatronLaunch> plain =
      parse_megatron_launch("torchrun --nproc_per_node 8 " + kTinyMoe + "\n", {});
  REQUIRE(plain.has_value());
  CHECK_FALSE(plain->args.config.runtime.expandable_segments);
}

TEST_CASE("NCCL_NVLS_ENABLE=0 in the script turns NCCL's NVLS buffers off") {
  // NCCL reads it from the environment torchrun passes on (src/transport/nvls.cc
  // ncclNvlsInit); Megatron-Bridge's H100 performance recipes set it.
  const Expected<MegatronLaunch> parsed = parse_megatron_launch(
      "export NCCL_NVLS_ENABLE=0\ntorchrun --nproc_per_node 8 " + kTinyMoe + "\n", {});
  REQUIRE(parsed.has_value());
  CHECK(parsed->script.nccl_nvls_enable == "0");
  CHECK_FALSE(parsed->args.config.runtime.nccl_nvls);
  CHECK(std::count(parsed->script.warnings.begin(), parsed->script.warnings.end(),
                   "NCCL_NVLS_ENABLE=0: NCCL maps no NVLS buffers") == 1);
  const Expected<MegatronLaunch> on = parse_megatron_launch(
      "export NCCL_NVLS_ENABLE=1\ntorchrun --nproc_per_node 8 " + kTinyMoe + "\n", {});
  REQUIRE(on.has_value());
  CHECK(on->args.config.runtime.nccl_nvls);
}

TEST_CASE("every note and warning the page shows for a script has a Chinese row") {
  const LaunchScript script = read(
      "source env.sh\nfor i in 1; do\n  X=1\ndone\n"
      "if [ -f x ]; then\n  Y=$(hostname)\nfi\n"
      "A=$((2**3))\nB=${C/x/y}\nD=${E[x]}\nARGS=\"--num-layers 2 --bf16\"\n"
      "torchrun --nproc_per_node gpu pretrain_gpt.py \"$ARGS\" $Y $A $B $D $UNSET `date`\n");
  std::vector<std::string> texts = script.warnings;
  texts.push_back(used_lines_text(script));
  texts.push_back("read the pretrain_gpt.py command: " + used_lines_text(script));
  for (const char* error : {"A=\"x", "echo hi"}) texts.push_back(read_error(error).message);
  CHECK(texts.size() == 15);
  // parse_megatron_launch's own: a lost value, slime's defaults, the allocator setting.
  const std::string slime =
      "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n" + kLoopFreq +
      "python3 train.py --actor-num-gpus-per-node 8 --rollout-batch-size 4 " + kTinyMoe.substr(16) +
      "--moe-layer-freq $FREQ --use-dynamic-batch-size --max-tokens-per-gpu 4096\n";
  const Expected<MegatronLaunch> launch = parse_megatron_launch(slime, {});
  REQUIRE(launch.has_value());
  const auto starts = [&](const std::string& prefix) {
    return std::count_if(launch->script.warnings.begin(), launch->script.warnings.end(),
                         [&](const std::string& w) { return w.rfind(prefix, 0) == 0; });
  };
  CHECK(starts("--moe-layer-freq has no value here") == 1);
  CHECK(starts("slime (train.py) sets --use-distributed-optimizer, micro-batches of 4096") == 1);
  CHECK(starts("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: ") == 1);
  texts.push_back("NCCL_NVLS_ENABLE=0: NCCL maps no NVLS buffers");
  texts.insert(texts.end(), launch->script.warnings.begin(), launch->script.warnings.end());
  for (const std::string& text : texts) {
    INFO(text);
    std::string chinese;
    CHECK(web::translate(text, &chinese));
  }
}
