#!/usr/bin/env python3
"""Writes core/src/formats/megatron_flag_names.cpp: every flag Megatron-LM's training entry
points accept, read from a Megatron-LM source tree that is already on disk (nothing is
downloaded; the build never runs this).

    scripts/generate_megatron_flag_names.py --megatron-git DIR [--commit d98e8a6] \
        | clang-format --assume-filename=megatron_flag_names.cpp \
        > core/src/formats/megatron_flag_names.cpp
    scripts/generate_megatron_flag_names.py --megatron-dir CHECKOUT > ...

--megatron-git reads a (bare) git repository at a commit (`git show COMMIT:path`), e.g. the
mirror `fetch github:NVIDIA/Megatron-LM` leaves; --megatron-dir reads a checkout.

The flags are
  * every "--name" string given to add_argument() in megatron/training/arguments.py and
    megatron/post_training/arguments.py;
  * every field of the dataclasses arguments.py turns into flags with
    ArgumentGroupFactory(Config, exclude=[...]) (megatron/training/argument_utils.py): a field
    foo_bar becomes --foo-bar; a bool field defaulting to True becomes --no-foo-bar and
    --disable-foo-bar; "argparse_meta" {"arg_names": [...]} replaces the names; fields with
    init=False and excluded fields are left out; base classes' fields come first.

Each flag's argparse destination (the name `print_args` and argument dumps use) is recorded
where it is not the flag's own name with "_" for "-": add_argument's dest=, or the field a
dataclass flag sets (--no-foo-bar and --disable-foo-bar set foo_bar).
"""
import argparse
import ast
import pathlib
import subprocess
import sys

ARGUMENT_FILES = ["megatron/training/arguments.py", "megatron/post_training/arguments.py"]
CLASS_ROOTS = ["megatron/core", "megatron/training", "megatron/post_training"]


class Source:
    """Reads files of a Megatron-LM tree: a checkout, or a git repository at a commit."""

    def __init__(self, directory=None, git_dir=None, commit="HEAD"):
        self.directory, self.git_dir, self.commit = directory, git_dir, commit

    def read(self, path):
        if self.directory:
            file = pathlib.Path(self.directory, path)
            return file.read_text() if file.exists() else None
        shown = subprocess.run(["git", "-C", self.git_dir, "show", f"{self.commit}:{path}"],
                               capture_output=True, text=True)
        return shown.stdout if shown.returncode == 0 else None

    def python_files(self, root):
        if self.directory:
            return [str(p.relative_to(self.directory))
                    for p in pathlib.Path(self.directory, root).rglob("*.py")]
        listed = subprocess.run(["git", "-C", self.git_dir, "ls-tree", "-r", "--name-only",
                                 self.commit, root], capture_output=True, text=True, check=True)
        return [p for p in listed.stdout.splitlines() if p.endswith(".py")]

    def describe(self):
        if self.directory:
            return self.directory
        return subprocess.run(["git", "-C", self.git_dir, "rev-parse", "--short=7", self.commit],
                              capture_output=True, text=True, check=True).stdout.strip()


def literal(node, default=None):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return default


ACTION_KINDS = {"store_true": "sets_true", "store_false": "sets_false"}


def add_argument_flags(tree):
    """{flag: (destination, kind)} of every add_argument() call (argparse's default destination: the
    first long option with "_" for "-", unless dest= names another)."""
    flags = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            names = [literal(arg) for arg in node.args]
            names = [n[2:] for n in names if isinstance(n, str) and n.startswith("--")]
            if not names:
                continue
            dest, kind = names[0].replace("-", "_"), "value"
            for keyword in node.keywords:
                if keyword.arg == "dest" and isinstance(literal(keyword.value), str):
                    dest = literal(keyword.value)
                if keyword.arg == "action" and literal(keyword.value) in ACTION_KINDS:
                    kind = ACTION_KINDS[literal(keyword.value)]
            for name in names:
                flags[name] = (dest, kind)
    return flags


def factory_uses(tree):
    """(class name, excluded fields) of every ArgumentGroupFactory(...) call."""
    uses = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.Module)):
            continue
        lists = {}  # `exclude = [...]` assignments in this function
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        lists[target.id] = literal(node.value, [])
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "ArgumentGroupFactory" and node.args
                    and isinstance(node.args[0], ast.Name)):
                exclude = []
                for keyword in node.keywords:
                    if keyword.arg == "exclude":
                        exclude = (lists.get(keyword.value.id, [])
                                   if isinstance(keyword.value, ast.Name)
                                   else literal(keyword.value, []))
                uses.append((node.args[0].id, set(exclude or [])))
    return uses


def class_definitions(source):
    classes = {}
    for root in CLASS_ROOTS:
        for path in source.python_files(root):
            text = source.read(path)
            try:
                tree = ast.parse(text or "")
            except SyntaxError:
                continue
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    classes.setdefault(node.name, node)
    return classes


def field_call_keywords(value):
    if (isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", ""))
            == "field"):
        return {k.arg: k.value for k in value.keywords}
    return None


