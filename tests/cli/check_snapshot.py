"""Checks a memory snapshot megamem wrote against torch.cuda.memory._snapshot()'s documented
structure (torch/cuda/memory.py): a pickled dict of `segments` and `device_traces`, with the
documented keys, and a trace whose allocations replay to the estimate's peak and static memory.

usage: check_snapshot.py SNAPSHOT PEAK_ALLOCATED_BYTES STATIC_BYTES
"""
import pickle
import sys

SEGMENT_KEYS = {"address", "total_size", "stream", "segment_type", "allocated_size",
                "active_size", "blocks"}
BLOCK_KEYS = {"size", "requested_size", "address", "state", "frames"}
TRACE_KEYS = {"action", "addr", "frames", "size", "stream"}
FRAME_KEYS = {"filename", "line", "name"}
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free"}


def fail(message):
    sys.exit("check_snapshot: " + message)


def main(path, peak, static):
    with open(path, "rb") as f:
        snapshot = pickle.load(f)
    if set(snapshot) != {"segments", "device_traces"}:
        fail(f"top-level keys {sorted(snapshot)}")
    for segment in snapshot["segments"]:
        if not SEGMENT_KEYS <= set(segment):
            fail(f"segment keys {sorted(segment)}")
        for block in segment["blocks"]:
            if not BLOCK_KEYS <= set(block) or block["state"] != "active_allocated":
                fail(f"block {block}")
            for frame in block["frames"]:
                if set(frame) != FRAME_KEYS:
                    fail(f"frame keys {sorted(frame)}")
    if len(snapshot["device_traces"]) != 1:
        fail("expected one device's trace")
    live = high = 0
    for entry in snapshot["device_traces"][0]:
        if not TRACE_KEYS <= set(entry) or entry["action"] not in ACTIONS:
            fail(f"trace entry {entry}")
        if entry["action"] == "alloc":
            live += entry["size"]
        elif entry["action"] == "free_completed":
            live -= entry["size"]
        high = max(high, live)
    # Timeline levels are rounded to bytes per event; allow a few bytes per micro-batch.
    if abs(high - peak) > 4096 or abs(live - static) > 4096:
        fail(f"trace peaks at {high} and ends at {live}; the estimate says {peak} and {static}")
    held = sum(segment["allocated_size"] for segment in snapshot["segments"])
    if abs(held - live) > 0:
        fail(f"segments hold {held} bytes, the trace ends at {live}")
    print(f"snapshot ok: {len(snapshot['device_traces'][0])} trace entries, peak {high} bytes")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
