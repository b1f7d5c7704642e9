// The modules selective recompute (--recompute-modules) and fine-grained activation offloading
// (--offload-modules) name, as typed sets. Each enum is spelled once, in one names table, in
// the order megatron/core/transformer/transformer_config.py lists the modules; parsers,
// writers, the estimator, the planner and what-if all take their names from here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace megamem {

// transformer_config.py recompute_modules (gdn_*/gdp_*/mhc belong to layer types megamem
// does not model: accepted, they save nothing here).
enum class RecomputeModule : std::uint8_t {
  core_attn,
  moe_act,
  layernorm,
  mla_up_proj,
  mlp,
  moe,
  shared_experts,
  gdn_norm_out,
  gdp_in_proj,
  gdp_qkv,
  mhc,
};

// transformer_config.py offload_modules (fine_grained_activation_offload.py).
enum class OffloadModule : std::uint8_t {
  attn_norm,
  qkv_linear,
  core_attn,
  attn_proj,
  mlp_norm,
  expert_fc1,
  moe_act,
  fused_group_mlp,
  gdp_qkv,
};

// --cuda-graph-modules (megatron/core/transformer/enums.py CudaGraphModule): the parts of each
// layer a per-layer CUDA graph captures; an empty set captures whole layers.
enum class CudaGraphModule : std::uint8_t {
  attn,
  mlp,
  moe,
  moe_router,
  moe_preprocess,
  mamba,
};

inline constexpr std::array<std::string_view, 11> kRecomputeModuleNames = {
    "core_attn",      "moe_act",      "layernorm",   "mla_up_proj", "mlp", "moe",
    "shared_experts", "gdn_norm_out", "gdp_in_proj", "gdp_qkv",     "mhc"};
inline constexpr std::array<std::string_view, 9> kOffloadModuleNames = {
    "attn_norm",  "qkv_linear", "core_attn",       "attn_proj", "mlp_norm",
    "expert_fc1", "moe_act",    "fused_group_mlp", "gdp_qkv"};

inline constexpr std::array<std::string_view, 6> kCudaGraphModuleNames = {
    "attn", "mlp", "moe", "moe_router", "moe_preprocess", "mamba"};

constexpr const auto& module_name_table(RecomputeModule) { return kRecomputeModuleNames; }
constexpr const auto& module_name_table(OffloadModule) { return kOffloadModuleNames; }
constexpr const auto& module_name_table(CudaGraphModule) { return kCudaGraphModuleNames; }

// A set of one kind of module, as bits in the enum's order.
template <class Module>
class ModuleSet {
 public:
  using module_type = Module;
  constexpr ModuleSet() = default;
  constexpr ModuleSet(std::initializer_list<Module> modules) {
    for (Module module : modules) insert(module);
  }
  constexpr bool has(Module module) const { return (bits_ & bit(module)) != 0; }
  constexpr void insert(Module module) { bits_ |= bit(module); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr std::uint32_t bits() const { return bits_; }
  // Every module of `other` is in this set too.
  constexpr bool contains(ModuleSet other) const { return (bits_ & other.bits_) == other.bits_; }
  constexpr bool intersects(ModuleSet other) const { return (bits_ & other.bits_) != 0; }
  constexpr ModuleSet operator|(ModuleSet other) const { return from_bits(bits_ | other.bits_); }
  constexpr ModuleSet operator&(ModuleSet other) const { return from_bits(bits_ & other.bits_); }
  // This set without the members of `other`.
  constexpr ModuleSet operator-(ModuleSet other) const { return from_bits(bits_ & ~other.bits_); }
  friend constexpr bool operator==(ModuleSet, ModuleSet) = default;

  // Every module of the kind.
  static constexpr ModuleSet all() {
    return from_bits((1u << module_name_table(Module{}).size()) - 1u);
  }

  // The members in table order.
  std::vector<Module> members() const {
    std::vector<Module> out;
    for (std::size_t i = 0; i < module_name_table(Module{}).size(); ++i) {
      if (bits_ & (1u << i)) out.push_back(static_cast<Module>(i));
    }
    return out;
  }

  static constexpr ModuleSet from_bits(std::uint32_t bits) {
    ModuleSet out;
    out.bits_ = bits;
    return out;
  }

 private:
  static constexpr std::uint32_t bit(Module module) {
    return 1u << static_cast<std::uint32_t>(module);
  }
  std::uint32_t bits_ = 0;
};

using RecomputeModules = ModuleSet<RecomputeModule>;
using OffloadModules = ModuleSet<OffloadModule>;
using CudaGraphModules = ModuleSet<CudaGraphModule>;

template <class Module>
constexpr std::string_view module_name(Module module) {
  return module_name_table(module)[static_cast<std::size_t>(module)];
}

template <class Module>
constexpr std::optional<Module> module_from_name(std::string_view name) {
  const auto& names = module_name_table(Module{});
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Module>(i);
  }
  return std::nullopt;
}