def field_flags(statement):
    """The flags of one annotated dataclass field, or [] when it takes none; each sets the
    field (its destination)."""
    name = statement.target.id
    annotation = ast.unparse(statement.annotation)
    default = statement.value
    keywords = field_call_keywords(default) if default is not None else None
    if keywords is not None:
        if literal(keywords.get("init"), True) is False:
            return []
        meta = literal(keywords.get("metadata"), {}) if "metadata" in keywords else {}
        arg_names = (meta.get("argparse_meta") or {}).get("arg_names") if meta else None
        if arg_names:
            is_true = literal(keywords.get("default")) is True
            kind = ("sets_false" if is_true else "sets_true") if annotation == "bool" else "value"
            return [(n[2:], kind) for n in arg_names]
        default = keywords.get("default")
    is_bool = annotation in ("bool", "Optional[bool]", "bool | None")
    if is_bool and default is not None and literal(default) is True:
        return [(prefix + name.replace("_", "-"), "sets_false") for prefix in ("no-", "disable-")]
    return [(name.replace("_", "-"), "sets_true" if is_bool else "value")]


def dataclass_flags(name, exclude, classes, seen=None):
    seen = seen or set()
    node = classes.get(name)
    if node is None or name in seen:
        return []
    seen.add(name)
    flags = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            flags += dataclass_flags(base.id, exclude, classes, seen)
    for statement in node.body:
        if (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                and statement.target.id not in exclude
                and not ast.unparse(statement.annotation).startswith("ClassVar")):
            flags += [(flag, (statement.target.id, kind))
                      for flag, kind in field_flags(statement)]
    return flags


def cpp_file(destinations, described):
    names = sorted(destinations)
    renamed = sorted((flag, dest, kind) for flag, (dest, kind) in destinations.items()
                     if dest != flag.replace("-", "_"))
    lines = [
        "// Every flag Megatron-LM's training entry points accept, so the parser can tell a "
        "Megatron flag",
        "// it ignores (logging, data, checkpointing, ...) from a flag that is not Megatron's "
        "at all.",
        "//",
        "// GENERATED by scripts/generate_megatron_flag_names.py from NVIDIA/Megatron-LM "
        f"{described};",
        "// do not edit. Regenerate from a Megatron-LM already on disk (nothing is downloaded),",
        "// e.g. the bare repository `fetch github:NVIDIA/Megatron-LM` leaves, with",
        "//   scripts/generate_megatron_flag_names.py --megatron-git DIR --commit COMMIT |",
        "//     clang-format --assume-filename=megatron_flag_names.cpp",
        "// and its output as this file.",
        "// Sources: add_argument() in megatron/training/arguments.py and",
        "// megatron/post_training/arguments.py, and the dataclass fields arguments.py turns into",
        "// flags with ArgumentGroupFactory (megatron/training/argument_utils.py). Names without",
        "// the leading \"--\", sorted for binary search; and each flag whose destination (the",
        "// argument's name in print_args and argument dumps) is not its own name.",
        '#include "formats/megatron_flag_names.hpp"',
        "",
        "#include <algorithm>",
        "#include <array>",
        "#include <string_view>",
        "",
        "namespace megamem::formats {",
        "namespace {",
        "",
        f"constexpr std::array<std::string_view, {len(names)}> kMegatronFlagNames = {{",
    ]
    lines += [f'    "{name}",' for name in names]
    lines += [
        "};",
        "",
        "// Sorted by flag.",
        f"constexpr std::array<RenamedDestination, {len(renamed)}> kRenamedDestinations = {{{{",
    ]
    lines += [f'    {{"{flag}", "{dest}", DestinationAction::{kind}}},' for flag, dest, kind in renamed]
    lines += [
        "}};",
        "",
        "}  // namespace",
        "",
        "bool is_megatron_flag(std::string_view name_without_dashes) {",
        "  return std::binary_search(kMegatronFlagNames.begin(), kMegatronFlagNames.end(),",
        "                            name_without_dashes);",
        "}",
        "",
        "std::size_t megatron_flag_count() { return kMegatronFlagNames.size(); }",
        "",
        "std::span<const RenamedDestination> renamed_destinations() { return kRenamedDestinations; }",
        "",
        "}  // namespace megamem::formats",
    ]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser()
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--megatron-dir", help="a Megatron-LM checkout")
    where.add_argument("--megatron-git", help="a Megatron-LM git repository (may be bare)")
    parser.add_argument("--commit", default="HEAD", help="with --megatron-git")
    args = parser.parse_args()
    source = Source(args.megatron_dir, args.megatron_git, args.commit)

    flags = {}
    uses = []
    for path in ARGUMENT_FILES:
        text = source.read(path)
        if text is None:
            sys.exit(f"generate_megatron_flag_names: {path} not found in {source.describe()}")
        tree = ast.parse(text)
        flags.update(add_argument_flags(tree))
        uses += factory_uses(tree)
    classes = class_definitions(source)
    for name, exclude in uses:
        if name not in classes:
            sys.exit(f"generate_megatron_flag_names: dataclass {name} not found")
        for flag, dest in dataclass_flags(name, exclude, classes):
            flags.setdefault(flag, dest)
    sys.stdout.write(cpp_file(flags, source.describe()))


if __name__ == "__main__":
    main()
