#!/usr/bin/env python3
"""Cuts Noto Sans CJK SC down to the characters the page can show in Chinese.

Reads the message table (web/messages/messages.tsv), keeps every code point of its Chinese
column plus printable ASCII, and writes an OpenType (CFF) font with fontTools' subsetter:
no hinting, no layout features, no vertical metrics (Dear ImGui draws horizontal text from
cmap, hmtx and the outlines). Run by web/messages/CMakeLists.txt at build time.

usage: subset_cjk_font.py --collection NotoSansCJK-Regular.ttc --table messages.tsv --output F
"""
import argparse
import sys

from fontTools import subset
from fontTools.ttLib import TTCollection

FAMILY = "Noto Sans CJK SC"


def chinese_code_points(table_path):
    points = set(range(0x20, 0x7F))
    with open(table_path, encoding="utf-8") as table:
        for line in table:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or "\t" not in line:
                continue
            points.update(ord(c) for c in line.split("\t", 1)[1])
    return points


def face_number(collection_path):
    for number, font in enumerate(TTCollection(collection_path).fonts):
        if font["name"].getDebugName(1) == FAMILY:
            return number
    sys.exit(f"subset_cjk_font: no '{FAMILY}' face in {collection_path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    options = subset.Options()
    options.font_number = face_number(args.collection)
    options.hinting = False
    options.layout_features = []
    options.name_IDs = [1, 2]
    options.drop_tables += ["vhea", "vmtx", "VORG", "BASE", "GSUB", "GPOS", "GDEF"]
    font = subset.load_font(args.collection, options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=chinese_code_points(args.table))
    subsetter.subset(font)
    subset.save_font(font, args.output, options)


if __name__ == "__main__":
    main()
