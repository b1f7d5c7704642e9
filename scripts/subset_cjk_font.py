#!/usr/bin/env python3
"""Cuts Noto Sans CJK SC down to one set of characters the page may show.

Sets (--set), each written as an OpenType (CFF) font by fontTools' subsetter: no hinting, no
layout features, no vertical metrics (Dear ImGui draws horizontal text from cmap, hmtx and the
outlines), and no CFF subroutines: each glyph's outline whole, which gzip compresses better
than the shared subroutines do (the messages set 113,208 -> 108,296 B gzipped, common
655,611 -> 628,005 B; smaller before gzip too). Run by web/messages/CMakeLists.txt at build
time.

  messages  the Chinese column of the message table (--table) plus printable ASCII: fetched
            by the page when it shows Chinese (site/fonts/)
  text      the characters of --text: the language switch's label "简体中文", compiled into
            the page because it shows in English too
  common    pasted or typed Chinese, first tier: GB2312's level-1 hanzi (the 3,755 most used),
            its symbol rows, CJK punctuation and full-width forms, less the messages set
            (the page merges both): fetched when a text box needs a glyph the atlas lacks
  rare      pasted or typed Chinese, second tier: GB2312's level-2 hanzi (3,008), less the
            messages set: fetched when glyphs are still missing after the common tier

usage: subset_cjk_font.py --collection NotoSansCJK-Regular.ttc --set SET
                          [--table messages.tsv] [--text TEXT] --output FILE
"""
import argparse
import sys

from fontTools import subset
from fontTools.ttLib import TTCollection

FAMILY = "Noto Sans CJK SC"


def message_code_points(table_path):
    points = set(range(0x20, 0x7F))
    with open(table_path, encoding="utf-8") as table:
        for line in table:
            line = line.rstrip("\n")
            if not line or line.startswith("#") or "\t" not in line:
                continue
            points.update(ord(c) for c in line.split("\t", 1)[1])
    return points


def gb2312_code_points(first_row, last_row):
    """Code points of GB2312 rows first_row..last_row (EUC-CN lead bytes 0xA1 + row - 1)."""
    points = set()
    for lead in range(0xA0 + first_row, 0xA1 + last_row):
        for trail in range(0xA1, 0xFF):
            try:
                points.update(ord(c) for c in bytes([lead, trail]).decode("gb2312"))
            except UnicodeDecodeError:
                continue  # an unassigned cell
    return points


def code_points(args):
    if args.set == "messages":
        return message_code_points(args.table)
    if args.set == "text":
        return {ord(c) for c in args.text}
    if args.set == "common":
        punctuation = set(range(0x3000, 0x3040)) | set(range(0xFF00, 0xFFF0))
        points = gb2312_code_points(1, 9) | gb2312_code_points(16, 55) | punctuation
    else:  # rare
        points = gb2312_code_points(56, 87)
    return points - message_code_points(args.table)


def face_number(collection_path):
    for number, font in enumerate(TTCollection(collection_path).fonts):
        if font["name"].getDebugName(1) == FAMILY:
            return number
    sys.exit(f"subset_cjk_font: no '{FAMILY}' face in {collection_path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", required=True)
    parser.add_argument("--set", required=True, choices=["messages", "text", "common", "rare"])
    parser.add_argument("--table")
    parser.add_argument("--text")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    if (args.set == "text") != (args.text is not None) or (args.set != "text" and not args.table):
        parser.error("--set text takes --text; the other sets take --table")
    options = subset.Options()
    options.font_number = face_number(args.collection)
    options.hinting = False
    options.desubroutinize = True
    options.layout_features = []
    options.name_IDs = [1, 2]
    options.drop_tables += ["vhea", "vmtx", "VORG", "BASE", "GSUB", "GPOS", "GDEF"]
    font = subset.load_font(args.collection, options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=code_points(args))
    subsetter.subset(font)
    subset.save_font(font, args.output, options)


if __name__ == "__main__":
    main()
