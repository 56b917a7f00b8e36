#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "hash/fast64.h"
#include "text/normalize.h"
#include "text/shingle.h"
#include "text/utf8.h"

using namespace neardup;

static std::vector<uint32_t> DecodeAll(const std::string& s) {
  std::vector<uint32_t> out;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  const uint8_t* end = p + s.size();
  while (p < end) {
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);
    out.push_back(c);
  }
  return out;
}

static std::vector<std::string> Shingles(const TextOptions& o, const std::string& text) {
  Shingler s(o);
  s.Reset(text);
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size(); i++) out.emplace_back(s[i]);
  return out;
}

TEST(utf8_maximal_subparts) {
  // The WHATWG examples: each maximal subpart is one U+FFFD.
  using V = std::vector<uint32_t>;
  EXPECT(DecodeAll("a\xF0\x9F\x98\x80" "b") == (V{'a', 0x1F600, 'b'}));
  EXPECT(DecodeAll("\xF0\x9F\x98") == (V{0xFFFD}));                      // truncated 4-byte: one
  EXPECT(DecodeAll("\xC0\xAF") == (V{0xFFFD, 0xFFFD}));                  // overlong: two
  EXPECT(DecodeAll("\xED\xA0\x80") == (V{0xFFFD, 0xFFFD, 0xFFFD}));      // surrogate: three
  EXPECT(DecodeAll("\xF4\x90\x80\x80") == (V{0xFFFD, 0xFFFD, 0xFFFD, 0xFFFD}));
  EXPECT(DecodeAll("\xE2\x82" "A") == (V{0xFFFD, 'A'}));
  EXPECT(DecodeAll(std::string("\0x", 2)) == (V{0, 'x'}));
  EXPECT(utf8::IsValid(reinterpret_cast<const uint8_t*>("h\xC3\xA9llo"), 6));
  EXPECT(!utf8::IsValid(reinterpret_cast<const uint8_t*>("h\xC3llo"), 5));
  EXPECT_EQ(utf8::FirstInvalid(reinterpret_cast<const uint8_t*>("abcdefghij\xFF"), 11), 10u);
}

