#!/usr/bin/env python3
"""Compiles web/messages/messages.tsv into the table the page embeds (web/messages/CMakeLists.txt).

A row whose English holds no {N} placeholder is looked up whole, so the page needs only a key
for it: its English is replaced by the FNV-1a hash and the byte length of the unescaped text
(messages.cpp computes the same for the text it translates), which saves the second copy of
every such English text that the page's code already carries (about 8 KiB gzipped). Template
rows keep their English, which the page matches piece by piece. Comment and blank lines go.

A hashed row starts with the byte 0x01 (never in the table's text): 0x01, eight hex digits of
the hash, ':', the length in decimal, a tab and the Chinese cell as written. Two rows with the
same key fail the build, as does a cell without its tab.

usage: compile_messages.py messages.tsv out.table
"""
import re
import sys

TEMPLATE = re.compile(r"\{[0-9]\*?\}")


def unescape(cell):
    """'\\n', '\\t' and '\\\\' in a cell are a newline, a tab and a backslash (messages.cpp)."""
    out, i = [], 0
    while i < len(cell):
        if cell[i] == "\\" and i + 1 < len(cell):
            i += 1
            out.append({"n": "\n", "t": "\t"}.get(cell[i], cell[i]))
        else:
            out.append(cell[i])
        i += 1
    return "".join(out)


def fnv1a32(data):
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def compile_table(lines):
    out, keys = [], {}
    for number, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        english, tab, chinese = line.partition("\t")
        if not tab:
            sys.exit(f"messages.tsv:{number}: no tab between the English and the Chinese")
        if TEMPLATE.search(english):
            out.append(line)
            continue
        text = unescape(english).encode("utf-8")
        key = f"{fnv1a32(text):08x}:{len(text)}"
        if key in keys:
            sys.exit(f"messages.tsv:{number}: its key {key} is also line {keys[key]}'s")
        keys[key] = number
        out.append(f"\x01{key}\t{chinese}")
    return "\n".join(out) + "\n"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as source:
        table = compile_table(source.readlines())
    with open(sys.argv[2], "w", encoding="utf-8", newline="\n") as target:
        target.write(table)


if __name__ == "__main__":
    main()
