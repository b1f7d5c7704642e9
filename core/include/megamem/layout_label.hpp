// A parallel layout as people write it ("TP4 PP8 VPP3 CP1 EP8 ETP1"), one spelling for the
// CLI's tables and summaries and the page's panels.
#pragma once
#include <string>

#include "megamem/config.hpp"

namespace megamem {

// Every degree, VPP and ETP included (ETP resolved: 0 means the tensor-parallel size):
// "TP4 PP8 VPP1 CP1 EP8 ETP4". For tables, where rows line up.
std::string layout_label(const ParallelConfig& parallel);

// The one-line form: VPP only when interleaved, no ETP: "TP4 PP8 VPP3 EP8 CP1".
std::string layout_summary_label(const ParallelConfig& parallel);

}  // namespace megamem
