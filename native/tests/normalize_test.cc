// Unicode normalisation (text/normalization.h) on known cases; test/normalize.test.ts compares it with
// String.prototype.normalize on random strings from every block.
#include <string>
#include <vector>

#include "check.h"
#include "text/normalization.h"
#include "text/shingle.h"
#include "text/utf8.h"

using namespace neardup;
using text::NormalForm;

static std::string Norm(NormalForm f, const std::string& s, bool* invalid = nullptr) {
  text::Normalizer n;
  return n.Normalize(f, s, invalid);
}

static std::string Repeat(const std::string& s, int k) {
  std::string out;
  for (int i = 0; i < k; i++) out += s;
  return out;
}

TEST(compatibility_forms) {
  EXPECT(Norm(NormalForm::kNfkc, "\uFF46\uFF55\uFF4C\uFF4C") == "full");  // full-width
  EXPECT(Norm(NormalForm::kNfc, "\uFF46\uFF55\uFF4C\uFF4C") == "\uFF46\uFF55\uFF4C\uFF4C");
  EXPECT(Norm(NormalForm::kNfkc, "\uFB01\uFB03") == "fiffi");  // ligatures
  EXPECT(Norm(NormalForm::kNfc, "\uFB01") == "\uFB01");
  EXPECT(Norm(NormalForm::kNfkc, "x\u00B2 \u2165") == "x2 VI");
  EXPECT(Norm(NormalForm::kNfkc, "\uFF76\uFF9E") == "\u30AC");  // half-width katakana + voiced mark compose
  EXPECT(Norm(NormalForm::kNfkc, "\uFDFA").size() == 33);     // the longest decomposition: 18 code points
}

TEST(canonical_composition_and_ordering) {
  EXPECT(Norm(NormalForm::kNfc, "Cafe\u0301 au lait") == "Caf\u00E9 au lait");
  EXPECT(Norm(NormalForm::kNfc, "a\u0302\u0323") == "\u1EAD");  // reordered to a + 0323 + 0302, then composed
  EXPECT(Norm(NormalForm::kNfc, "q\u0307\u0323") == "q\u0323\u0307");  // reordered, nothing to compose
  EXPECT(Norm(NormalForm::kNfc, "\u00E9") == "\u00E9");
  EXPECT(Norm(NormalForm::kNfc, "\u0B47\u0B3E") == "\u0B4B");        // two starters compose
  EXPECT(Norm(NormalForm::kNfc, "\u0B47\u0300\u0B3E") == "\u0B47\u0300\u0B3E");  // blocked by the mark
  // a long run of marks (the counting sort): a, then 40 x (0301 0323)
  EXPECT(Norm(NormalForm::kNfc, "a" + Repeat("\u0301\u0323", 40)) == "\u1EA1" + Repeat("\u0323", 39) + Repeat("\u0301", 40));
  // marks at the start of the text (no starter to compose with)
  EXPECT(Norm(NormalForm::kNfc, "\u0301\u0323e") == "\u0323\u0301e");
}

TEST(composition_exclusions) {
  EXPECT(Norm(NormalForm::kNfc, "\u0958") == "\u0915\u093C");  // excluded: stays decomposed
  EXPECT(Norm(NormalForm::kNfc, "\u0915\u093C") == "\u0915\u093C");
  EXPECT(Norm(NormalForm::kNfc, "\u212B") == "\u00C5");  // singletons
  EXPECT(Norm(NormalForm::kNfc, "\u2126") == "\u03A9");
  EXPECT(Norm(NormalForm::kNfc, "\u0344") == "\u0308\u0301");  // non-starter decomposition
}

