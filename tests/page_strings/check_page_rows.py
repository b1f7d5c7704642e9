#!/usr/bin/env python3
"""Every setting a link carries has a place on the page (issue #24: ten labelled registry rows
had none, so a link could set what the page could neither show nor change).

Runs `megamem url keys` (the field registry's rows) and fails on any key that no web/*.cpp
names as a string literal ("tp-comm-overlap" in a rows() list), except the few the page edits
another way, listed below with where. Usage: check_page_rows.py MEGAMEM WEB_DIR
"""
import pathlib
import re
import subprocess
import sys

# Keys the page shows or edits without a row of their own.
ELSEWHERE = {
    "m.name": "the model picker's title",
    "g.name": "the GPU picker's title",
    "m.moe-pattern": "the MoE layer note under 'mixture of experts' (an imported pattern)",
    "m.window-pattern": "the windowed-layer note under the window rows (an imported pattern)",
    "m.kda-layers": "the KDA layer note under 'Kimi K3 layers' (an imported pattern)",
    "m.csa-ratios": "the compressed-attention note under 'multi-latent attention' (imported)",
}


def main():
    table = subprocess.run([sys.argv[1], "url", "keys"], check=True, capture_output=True,
                           text=True).stdout
    keys = re.findall(r"^\| `([^`]+)` \|", table, re.MULTILINE)
    if len(keys) < 100:
        sys.exit(f"`megamem url keys` listed only {len(keys)} keys")
    sources = "".join(p.read_text(encoding="utf-8")
                      for p in sorted(pathlib.Path(sys.argv[2]).glob("*.cpp")))
    missing = [k for k in keys if f'"{k}"' not in sources and k not in ELSEWHERE]
    stale = [k for k in ELSEWHERE if k not in keys]
    for key in missing:
        print(f"link key {key} has no row on the page (web/inputs_panel.cpp)")
    for key in stale:
        print(f"check_page_rows.py lists {key}, which is no longer a link key")
    if missing or stale:
        sys.exit(1)
    print(f"all {len(keys)} link keys have a place on the page")


if __name__ == "__main__":
    main()
