// Presets of #25, part h: the fp32 router weight Megatron-Bridge's MiniMax-M3 provider keeps
// (moe_router_fp32_params).
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

#include "hf_import_helpers.hpp"
#include "megamem/megatron_args.hpp"

using namespace megamem;
using namespace megamem::hf_test;

namespace {

// 4 MoE layers of 8 experts, h 512, 8 heads, micro-batches of 4 x 1024 tokens, bf16, on 8 GPUs
// (DP 8, no distributed optimizer: no padding), with `extra`.
Config tiny_moe(const std::string& extra) {
  Expected<MegatronArgs> args = parse_megatron_args(
      "--num-layers 4 --hidden-size 512 --num-attention-heads 8 --seq-length 1024 "
      "--max-position-embeddings 1024 --micro-batch-size 4 --global-batch-size 32 "
      "--vocab-size 50257 --bf16 --disable-bias-linear --num-experts 8 --moe-router-topk 2 " +
          extra,
      8);
  REQUIRE(args.has_value());
  return args->config;
}

struct Bytes {
  double weight, gradient, optimizer, step, activation;
};

Bytes bytes_of(const Config& c) {
  const Expected<Estimate> e = estimate(c, {false, false});
  INFO((e ? std::string() : e.error().field + ": " + e.error().message));
  REQUIRE(e.has_value());
  const auto& r = e->ranks[0];
  return {static_cast<double>(r.weight_bytes), static_cast<double>(r.gradient_bytes),
          static_cast<double>(r.optimizer_bytes), static_cast<double>(r.optimizer_step_bytes),
          static_cast<double>(r.activation_bytes_per_microbatch)};
}

}  // namespace

TEST_CASE("fp32 router weight: a 4-byte parameter with an fp32 grad and no master copy") {
  // 4 routers of 8 x 512 = 16,384 elements. As fp32 parameters (minimax_m3_bridge.py
  // _promote_router_weights_to_float32) each weighs 4 bytes instead of 2; its grad is fp32 as
  // the bf16 routers' accumulated grads are; Float16OptimizerWithFloat16Params steps it in
  // place (fp32_from_fp32_groups): Adam's 8 bytes without the 4-byte master.
  Config plain = tiny_moe("");
  Config fp32 = plain;
  fp32.model.moe_router_fp32_params = true;
  const Bytes a = bytes_of(plain), b = bytes_of(fp32);
  const double routers = 4 * 8 * 512;
  CHECK(b.weight - a.weight == 2 * routers);
  CHECK(b.gradient == a.gradient);
  CHECK(a.optimizer - b.optimizer == 4 * routers);
  // MiniMaxM3TopKRouter.gating widens its input to fp32 and RouterGatingLinearFunction saves
  // it: 4096 tokens x 512 x 4 bytes more per layer and micro-batch.
  CHECK(b.activation - a.activation == 4 * 4096.0 * 512 * 4);
  // With bf16 grads the others reduce in bf16, the fp32 router in fp32 (group_params_for_buffers:
  // its own dtype), and the step's fp32 copy of a 16-bit grad is not made for it.
  plain.optimizer.grad_reduce_in_bf16 = true;
  fp32.optimizer.grad_reduce_in_bf16 = true;
  const Bytes c = bytes_of(plain), d = bytes_of(fp32);
  CHECK(d.gradient - c.gradient == 2 * routers);
  CHECK(c.step - d.step == 4 * routers);
}

TEST_CASE("fp32 router weight: a DDP buffer of its own, and TE FusedAdam's master state") {
  // With the distributed optimizer the fp32 routers are a third buffer of the chunk, padded on
  // their own: 4 x 4,096 elements, each 64-aligned, the buffer's end to lcm(DP 8, 128) = 128:
  // already aligned, so no padding is added and the dense buffer loses exactly the routers.
  Config plain = tiny_moe("--use-distributed-optimizer");
  Config fp32 = plain;
  fp32.model.moe_router_fp32_params = true;
  const Bytes a = bytes_of(plain), b = bytes_of(fp32);
  const double routers = 4 * 8 * 512;
  CHECK(b.weight - a.weight == 2 * routers);
  CHECK(a.optimizer - b.optimizer == 4 * routers / 8);
  // The precision-aware optimizer with TE owning the masters (no FP8 recipe): TE FusedAdam's
  // initialize_state makes a master_param for every parameter, a bf16 router's as a 2-byte
  // remainder, the fp32 routers' whole (the remainder form is for bf16 parameters): 2 bytes
  // more each beside the same fp32 moments, sharded over DP 8.
  plain.optimizer.use_precision_aware_optimizer = true;
  fp32.optimizer.use_precision_aware_optimizer = true;
  CHECK(bytes_of(fp32).optimizer - bytes_of(plain).optimizer == 2 * routers / 8);
  // With MCore keeping the masters (opt-fp8-recipe tensorwise, as Bridge's bf16 runs) the fp32
  // routers have none: 4 bytes fewer each, sharded over DP 8.
  plain.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
  fp32.optimizer.fp8_recipe = Fp8Recipe::tensorwise;
  CHECK(bytes_of(plain).optimizer - bytes_of(fp32).optimizer == 4 * routers / 8);
}