TEST(hangul) {
  EXPECT(Norm(NormalForm::kNfc, "\u1100\u1161\u11A8") == "\uAC01");  // L V T
  EXPECT(Norm(NormalForm::kNfc, "\uAC00\u11A8") == "\uAC01");        // LV + T
  EXPECT(Norm(NormalForm::kNfc, "\uAC01\u11A8") == "\uAC01\u11A8");  // LVT takes no T
  EXPECT(Norm(NormalForm::kNfc, "\u1100\u0301\u1161") == "\u1100\u0301\u1161");  // blocked
  EXPECT(Norm(NormalForm::kNfc, "\uD55C\uAD6D\uC5B4") == "\uD55C\uAD6D\uC5B4");
  EXPECT(Norm(NormalForm::kNfkc, "\u3131\u314F") == "\uAC00");  // compatibility jamo -> L V -> LV
}

TEST(casefold) {
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\uFF26\uFF35\uFF2C\uFF2C") == "full");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "Hello WORLD") == "hello world");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u0130") == "i\u0307");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u1E9E") == "\u00DF");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u00C5\u212B") == "\u00E5\u00E5");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u03A3") == "\u03C3");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u216B") == "xii");
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\u1E9B\u0323") == "\u1E69");
}

TEST(invalid_utf8) {
  bool bad = false;
  EXPECT(Norm(NormalForm::kNfc, "a\xC0\xAF" "b", &bad) == "a\uFFFD\uFFFD" "b");
  EXPECT(bad);
  EXPECT(Norm(NormalForm::kNfkc, "e\xCC", &bad) == "e\uFFFD");  // truncated U+0301
  EXPECT(Norm(NormalForm::kNfc, "e\xFF\u0301", &bad) == "e\uFFFD\u0301");  // U+FFFD is a starter
  EXPECT(Norm(NormalForm::kNfkcCasefold, "\xED\xA0\x80" "A", &bad) == "\uFFFD\uFFFD\uFFFD" "a");
  bad = false;
  EXPECT(Norm(NormalForm::kNfc, "e\xCC\x81", &bad) == "\u00E9");
  EXPECT(!bad);
}

TEST(idempotent_and_within_bounds) {
  const std::vector<std::string> texts = {"\uFDFA\uFB03", "a" + Repeat("\u0301\u0323", 40), "\u0130\u1E9E\u216B",
                                          "\u0344\u0958\u1100\u1161", "\xC0\xAF\xFF"};
  for (NormalForm f : {NormalForm::kNfc, NormalForm::kNfkc, NormalForm::kNfkcCasefold}) {
    for (const std::string& t : texts) {
      const std::string a = Norm(f, t);
      EXPECT(Norm(f, a) == a);
      EXPECT(a.size() <= text::NormalizedBytesBound(f, t.size()));
      size_t cps = 0;
      EXPECT(utf8::CountIfValid(reinterpret_cast<const uint8_t*>(a.data()), a.size(), &cps));
      EXPECT(cps <= text::NormalizedCodePointsBound(f, t.size()));
    }
  }
}

TEST(shingles_under_nfkc) {
  TextOptions o;
  o.n = 3;
  o.normalize = NormalForm::kNfkc;
  Shingler a(o), b(o);
  a.Reset("\uFF46\uFF55\uFF4C\uFF4C");
  b.Reset("full");
  EXPECT(a.text() == "full");
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); i++) EXPECT(a[i] == b[i]);
  a.Reset("f\xFFll");
  EXPECT(a.had_invalid_utf8());
  EXPECT(a.text() == "f\uFFFDll");
  a.Reset("full");
  EXPECT(!a.had_invalid_utf8());
  o.unit = TextUnit::kWord;
  o.n = 1;
  o.normalize = NormalForm::kNfkcCasefold;
  Shingler w(o);
  w.Reset("\uFF26\uFF35\uFF2C\uFF2C \uFB01ne");
  EXPECT_EQ(w.size(), 2u);
  EXPECT(w.size() == 2 && w[0] == "full" && w[1] == "fine");
  bool exact;
  EXPECT(ShingleBound(o, reinterpret_cast<const uint8_t*>("\uFDFA"), 3, &exact) >= 4);  // 4 words from 3 bytes
  w.Reset("\uFDFA");
  EXPECT_EQ(w.size(), 4u);
}

TEST_MAIN("normalize")