// The members' names in table order (flags, links and labels write them so).
template <class Module>
std::vector<std::string> module_name_list(ModuleSet<Module> set) {
  std::vector<std::string> out;
  for (Module module : set.members()) out.emplace_back(module_name(module));
  return out;
}

// `names` as a set; nullopt names the first unknown one in `unknown`.
template <class Module>
std::optional<ModuleSet<Module>> module_set_from_names(const std::vector<std::string>& names,
                                                       std::string* unknown = nullptr) {
  ModuleSet<Module> out;
  for (const std::string& name : names) {
    const std::optional<Module> module = module_from_name<Module>(name);
    if (!module) {
      if (unknown) *unknown = name;
      return std::nullopt;
    }
    out.insert(*module);
  }
  return out;
}

struct ModelConfig;

// The recompute modules whose layers the model lacks or megamem does not build (naming them
// changes nothing), and the recompute and offload modules that act on the model, in table
// order: what a front end offers (core/src/modules/field_applicability.cpp).
RecomputeModules recompute_modules_of_absent_layers(const ModelConfig& model);
// Recompute modules whose checkpoint the model's layers never reach: Kimi K3's
// KimiK3TransformerLayer.forward calls its norms, attention and MLP without TransformerLayer's
// checkpoints (layernorm, mlp), and KimiK3Attention its core attention without Megatron
// attention's (core_attn, mla_up_proj). Megatron-Bridge kimi/kimi_k3_layers.py. Gemma 4
// dense's Gemma4DenseTransformerLayer._forward_mlp calls its MLP directly (mlp), and
// recompute_modules_failing its layernorm (Megatron-Bridge gemma/modeling_gemma4.py).
RecomputeModules recompute_modules_without_effect(const ModelConfig& model);
// Where recompute_modules_without_effect comes from, for the warning that names it.
const char* recompute_bypass_source(const ModelConfig& model);
// Recompute modules whose checkpoint the model's layers start but never finish, so the first
// backward fails: Gemma4DenseTransformerLayer's _forward_mlp runs TransformerLayer's
// _forward_pre_mlp_layernorm (a CheckpointWithoutOutput under layernorm recompute) but not
// _apply_mlp_bda_step, which discards its output and registers the recompute; without that
// recompute CheckpointWithoutOutputFunction.backward has no ctx.inputs
// (megatron/core/tensor_parallel/random.py).
RecomputeModules recompute_modules_failing(const ModelConfig& model);
RecomputeModules recompute_module_choices(const ModelConfig& model);
OffloadModules offload_module_choices(const ModelConfig& model);

// "core_attn, moe_act, ..." (error messages name the known modules).
template <class Module>
std::string known_module_names(const char* separator = ", ") {
  std::string out;
  for (std::string_view name : module_name_table(Module{})) {
    out += (out.empty() ? "" : separator) + std::string(name);
  }
  return out;
}

}  // namespace megamem
