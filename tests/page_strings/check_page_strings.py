#!/usr/bin/env python3
"""Every English text the page draws goes through the message table (issue #28 item 9).

The Chinese page showed "keep" and "rank by GiB saved per % of step time" in English while
state().untranslated was empty: they were passed to Dear ImGui as literals, past tr(), so the
table never saw them. This scans web/*.cpp for ImGui calls that draw a string literal (text,
labels of buttons, checkboxes, tooltips, headers) and fails on any literal with a word in it
that is not a unit or the product's name. ID-only labels ("##name") and the part after "##"
are not drawn. Usage: check_page_strings.py WEB_DIR
"""
import pathlib
import re
import sys

# ImGui functions whose first argument is drawn text (or a label drawn beside a widget).
DRAWING = ("Text", "TextUnformatted", "TextWrapped", "TextDisabled", "BulletText", "LabelText",
           "Button", "SmallButton", "Checkbox", "RadioButton", "Selectable", "MenuItem",
           "SetTooltip", "CollapsingHeader", "TreeNode", "BeginMenu", "BeginTabItem",
           "SliderInt", "SliderFloat", "InputText", "InputInt", "InputDouble", "Combo")
CALL = re.compile(r"ImGui::(%s)\(\s*\"((?:[^\"\\]|\\.)*)\"" % "|".join(DRAWING))
COLORED = re.compile(r"ImGui::TextColored\([^,]+,\s*\"((?:[^\"\\]|\\.)*)\"")
# Words a page in any language shows as they are (design/ui.md: units and names stay).
KEPT = {"GiB", "MiB", "KiB", "GB", "s", "ms", "megamem"}


def drawn_words(literal):
    visible = literal.split("##")[0]
    visible = re.sub(r"\\x[0-9a-fA-F]{2}|\\.", " ", visible)  # escapes draw no word
    visible = re.sub(r"%[-+ #0]*[0-9*]*(\.[0-9*]+)?[a-zA-Z%]", " ", visible)  # conversions
    return [w for w in re.findall(r"[A-Za-z]{2,}", visible) if w not in KEPT]


def main():
    web = pathlib.Path(sys.argv[1])
    found = []
    for path in sorted(web.glob("*.cpp")):
        source = path.read_text(encoding="utf-8")  # whole text: a call may span lines
        for match in list(CALL.finditer(source)) + list(COLORED.finditer(source)):
            literal = match.group(match.lastindex)
            if drawn_words(literal):
                number = source.count("\n", 0, match.start()) + 1
                found.append(f"{path.name}:{number}: \"{literal}\" is drawn without tr()")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} text(s) bypass the message table: wrap them in tr() and add a row "
              "to web/messages/messages.tsv")
        return 1
    print("every drawn text goes through tr()")
    return 0


if __name__ == "__main__":
    sys.exit(main())
