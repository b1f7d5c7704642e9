// A rank's estimated timeline -> the pickled PyTorch memory snapshot (memory_snapshot.hpp).
//
// Index:
//   [SECTION] A minimal pickle writer (protocol 2: dicts, lists, ints, str)
//   [SECTION] The allocation history of a rank
//   [SECTION] memory_snapshot_pickle
#include "megamem/memory_snapshot.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace megamem {
namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] A minimal pickle writer
// ---------------------------------------------------------------------------------------------

struct PyEntry;

// A Python value: int, str, list or dict with str keys (all a snapshot holds).
struct PyValue {
  enum class Kind { integer, text, list, dict };
  Kind kind = Kind::integer;
  std::int64_t integer = 0;
  std::string text;
  std::vector<PyValue> items;
  std::vector<PyEntry> entries;
};

struct PyEntry {
  std::string key;
  PyValue value;
};

PyValue py_int(std::int64_t value) {
  PyValue v;
  v.integer = value;
  return v;
}

PyValue py_str(std::string value) {
  PyValue v;
  v.kind = PyValue::Kind::text;
  v.text = std::move(value);
  return v;
}

PyValue py_list(std::vector<PyValue> items = {}) {
  PyValue v;
  v.kind = PyValue::Kind::list;
  v.items = std::move(items);
  return v;
}

PyValue py_dict(std::vector<PyEntry> entries) {
  PyValue v;
  v.kind = PyValue::Kind::dict;
  v.entries = std::move(entries);
  return v;
}

void put_le(std::string& out, std::uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xff);
}

// Python's pickle opcodes (Lib/pickle.py): BININT 'J', LONG1 0x8a, BINUNICODE 'X',
// EMPTY_LIST ']', EMPTY_DICT '}', MARK '(', APPENDS 'e', SETITEMS 'u'.
void write_text(std::string& out, const std::string& text) {
  out += 'X';
  put_le(out, text.size(), 4);
  out += text;
}

