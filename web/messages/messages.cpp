// The message table; see messages.hpp.
#include "messages.hpp"

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace megamem::web::assets {
extern const unsigned char kMessageTable[];  // generated: web/messages/messages.tsv
extern const std::size_t kMessageTable_size;
}  // namespace megamem::web::assets

namespace megamem::web {
namespace {

// A row whose English holds {0}, {1}...: the literal pieces around the placeholders.
struct Template {
  std::vector<std::string> pieces;  // slots.size() + 1 pieces
  std::vector<std::size_t> slots;   // placeholder number between piece i and i + 1
  std::vector<bool> translated;     // {N*}: the matched text is itself translated
  std::string chinese;
};

struct Table {
  std::vector<MessageRow> rows;
  std::unordered_map<std::uint64_t, std::string> exact;  // by exact_key()
  std::vector<Template> templates;
};

// scripts/compile_messages.py's key of a row looked up whole: the FNV-1a hash of its English
// (32 bits) and the English's length in bytes.
std::uint64_t exact_key(std::string_view english) {
  std::uint32_t hash = 0x811C9DC5u;
  for (const char c : english) hash = (hash ^ static_cast<unsigned char>(c)) * 0x01000193u;
  return (std::uint64_t{english.size()} << 32) | hash;
}

// "<hash hex>:<length>" as the compiled table writes it; nullopt when the line is not one.
std::optional<std::uint64_t> parse_key(std::string_view cell) {
  const std::size_t colon = cell.find(':');
  if (colon != 8 || colon + 1 == cell.size()) return std::nullopt;
  std::uint64_t hash = 0;
  std::uint64_t length = 0;
  const auto hash_end = std::from_chars(cell.data(), cell.data() + colon, hash, 16);
  const auto length_end =
      std::from_chars(cell.data() + colon + 1, cell.data() + cell.size(), length);
  if (hash_end.ptr != cell.data() + colon || length_end.ptr != cell.data() + cell.size()) {
    return std::nullopt;
  }
  return (length << 32) | hash;
}

struct MessagesState {
  Language language = Language::en;
  std::unordered_map<std::string, std::string> literal_cache;  // tr(): shown text by key
  std::unordered_map<std::string, std::string> text_cache;     // tr_text()
  std::set<std::string> missed;
  std::vector<std::string> untranslated;
};
MessagesState messages;

// "\n", "\t" and "\\" in a cell are a newline, a tab and a backslash.
std::string unescape(std::string_view cell) {
  std::string out;
  for (std::size_t i = 0; i < cell.size(); ++i) {
    if (cell[i] == '\\' && i + 1 < cell.size()) {
      const char next = cell[++i];
      out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else {
      out += cell[i];
    }
  }
  return out;
}

// The pieces of "a {0} b {1*}" ("a ", " b ", ""), or nothing when it has no placeholder.
bool split_template(const std::string& english, Template* out) {
  std::size_t start = 0;
  for (std::size_t open = english.find('{'); open != std::string::npos;
       open = english.find('{', open + 1)) {
    const std::size_t close = english.find('}', open);
    const bool star = close == open + 3 && english[open + 2] == '*';
    if ((close != open + 2 && !star) || english[open + 1] < '0' || english[open + 1] > '9') {
      continue;
    }
    out->pieces.push_back(english.substr(start, open - start));
    out->slots.push_back(static_cast<std::size_t>(english[open + 1] - '0'));
    out->translated.push_back(star);
    start = close + 1;
  }
  out->pieces.push_back(english.substr(start));
  return !out->slots.empty();
}

Table parse_table() {
  Table table;
  const std::string_view text(reinterpret_cast<const char*>(assets::kMessageTable),
                              assets::kMessageTable_size);
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::size_t tab = line.find('\t');
    if (line.empty() || tab == std::string_view::npos) continue;
    if (line[0] == '\x01') {  // a row looked up whole: its key, not its English
      if (const auto key = parse_key(line.substr(1, tab - 1))) {
        table.rows.push_back({"", unescape(line.substr(tab + 1))});
        table.exact.emplace(*key, table.rows.back().chinese);
      }
      continue;
    }
    MessageRow row{unescape(line.substr(0, tab)), unescape(line.substr(tab + 1))};
    Template pattern;
    if (split_template(row.english, &pattern)) {
      pattern.chinese = row.chinese;
      table.templates.push_back(std::move(pattern));
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

const Table& table() {
  static const Table parsed = parse_table();
  return parsed;
}

// Matches placeholders i.. of `pattern` against text[at..]; fills `captures`. Placeholders
// match at least one character; each tries the places where the next piece follows, shortest
// first, the last one takes the rest. A {N*} capture must itself translate.
bool match_from(const Template& pattern, const std::string& text, std::size_t i, std::size_t at,
                std::vector<std::string>* captures) {
  if (i == pattern.slots.size()) return at == text.size();
  const std::string& next = pattern.pieces[i + 1];
  const bool last = i + 1 == pattern.slots.size();
  std::size_t found = last ? text.size() - std::min(text.size(), next.size()) : at;
  while (true) {
    found = last ? found : text.find(next, found + 1);
    if (found == std::string::npos || found <= at || (!last && next.empty())) return false;
    if (text.compare(found, next.size(), next) != 0) return false;
    std::string capture = text.substr(at, found - at);
    const bool ok =
        !pattern.translated[i] || !needs_translation(capture) || translate(capture, &capture);
    if (ok && match_from(pattern, text, i + 1, found + next.size(), captures)) {
      (*captures)[pattern.slots[i]] = std::move(capture);
      return true;
    }
    if (last) return false;
  }
}

bool match(const Template& pattern, const std::string& text, std::vector<std::string>* captures) {
  const std::string& first = pattern.pieces.front();
  if (text.compare(0, first.size(), first) != 0) return false;
  captures->assign(10, "");
  return match_from(pattern, text, 0, first.size(), captures);
}

std::string fill(const std::string& chinese, const std::vector<std::string>& captures) {
  std::string out;
  for (std::size_t i = 0; i < chinese.size(); ++i) {
    const bool slot = chinese[i] == '{' && i + 2 < chinese.size() && chinese[i + 2] == '}' &&
                      chinese[i + 1] >= '0' && chinese[i + 1] <= '9';
    if (slot) {
      out += captures[static_cast<std::size_t>(chinese[i + 1] - '0')];
      i += 2;
    } else {
      out += chinese[i];
    }
  }
  return out;
}

// A text that starts with a flag is Megatron flags ("--recompute-modules core_attn mlp"),
// unless a sentence follows ("--fp8-recipe mxfp8 runs on compute capability ..."): three
// words in a row of lowercase letters only, which flags with their values do not make.
bool prose_after_flag(const std::string& text) {
  int words_in_a_row = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view word = std::string_view(text).substr(start, end - start);
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(),
                                                    [](char c) { return c >= 'a' && c <= 'z'; });
    words_in_a_row = plain ? words_in_a_row + 1 : 0;
    if (words_in_a_row == 3) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool needs_translation(const std::string& text) {
  bool letter = false;
  bool key_mark = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letter = true;
    if (c == '=' || c == '_' || c == '.') key_mark = true;
    // U+3000..U+9FFF and U+FF00..U+FFEF: CJK punctuation, ideographs, full-width forms.
    if (c >= 0xE3 && c <= 0xE9) return false;
    if (c == 0xEF && i + 1 < text.size() &&
        (static_cast<unsigned char>(text[i + 1]) & 0xFC) == 0xBC) {
      return false;
    }
  }
  const bool key = key_mark && text.find(' ') == std::string::npos;
  return letter && !key && (text.rfind("--", 0) != 0 || prose_after_flag(text));
}

namespace {

void record_miss(const std::string& english) {
  if (messages.missed.insert(english).second) messages.untranslated.push_back(english);
}

// The Chinese of a literal key: "Label##id" translates the label and keeps the id.
std::string chinese_literal(const std::string& key) {
  const std::size_t hashes = key.find("##");
  const std::string visible = key.substr(0, hashes);
  std::string chinese;
  if (!needs_translation(visible)) return key;
  if (!translate(visible, &chinese)) {
    record_miss(visible);
    chinese = visible;
  }
  if (hashes == std::string::npos) return chinese;
  if (key.compare(hashes, 3, "###") == 0) return chinese + key.substr(hashes);
  return chinese + "###" + key;
}

}  // namespace

const char* language_code(Language language) { return language == Language::zh ? "zh" : "en"; }

void set_language(Language language) { messages.language = language; }
Language current_language() { return messages.language; }

namespace {

// Whether what the template's untranslated {N} placeholders took is names and numbers, not
// words that a more fitting template would translate.
bool plain_captures_are_no_prose(const Template& pattern,
                                 const std::vector<std::string>& captures) {
  for (std::size_t i = 0; i < pattern.slots.size(); ++i) {
    if (!pattern.translated[i] && needs_translation(captures[pattern.slots[i]])) return false;
  }
  return true;
}

}  // namespace

bool translate(const std::string& english, std::string* chinese) {
  const Table& rows = table();
  if (const auto it = rows.exact.find(exact_key(english)); it != rows.exact.end()) {
    *chinese = it->second;
    return true;
  }
  // The first template whose plain {N} captures are no prose, else the first that matches:
  // "{0}: {1*}" took "read the pretrain_gpt.py command: used lines ..." (before "read the
  // {0} command: {1*}") and left its first half in English.
  std::vector<std::string> captures;
  std::optional<std::string> first;
  for (const Template& pattern : rows.templates) {
    if (!match(pattern, english, &captures)) continue;
    if (plain_captures_are_no_prose(pattern, captures)) {
      *chinese = fill(pattern.chinese, captures);
      return true;
    }
    if (!first) first = fill(pattern.chinese, captures);
  }
  if (first) *chinese = std::move(*first);
  return first.has_value();
}

const char* tr(const char* english) {
  if (messages.language == Language::en || english == nullptr || english[0] == '\0') {
    return english;
  }
  const std::string key(english);
  auto it = messages.literal_cache.find(key);
  if (it == messages.literal_cache.end()) {
    it = messages.literal_cache.emplace(key, chinese_literal(key)).first;
  }
  return it->second.c_str();
}

const std::string& tr_text(const std::string& english) {
  if (messages.language == Language::en || english.empty()) return english;
  auto it = messages.text_cache.find(english);
  if (it == messages.text_cache.end()) {
    std::string chinese;
    if (!needs_translation(english)) {
      chinese = english;
    } else if (!translate(english, &chinese)) {
      record_miss(english);
      chinese = english;
    }
    it = messages.text_cache.emplace(english, std::move(chinese)).first;
  }
  return it->second;
}

const std::vector<std::string>& untranslated() { return messages.untranslated; }

const std::vector<MessageRow>& message_rows() { return table().rows; }

}  // namespace megamem::web
