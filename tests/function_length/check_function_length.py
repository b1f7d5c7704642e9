#!/usr/bin/env python3
"""Fails when a function in core/, cli/ or web/ is longer than the limit (60 lines).

Functions are listed by universal-ctags, with their first and last lines:
    ctags -R --languages=C++ --fields=+ne --kinds-C++=f -o - core cli web
A function over the limit passes only while allow_list.txt names it ("path:function lines")
and it is no longer than listed there. The list may only shrink: when a listed function gets
shorter (or goes under the limit, or away), the test fails until the list says so;
`--tighten` rewrites the list that way (it never adds or raises an entry).

usage: check_function_length.py --source-dir DIR [--ctags ctags] [--allow-list FILE]
                                [--limit 60] [--tighten]
"""
import argparse
import pathlib
import subprocess
import sys

SCANNED_DIRS = ["core", "cli", "web"]


def function_lengths(ctags, source_dir):
    """{"path:function": lines} of the longest function of each name in each file."""
    output = subprocess.run(
        [ctags, "-R", "--languages=C++", "--fields=+ne", "--kinds-C++=f", "-o", "-"]
        + SCANNED_DIRS,
        cwd=source_dir, check=True, capture_output=True, text=True).stdout
    lengths = {}
    for line in output.splitlines():
        name, path = line.split("\t", 2)[:2]
        fields = dict(f.split(":", 1) for f in line.rsplit(';"\t', 1)[-1].split("\t") if ":" in f)
        if "line" not in fields or "end" not in fields:
            continue
        key = f"{path}:{name}"
        lines = int(fields["end"]) - int(fields["line"]) + 1
        lengths[key] = max(lengths.get(key, 0), lines)
    return lengths


def read_allow_list(path):
    allowed = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, lines = line.rpartition(" ")
        if not key or not lines.isdigit():
            sys.exit(f"{path}:{number}: expected 'path:function lines', got {line!r}")
        allowed[key.strip()] = int(lines)
    return allowed


def write_allow_list(path, header, allowed):
    body = "".join(f"{key} {lines}\n" for key, lines in
                   sorted(allowed.items(), key=lambda item: (-item[1], item[0])))
    path.write_text(header + body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-dir", type=pathlib.Path, required=True)
    parser.add_argument("--ctags", default="ctags")
    parser.add_argument("--allow-list", type=pathlib.Path,
                        default=pathlib.Path(__file__).with_name("allow_list.txt"))
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--tighten", action="store_true")
    args = parser.parse_args()

    lengths = function_lengths(args.ctags, args.source_dir)
    allowed = read_allow_list(args.allow_list)
    over = {key: lines for key, lines in lengths.items() if lines > args.limit}
    problems = []
    for key, lines in sorted(over.items()):
        if key not in allowed:
            problems.append(f"{key}: {lines} lines, over the limit of {args.limit}; split it")
        elif lines > allowed[key]:
            problems.append(f"{key}: {lines} lines, grew past its allowed {allowed[key]}; split it")
    tightened = {key: min(limit, over[key]) for key, limit in allowed.items() if key in over}
    stale = {key: limit for key, limit in allowed.items() if tightened.get(key) != limit}
    if args.tighten:
        header = "".join(line + "\n" for line in args.allow_list.read_text().splitlines()
                         if line.startswith("#"))
        write_allow_list(args.allow_list, header, tightened)
        stale = {}
    for key, limit in sorted(stale.items()):
        now = lengths.get(key)
        state = "gone" if now is None else f"{now} lines now"
        problems.append(f"{args.allow_list.name}: {key} {limit} is stale ({state}); the list may "
                        f"only shrink: run {pathlib.Path(__file__).name} --tighten")
    longest = max(over.values(), default=0)
    print(f"function length: {len(over)} functions over {args.limit} lines (longest {longest}); "
          f"issue 11 aims at <= 10 and none over 100")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