void write_pickle(std::string& out, const PyValue& value) {
  switch (value.kind) {
    case PyValue::Kind::integer:
      if (value.integer >= INT32_MIN && value.integer <= INT32_MAX) {
        out += 'J';
        put_le(out, static_cast<std::uint64_t>(value.integer), 4);
      } else {
        out += '\x8a';
        out += '\x08';  // LONG1 with 8 little-endian two's-complement bytes
        put_le(out, static_cast<std::uint64_t>(value.integer), 8);
      }
      return;
    case PyValue::Kind::text:
      write_text(out, value.text);
      return;
    case PyValue::Kind::list:
      out += "](";
      for (const PyValue& item : value.items) write_pickle(out, item);
      out += 'e';
      return;
    case PyValue::Kind::dict:
      out += "}(";
      for (const auto& [key, item] : value.entries) {
        write_text(out, key);
        write_pickle(out, item);
      }
      out += 'u';
      return;
  }
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The allocation history of a rank
// ---------------------------------------------------------------------------------------------

constexpr std::int64_t kFirstAddress = std::int64_t{1} << 40;  // a plausible device address
constexpr std::int64_t kAlignment = 512;                       // the caching allocator's

PyValue frames_of(const std::string& name) {
  return py_list({py_dict(
      {{"filename", py_str("megamem estimate")}, {"line", py_int(0)}, {"name", py_str(name)}})});
}

// Allocations as the trace records them; each is its own segment.
class History {
 public:
  std::int64_t alloc(const std::string& name, std::uint64_t bytes) {
    if (bytes == 0) return 0;
    const std::int64_t size = static_cast<std::int64_t>(bytes);
    const std::int64_t address = next_address_;
    next_address_ += (size + kAlignment - 1) / kAlignment * kAlignment + kAlignment;
    event("segment_alloc", address, size, name);
    event("alloc", address, size, name);
    live_[address] = {name, size};
    return address;
  }

  void free(std::int64_t address) {
    const auto it = live_.find(address);
    if (it == live_.end()) return;
    const auto [name, size] = it->second;
    event("free_requested", address, size, name);
    event("free_completed", address, size, name);
    event("segment_free", address, size, name);
    live_.erase(it);
  }

  std::vector<PyValue> trace;

  // The live blocks as the snapshot's segments (one active block each).
  std::vector<PyValue> segments() const {
    std::vector<PyValue> out;
    for (const auto& [address, block] : live_) {
      const PyValue size = py_int(block.second);
      out.push_back(
          py_dict({{"device", py_int(0)},
                   {"address", py_int(address)},
                   {"total_size", size},
                   {"stream", py_int(0)},
                   {"segment_type", py_str(block.second > (1 << 20) ? "large" : "small")},
                   {"allocated_size", size},
                   {"active_size", size},
                   {"requested_size", size},
                   {"blocks", py_list({py_dict({{"address", py_int(address)},
                                                {"size", size},
                                                {"requested_size", size},
                                                {"state", py_str("active_allocated")},
                                                {"frames", frames_of(block.first)}})})}}));
    }
    return out;
  }

 private:
  void event(const char* action, std::int64_t address, std::int64_t size, const std::string& name) {
    trace.push_back(py_dict({{"action", py_str(action)},
                             {"addr", py_int(address)},
                             {"size", py_int(size)},
                             {"stream", py_int(0)},
                             {"time_us", py_int(++clock_us_)},
                             {"frames", frames_of(name)}}));
  }

  std::int64_t next_address_ = kFirstAddress;
  std::int64_t clock_us_ = 0;
  std::map<std::int64_t, std::pair<std::string, std::int64_t>> live_;
};

std::string event_name(const TimelineEvent& event) {
  if (event.kind == TimelineEvent::Kind::optimizer_step) return "optimizer step";
  return std::string(timeline_event_name(event.kind)) + " of micro-batch " +
         std::to_string(event.microbatch) + ", chunk " + std::to_string(event.vpp_chunk);
}

// Replays the timeline: each operation's transient memory is allocated and freed, a forward
// keeps its micro-batch's activations (the rise of memory_allocated() it causes), the matching
// backward frees them (timeline.cpp: a backward releases exactly what its forward saved).
void replay(History& history, const RankMemory& rank) {
  std::map<std::pair<std::int64_t, int>, std::int64_t> saved;  // (micro-batch, chunk) -> addr
  std::uint64_t level = rank.static_bytes;
  for (const TimelineEvent& event : rank.timeline) {
    const std::string name = event_name(event);
    if (event.peak_during_bytes > level) {
      history.free(history.alloc("transient: " + name, event.peak_during_bytes - level));
    }
    const auto key = std::pair{event.microbatch, event.vpp_chunk};
    if (event.kind == TimelineEvent::Kind::backward && saved.count(key)) {
      history.free(saved[key]);
      saved.erase(key);
    }
    if (event.kind == TimelineEvent::Kind::forward && event.allocated_after_bytes > level) {
      saved[key] = history.alloc("activations: micro-batch " + std::to_string(event.microbatch) +
                                     ", chunk " + std::to_string(event.vpp_chunk),
                                 event.allocated_after_bytes - level);
    }
    level = event.allocated_after_bytes;
  }
}

}  // namespace

Expected<std::string> memory_snapshot_pickle(const Estimate& estimate, int pp_rank) {
  if (pp_rank < 0 || pp_rank >= static_cast<int>(estimate.ranks.size())) {
    return Error{"rank", "pipeline rank " + std::to_string(pp_rank) + " does not exist (0.." +
                             std::to_string(estimate.ranks.size() - 1) + ")"};
  }
  const RankMemory& rank = estimate.ranks[static_cast<std::size_t>(pp_rank)];
  if (rank.timeline.empty()) {
    return Error{"rank", "the estimate was made without its timeline"};
  }
  History history;
  history.alloc("weights", rank.weight_bytes);
  history.alloc("gradients (DDP grad buffer)", rank.gradient_bytes);
  history.alloc("optimizer state", rank.optimizer_bytes);
  history.alloc("persistent buffers and workspaces", rank.persistent_buffer_bytes);
  replay(history, rank);
  const PyValue snapshot = py_dict({{"segments", py_list(history.segments())},
                                    {"device_traces", py_list({py_list(history.trace)})}});
  std::string out = "\x80\x02";  // PROTO 2
  write_pickle(out, snapshot);
  out += '.';  // STOP
  return out;
}

}  // namespace megamem
