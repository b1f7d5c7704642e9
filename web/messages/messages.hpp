// The page's words in two languages: one table (web/messages/messages.tsv) with an English
// and a Chinese column, keyed by the English text, so a string added to the page later is
// translated by adding one row. Platform-free (the unit tests link it natively).
//
// Keys are what the page would show in English: literals ("Copy link"), printf formats
// ("limiting: PP rank %d": the Chinese keeps the conversions in the same order), and
// templates for messages the core builds ("TP {0} does not divide {1} heads": {N} matches
// any text and is put back where the Chinese names it). The CLI and JSON stay English; only
// the page asks this table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace megamem::web {

enum class Language { en, zh };

// "en" / "zh" (the link's lang= value and state().language).
const char* language_code(Language language);

// The language the page shows; English until set.
void set_language(Language language);
Language current_language();

// A literal in the current language: the English text itself in English, its row's
// Chinese otherwise (the English when the table has no row: recorded as untranslated).
// The pointer stays valid for the program's life. "Label##id" keeps its ImGui id in every
// language ("标签###Label##id").
const char* tr(const char* english);

// Text built at run time (core errors, warnings, notes): exact rows first, then templates.
const std::string& tr_text(const std::string& english);

// English texts the page asked for in Chinese that the table lacks (tests read them).
const std::vector<std::string>& untranslated();

// --- the table itself, for tests and the font subset ------------------------------------------
struct MessageRow {
  std::string english;  // empty for a row looked up whole: the page embeds only its key
  std::string chinese;
};
// Every row of the embedded table (scripts/compile_messages.py), in file order.
const std::vector<MessageRow>& message_rows();
// False for text with nothing to translate: no letters, a Megatron flag, a key or setting
// written as one word with '_', '=' or '.' ("expandable_segments:True", "m.layers"), or
// Chinese already (so that translating twice is harmless).
bool needs_translation(const std::string& text);
// The Chinese for `english` by the table (exact row, or a template), without recording a miss.
bool translate(const std::string& english, std::string* chinese);

}  // namespace megamem::web
