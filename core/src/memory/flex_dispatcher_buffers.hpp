// The flex dispatcher's communication buffers: DeepEP's or HybridEP's, sized as each library
// sizes them, all outside PyTorch's caching allocator (cudaMalloc, cuMem or NVSHMEM).
#pragma once

#include <cstdint>
#include <string_view>

#include "megamem/estimate_types.hpp"

namespace megamem {

struct FlexDispatcherBuffers {
  double bytes = 0;
  std::string_view source;  // where the sizes come from
};

// Zero without the flex dispatcher, without experts, or for a backend megamem does not size
// (NCCL EP: its buffers live in TE's ep API, not traced).
FlexDispatcherBuffers flex_dispatcher_buffers(const NormalizedConfig& n);

// Whether DeepEP has chunk sizes for a dispatcher group of this many ranks (deep_ep/buffer.py
// Buffer.get_dispatch_config asserts on any other size).
bool deepep_supports_group(std::int64_t ranks);

// The flex dispatcher's group: the experts' TP x EP ranks (token_dispatcher.py tp_ep_group).
std::int64_t flex_dispatcher_group(const Config& c);

}  // namespace megamem