TEST(json_string_as_javascript_writes_it) {
  auto js = [](const std::string& in) {
    std::vector<uint8_t> out;
    utf8::AppendJsonString(reinterpret_cast<const uint8_t*>(in.data()), in.size(), &out);
    return std::string(out.begin(), out.end());
  };
  EXPECT(js("") == "\"\"");
  EXPECT(js("plain text ~") == "\"plain text ~\"");
  EXPECT(js("q\"b\\s/") == "\"q\\\"b\\\\s/\"");
  EXPECT(js("\b\t\n\f\r") == "\"\\b\\t\\n\\f\\r\"");
  EXPECT(js(std::string("\x00\x01\x1f\x7f", 4)) == "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT(js("h\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80") == "\"h\xC3\xA9 \xE2\x80\xA8 \xF0\x9F\x98\x80\"");  // kept as UTF-8
  // invalid bytes: one U+FFFD per maximal subpart, as Buffer.toString('utf8')
  EXPECT(js("a\x80" "b") == "\"a\xEF\xBF\xBD" "b\"");
  EXPECT(js("\xE2\x82z") == "\"\xEF\xBF\xBDz\"");
  EXPECT(js("\xC0\xAF") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT(js("\xED\xA0\x80") == "\"\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\"");
  EXPECT(js("\xF0\x9F\x98") == "\"\xEF\xBF\xBD\"");
}

TEST(classes_and_lower) {
  EXPECT(text::IsSpace(' ') && text::IsSpace(0x85) && text::IsSpace(0x3000) && text::IsSpace(0x1f));
  EXPECT(!text::IsSpace(0xFEFF) && !text::IsSpace('a'));
  EXPECT(text::IsWord('_') && text::IsWord(0xE9) && text::IsWord(0x4E00) && text::IsWord(0x0663));
  EXPECT(!text::IsWord(0x301) && !text::IsWord('-'));
  EXPECT(text::IsPunct('!') && text::IsPunct(0x3001) && !text::IsPunct('$'));
  uint32_t out[3];
  EXPECT_EQ(text::Lower('Q', out), 1u);
  EXPECT_EQ(out[0], uint32_t('q'));
  EXPECT_EQ(text::Lower(0xC9, out), 1u);
  EXPECT_EQ(out[0], 0xE9u);
  EXPECT_EQ(text::Lower(0x130, out), 2u);  // İ -> i + combining dot above
  EXPECT_EQ(out[0], uint32_t('i'));
  EXPECT_EQ(out[1], 0x307u);
  EXPECT_EQ(text::Lower(0x3A3, out), 1u);
  EXPECT_EQ(out[0], 0x3C3u);
}

TEST(char_shingles) {
  TextOptions o;
  o.n = 3;
  EXPECT((Shingles(o, "abcd") == std::vector<std::string>{"abc", "bcd"}));
  EXPECT((Shingles(o, "ab") == std::vector<std::string>{"ab"}));
  EXPECT(Shingles(o, "").empty());
  EXPECT((Shingles(o, "h\xC3\xA9llo") == std::vector<std::string>{"h\xC3\xA9l", "\xC3\xA9ll", "llo"}));
  EXPECT((Shingles(o, "a\xFF" "bc") == std::vector<std::string>{"a\xEF\xBF\xBD" "b", "\xEF\xBF\xBD" "bc"}));
  o.short_text = ShortText::kNone;
  EXPECT(Shingles(o, "ab").empty());
  o.short_text = ShortText::kWhole;
  o.lowercase = true;
  o.fold_space = true;
  o.strip_punct = true;
  EXPECT((Shingles(o, "  A,b \t\n C!  ") == std::vector<std::string>{"ab ", "b c"}));
}

TEST(word_shingles) {
  TextOptions o;
  o.unit = TextUnit::kWord;
  o.n = 2;
  EXPECT((Shingles(o, "  the quick\tbrown\n\nfox ") == std::vector<std::string>{"the quick", "quick brown", "brown fox"}));
  EXPECT((Shingles(o, "one") == std::vector<std::string>{"one"}));
  EXPECT(Shingles(o, " \t ").empty());
  o.split = WordSplit::kNonWord;
  o.lowercase = true;
  EXPECT((Shingles(o, "Hello, World! It's") == std::vector<std::string>{"hello world", "world it", "it s"}));
}

// The unicode split's units, per script, against a hand-written table (docs/languages.md).
static std::string Units(const TextOptions& base, const std::string& text) {
  TextOptions o = base;
  o.unit = TextUnit::kWord;
  o.n = 1;
  o.split = WordSplit::kUnicode;
  std::string out;
  for (const std::string& u : Shingles(o, text)) out += (out.empty() ? "" : "|") + u;
  return out;
}

TEST(unicode_word_units_per_script) {
  TextOptions o;
  struct Case {
    const char* text;
    const char* chars;    // ClusterUnit::kChars
    const char* bigrams;  // ClusterUnit::kBigrams (nullptr: same as chars)
  };
  const Case cases[] = {
      // English: apostrophes and periods inside words (MidNumLet), digits with separators (MidNum), '_' joins
      {"Don't stop: e.g. 3.14, 1,000 and a_b! end.", "Don't|stop|e.g|3.14|1,000|and|a_b|end", nullptr},
      {"it's 'quoted' x.y. 1..2 ab:cd", "it's|quoted|x.y|1|2|ab:cd", nullptr},
      {"can\xE2\x80\x99t", "can\xE2\x80\x99t", nullptr},  // U+2019
      // Russian
      {"\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80!",
       "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82|\xD0\xBC\xD0\xB8\xD1\x80", nullptr},
      // Hindi: vowel signs and virama (marks) stay in the word (the nonword split cut them out)
      {"\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\x82\xE0\xA4\xA6\xE0\xA5\x80 \xE0\xA4\xAD\xE0\xA4\xBE\xE0\xA4\xB7\xE0\xA4\xBE",
       "\xE0\xA4\xB9\xE0\xA4\xBF\xE0\xA4\x82\xE0\xA4\xA6\xE0\xA5\x80|\xE0\xA4\xAD\xE0\xA4\xBE\xE0\xA4\xB7\xE0\xA4\xBE", nullptr},
      // Arabic with a diacritic (U+064E) and the Arabic comma (U+060C, MidNum: a separator between letters)
      {"\xD9\x83\xD9\x8E\xD8\xAA\xD8\xA8\xD8\x8C \xD9\x82\xD9\x84\xD9\x85", "\xD9\x83\xD9\x8E\xD8\xAA\xD8\xA8|\xD9\x82\xD9\x84\xD9\x85", nullptr},
      // Korean: spaced, Hangul syllables are letters
      {"\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4 \xEB\xAC\xB8\xEC\x9E\xA5", "\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4|\xEB\xAC\xB8\xEC\x9E\xA5", nullptr},
      // Chinese: one unit per ideograph; bigrams overlap; punctuation (U+3002) ends a run
      {"\xE4\xB8\xAD\xE6\x96\x87\xE5\xAD\x97\xE3\x80\x82\xE5\xA5\xBD",
       "\xE4\xB8\xAD|\xE6\x96\x87|\xE5\xAD\x97|\xE5\xA5\xBD",
       "\xE4\xB8\xAD\xE6\x96\x87|\xE6\x96\x87\xE5\xAD\x97|\xE5\xA5\xBD"},
      // Japanese: kana, the prolonged sound mark U+30FC, Latin and digits between
      {"\xE3\x81\x93\xE3\x82\x8C\xE3\x83\x86\xE3\x83\xBC\xE3\x83\x97" "abc123\xE6\x97\xA5",
       "\xE3\x81\x93|\xE3\x82\x8C|\xE3\x83\x86|\xE3\x83\xBC|\xE3\x83\x97|abc123|\xE6\x97\xA5",
       "\xE3\x81\x93\xE3\x82\x8C|\xE3\x82\x8C\xE3\x83\x86|\xE3\x83\x86\xE3\x83\xBC|\xE3\x83\xBC\xE3\x83\x97|abc123|\xE6\x97\xA5"},
      // Thai: a consonant keeps its marks (U+0E34, U+0E48); U+0E32 is a letter of its own
      {"\xE0\xB8\x81\xE0\xB8\xB4\xE0\xB9\x88\xE0\xB8\x99\xE0\xB8\xB2",
       "\xE0\xB8\x81\xE0\xB8\xB4\xE0\xB9\x88|\xE0\xB8\x99|\xE0\xB8\xB2",
       "\xE0\xB8\x81\xE0\xB8\xB4\xE0\xB9\x88\xE0\xB8\x99|\xE0\xB8\x99\xE0\xB8\xB2"},
      // a mark after a separator is dropped; a lone cluster is a unit in both modes
      {"a \xCC\x81 b \xE5\xA5\xBD", "a|b|\xE5\xA5\xBD", nullptr},
      {"", "", nullptr},
  };
  for (const Case& c : cases) {
    o.cjk = ClusterUnit::kChars;
    const std::string got = Units(o, c.text);
    if (got != c.chars) std::fprintf(stderr, "chars: '%s' -> '%s', want '%s'\n", c.text, got.c_str(), c.chars);
    EXPECT(got == c.chars);
    o.cjk = ClusterUnit::kBigrams;
    const std::string got2 = Units(o, c.text);
    const char* want2 = c.bigrams ? c.bigrams : c.chars;
    if (got2 != want2) std::fprintf(stderr, "bigrams: '%s' -> '%s', want '%s'\n", c.text, got2.c_str(), want2);
    EXPECT(got2 == want2);
  }
  // lower-casing and stripped punctuation (which does not end a word)
  o.cjk = ClusterUnit::kChars;
  o.lowercase = true;
  EXPECT(Units(o, "It's A.B") == "it's|a.b");
  o.strip_punct = true;
  EXPECT(Units(o, "It's A.B, c") == "its|ab|c");
  // word 2-grams are the units joined by one space
  TextOptions w;
  w.unit = TextUnit::kWord;
  w.n = 2;
  w.split = WordSplit::kUnicode;
  EXPECT((Shingles(w, "\xE4\xB8\xAD\xE6\x96\x87 ok") == std::vector<std::string>{"\xE4\xB8\xAD \xE6\x96\x87", "\xE6\x96\x87 ok"}));
}

TEST(hash_stream_dedupe) {
  TextOptions o;
  o.n = 2;
  Shingler s(o);
  const std::string doc = "abababx";  // spans point into it: it must outlive them
  s.Reset(doc);
  std::vector<uint64_t> all, uniq;
  HashDedup dd;
  AppendShingleHashes<uint64_t>(s, ShingleHash::kFast64, 0, false, &dd, &all);
  AppendShingleHashes<uint64_t>(s, ShingleHash::kFast64, 0, true, &dd, &uniq);
  EXPECT_EQ(all.size(), 6u);
  EXPECT_EQ(uniq.size(), 3u);  // ab, ba, bx in first-occurrence order
  EXPECT_EQ(uniq[0], fast64::Hash("ab", 2, 0));
  EXPECT_EQ(uniq[1], fast64::Hash("ba", 2, 0));
  EXPECT_EQ(uniq[2], fast64::Hash("bx", 2, 0));
}

// Reference word tokenizer, one code point at a time with no fast paths: decode, drop punctuation
// (strip), lower-case, split, join the tokens with single spaces.
static std::vector<std::string> RefWords(const std::string& in, const TextOptions& o) {
  std::vector<std::string> toks;
  std::string cur;
  bool have = false;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(in.data());
  const uint8_t* end = p + in.size();
  auto put = [&](uint32_t c) {
    const bool sep = o.split == WordSplit::kNonWord ? !text::IsWord(c) : text::IsSpace(c);
    if (sep) {
      if (have) toks.push_back(cur);
      cur.clear();
      have = false;
      return;
    }
    uint8_t b[4];
    cur.append(reinterpret_cast<const char*>(b), utf8::Encode(c, b));
    have = true;
  };
  while (p < end) {
    uint32_t c;
    bool valid;
    p += utf8::Decode(p, end, &c, &valid);
    if (o.strip_punct && text::IsPunct(c)) continue;
    uint32_t low[3];
    const size_t k = o.lowercase ? text::Lower(c, low) : (low[0] = c, 1);
    for (size_t j = 0; j < k; j++) put(low[j]);
  }
  if (have) toks.push_back(cur);
  return toks;
}

TEST(word_tokenizer_matches_reference) {
  // Long documents (the vector path takes 64 bytes at a time) mixing ASCII words, runs of every ASCII
  // separator, punctuation and non-ASCII letters, spaces and case pairs at varying offsets.
  const char* pieces[] = {"a", "Hello", "WORLD", "x_y", "don't", "e-mail", "12345", "\xc3\x89t\xc3\xa9",
                          "\xc4\xb0stanbul", "\xe2\x80\x83", "\xc2\xa0", "\xc2\x85", " ", "  ", "\t", "\n\r",
                          "\x1c", "\x1f", "\x0b\x0c", ",", "...", "\xe2\x80\x94", "\xff", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"};
  std::mt19937 rng(11);
  for (int round = 0; round < 400; round++) {
    std::string doc;
    const size_t target = rng() % 400;
    const bool ascii_only = round % 3 == 0;
    while (doc.size() < target) {
      const size_t i = rng() % (sizeof(pieces) / sizeof(pieces[0]));
      if (ascii_only && (static_cast<uint8_t>(pieces[i][0]) >= 0x80)) continue;
      doc += pieces[i];
    }
    for (int opt = 0; opt < 8; opt++) {
      TextOptions o;
      o.unit = TextUnit::kWord;
      o.n = 1 + opt % 3;
      o.lowercase = opt & 1;
      o.split = (opt & 2) ? WordSplit::kNonWord : WordSplit::kWhitespace;
      o.strip_punct = (opt & 4) != 0;
      const std::vector<std::string> toks = RefWords(doc, o);
      std::string joined;
      for (size_t t = 0; t < toks.size(); t++) joined += (t ? " " : "") + toks[t];
      Shingler s(o);
      s.Reset(doc);
      bool ok = s.text() == joined && s.units() == toks.size();
      for (size_t i = 0; ok && i < s.size() && toks.size() >= o.n; i++) {
        std::string want = toks[i];
        for (size_t j = 1; j < o.n; j++) want += " " + toks[i + j];
        ok = s[i] == want;
      }
      EXPECT(ok);
    }
  }
}

// Char units with normalisation: the ASCII fast paths (lower-casing eight bytes at a time; the strip/fold loop)
// and the ASCII runs inside the general path give the units a per-code-point reference gives, for every ASCII
// byte at every offset, with and without a non-ASCII character somewhere in the document.
TEST(char_normalisation_matches_reference) {
  std::mt19937 rng(3);
  for (int round = 0; round < 3000; round++) {
    std::string doc;
    const size_t len = rng() % 70;
    for (size_t i = 0; i < len; i++) doc += static_cast<char>(round % 4 == 0 ? (i * 7 + round) % 128 : 32 + rng() % 96);
    if (round % 5 == 1 && !doc.empty()) doc.insert(rng() % doc.size(), round % 2 ? "\xc3\x89" : "\xe2\x80\x83");
    for (int opt = 1; opt < 8; opt++) {
      TextOptions o;
      o.n = 3;
      o.lowercase = opt & 1;
      o.strip_punct = (opt & 2) != 0;
      o.fold_space = (opt & 4) != 0;
      // reference, one code point at a time
      std::vector<uint32_t> units;
      bool pending = false;
      const uint8_t* p = reinterpret_cast<const uint8_t*>(doc.data());
      const uint8_t* end = p + doc.size();
      while (p < end) {
        uint32_t c;
        bool valid;
        p += utf8::Decode(p, end, &c, &valid);
        uint32_t low[3] = {c};
        const size_t k = o.lowercase ? text::Lower(c, low) : 1;
        for (size_t j = 0; j < k; j++) {
          if (o.strip_punct && text::IsPunct(low[j])) continue;
          if (o.fold_space && text::IsSpace(low[j])) {
            pending = !units.empty();
            continue;
          }
          if (pending) units.push_back(' ');
          pending = false;
          units.push_back(low[j]);
        }
      }
      std::string want;
      for (uint32_t u : units) {
        uint8_t b[4];
        want.append(reinterpret_cast<const char*>(b), utf8::Encode(u, b));
      }
      Shingler s(o);
      s.Reset(doc);
      EXPECT(s.text() == want);
      EXPECT_EQ(s.units(), units.size());
    }
  }
}

TEST_MAIN("text")
