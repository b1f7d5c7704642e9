#!/usr/bin/env python3
"""Writes the page's UI font (Roboto) without the tables Dear ImGui never reads.

Dear ImGui 1.86 rasterises glyphs with stb_truetype from cmap, hmtx, loca and glyf and applies
no kerning or substitution, so the OpenType layout tables (GPOS: kerning pairs, GSUB, GDEF;
79 KiB of Roboto's 298 KiB) were compiled into megamem.wasm and downloaded by every visitor
for nothing. Every glyph and metric is kept, so the atlas is the same. Run by
web/CMakeLists.txt at build time.

usage: strip_ui_font.py INPUT.ttf OUTPUT.ttf
"""
import sys

from fontTools.ttLib import TTFont

UNREAD_TABLES = ["GPOS", "GSUB", "GDEF"]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: strip_ui_font.py INPUT.ttf OUTPUT.ttf")
    font = TTFont(sys.argv[1], recalcTimestamp=False)  # the same bytes on every build
    for tag in UNREAD_TABLES:
        if tag in font:
            del font[tag]
    font.save(sys.argv[2])


if __name__ == "__main__":
    main()
