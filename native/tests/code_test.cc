// Core tests of copied-code detection (code/): the lexers on comments, strings with escapes, template
// literals, raw strings, Python triple quotes and prefixes, preprocessor lines; winnowing against a naive
// per-window minimum and its guarantee by brute force (every shared run of >= w + k - 1 values between two
// random streams shares a fingerprint); and CodeCorpus::Match's regions against a brute-force list of the
// maximal shared runs of >= w + k - 1 normalised tokens (written here, all offset pairs compared).
#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "check.h"
#include "code/lexer.h"
#include "code/match.h"
#include "code/winnow.h"

using namespace neardup;
using namespace neardup::code;

namespace {

std::vector<Token> Lex(const std::string& s, Lang l, LexOptions o = LexOptions()) {
  std::vector<Token> t;
  Tokenize(reinterpret_cast<const uint8_t*>(s.data()), s.size(), l, o, &t);
  return t;
}

std::vector<std::string> Texts(const std::string& s, Lang l) {
  std::vector<std::string> out;
  for (const Token& t : Lex(s, l)) out.push_back(s.substr(t.begin, t.end - t.begin));
  return out;
}

std::string Join(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& x : v) r += (r.empty() ? "" : "|") + x;
  return r;
}

#define EXPECT_TEXTS(src, lang, want)                                                            \
  do {                                                                                           \
    const std::string got = Join(Texts(src, lang));                                              \
    if (got != (want)) {                                                                         \
      std::fprintf(stderr, "  %s:%d: got %s\n   want %s\n", __FILE__, __LINE__, got.c_str(), want); \
      check::Failures()++;                                                                       \
    }                                                                                            \
  } while (0)

}  // namespace

TEST(c_comments_strings_chars) {
  EXPECT_TEXTS("int a = 1; // x = \"no\"\n/* b = 2; \n */ char c = '\\'';", Lang::kC,
               "int|a|=|1|;|char|c|=|'\\''|;");
  EXPECT_TEXTS("s = \"a\\\"b // not a comment\"; t", Lang::kJava, "s|=|\"a\\\"b // not a comment\"|;|t");
  EXPECT_TEXTS("x >>>= y->z; a::b", Lang::kCpp, "x|>>>=|y|->|z|;|a|::|b");
  EXPECT_TEXTS("#include <x.h>\n  #define M(a) \\\n  a+1\nint y;", Lang::kC, "#include <x.h>|#define M(a) \\\n  a+1|int|y|;");
  EXPECT_TEXTS("auto s = R\"x(a)\" b)x\"; 1'000'000", Lang::kCpp, "auto|s|=|R\"x(a)\" b)x\"|;|1'000'000");
  EXPECT_TEXTS("0x1p-3 1.5e+10f .5 a.b", Lang::kC, "0x1p-3|1.5e+10f|.5|a|.|b");
  // lines and kinds
  std::vector<Token> t = Lex("a\n/* \n */ \"s\"\n'c'", Lang::kC);
  EXPECT_EQ(t.size(), size_t(3));
  EXPECT_EQ(t[0].line, 1u);
  EXPECT_EQ(t[1].line, 3u);
  EXPECT_EQ(t[2].line, 4u);
  EXPECT(t[0].kind == Kind::kIdentifier && t[0].value == kIdentifierValue);
  EXPECT(t[1].kind == Kind::kString && t[1].value == kStringValue);
  EXPECT(t[2].kind == Kind::kChar && t[2].value == kCharValue);
  EXPECT_EQ(t[1].begin, 10u);
  EXPECT_EQ(t[1].end, 13u);
  // keywords and operators keep their text, identifiers become one symbol unless kept
  std::vector<Token> u = Lex("if (x) return y;", Lang::kC);
  EXPECT(u[0].kind == Kind::kKeyword && u[2].value == u[5].value);
  LexOptions keep;
  keep.keep_identifiers = true;
  std::vector<Token> v = Lex("if (x) return y;", Lang::kC, keep);
  EXPECT(v[2].value != v[5].value && v[2].value != kIdentifierValue);
  EXPECT(Lex("1", Lang::kC)[0].value == Lex("2", Lang::kC)[0].value);
  keep.keep_literals = true;
  EXPECT(Lex("1", Lang::kC, keep)[0].value != Lex("2", Lang::kC, keep)[0].value);
}

TEST(javascript_templates_regex) {
  EXPECT_TEXTS("const s = `a ${b + `c ${d}`} }` + 'e\\'f';", Lang::kJavaScript,
               "const|s|=|`a ${b + `c ${d}`} }`|+|'e\\'f'|;");
  EXPECT_TEXTS("x = `${ {a: '}'} }` // c\n y", Lang::kTypeScript, "x|=|`${ {a: '}'} }`|y");
  EXPECT_TEXTS("a = /['\"]\\//g.test(s); b = c / d / e", Lang::kJavaScript,
               "a|=|/['\"]\\//g|.|test|(|s|)|;|b|=|c|/|d|/|e");
  // a backslash before a newline ends no regex: the newline is counted (found by code_fuzz)
  std::vector<Token> r = Lex("= /a\\\nb/;\nc", Lang::kJavaScript);
  EXPECT_EQ(r.back().line, 3u);
  std::vector<Token> t = Lex("`a\nb\n${c}`\nx", Lang::kJavaScript);
  EXPECT_EQ(t.size(), size_t(2));
  EXPECT_EQ(t[1].line, 4u);
  // a line comment inside ${...} ends at its newline, which is counted (found by code_fuzz under libFuzzer)
  std::vector<Token> u = Lex("`${d // c\n}`\nx", Lang::kJavaScript);
  EXPECT_EQ(u.size(), size_t(2));
  EXPECT_EQ(u[1].line, 3u);
  EXPECT(Lex("let x", Lang::kJavaScript)[0].kind == Kind::kKeyword);
  EXPECT(Lex("type x", Lang::kJavaScript)[0].kind == Kind::kIdentifier);
  EXPECT(Lex("type x", Lang::kTypeScript)[0].kind == Kind::kKeyword);
}

TEST(go_rust_csharp) {
  EXPECT_TEXTS("s := `a\\`; x <- c", Lang::kGo, "s|:=|`a\\`|;|x|<-|c");
  EXPECT_TEXTS("let s = r#\"a \"quoted\" b\"#; fn f<'a>(x: &'a str) { 'c' } /* a /* b */ c */ z", Lang::kRust,
               "let|s|=|r#\"a \"quoted\" b\"#|;|fn|f|<|'a|>|(|x|:|&|'a|str|)|{|'c'|}|z");
  EXPECT(Lex("'a", Lang::kRust)[0].kind == Kind::kIdentifier);
  EXPECT_TEXTS("var s = @\"a\"\"b\\\";\n#region x\nint y;", Lang::kCSharp, "var|s|=|@\"a\"\"b\\\"|;|#region x|int|y|;");
  EXPECT_TEXTS("String s = \"\"\"\n a \"b\" \n\"\"\"; x", Lang::kJava, "String|s|=|\"\"\"\n a \"b\" \n\"\"\"|;|x");
}

TEST(python) {
  EXPECT_TEXTS("def f(x):  # c 'q'\n    return '''a\n'b' \"\"\" # no\n''' + rb'\\'' + F\"{x}\"\n", Lang::kPython,
               "def|f|(|x|)|:|return|'''a\n'b' \"\"\" # no\n'''|+|rb'\\''|+|F\"{x}\"");
  EXPECT_TEXTS("x //= 2 ** y; a \\\n  b", Lang::kPython, "x|//=|2|**|y|;|a|b");
  std::vector<Token> t = Lex("\"\"\"doc\n\n\"\"\"\nif x:\n    pass\n", Lang::kPython);
  EXPECT_EQ(t.size(), size_t(5));
  EXPECT_EQ(t[1].line, 4u);
  EXPECT_EQ(t[4].line, 5u);
  EXPECT(t[1].kind == Kind::kKeyword && t[4].kind == Kind::kKeyword);
  // indentation does not matter
  std::vector<Token> a = Lex("if x:\n    y = 1\n", Lang::kPython), b = Lex("if x:\n  y = 1\n", Lang::kPython);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); i++) EXPECT_EQ(a[i].value, b[i].value);
}

namespace {

// The naive winnowing: every window's minimum (rightmost), distinct positions in order.
std::vector<Fingerprint> NaiveWinnow(const std::vector<uint64_t>& h, uint32_t w) {
  std::vector<Fingerprint> out;
  if (h.empty()) return out;
  const size_t win = std::min<size_t>(w, h.size());
  size_t last = SIZE_MAX;
  for (size_t q = 0; q + win <= h.size(); q++) {
    size_t best = q;
    for (size_t p = q; p < q + win; p++)
      if (h[p] <= h[best]) best = p;
    if (best != last) out.push_back(Fingerprint{h[best], uint32_t(best)});
    last = best;
  }
  return out;
}

// Brute-force maximal exact matches of >= len values: (i, j, length), by i then j.
std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> BruteMems(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, uint32_t len) {
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> out;
  for (size_t i = 0; i < a.size(); i++)
    for (size_t j = 0; j < b.size(); j++) {
      if (a[i] != b[j] || (i > 0 && j > 0 && a[i - 1] == b[j - 1])) continue;
      size_t l = 0;
      while (i + l < a.size() && j + l < b.size() && a[i + l] == b[j + l]) l++;
      if (l >= len) out.emplace_back(uint32_t(i), uint32_t(j), uint32_t(l));
    }
  return out;
}

}  // namespace

TEST(winnow_equals_naive) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 300; round++) {
    const size_t m = rng() % 200;
    const uint32_t w = 1 + uint32_t(rng() % 20);
    std::vector<uint64_t> h(m);
    for (auto& x : h) x = rng() % (round % 3 == 0 ? 4 : 1000);  // few values: many ties
    std::vector<Fingerprint> got;
    Winnow(h.data(), h.size(), w, &got);
    std::vector<Fingerprint> want = NaiveWinnow(h, w);
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size() && i < want.size(); i++) {
      EXPECT_EQ(got[i].pos, want[i].pos);
      EXPECT_EQ(got[i].hash, want[i].hash);
    }
  }
  // k-gram hashes: rolling equals hashing each k-gram from scratch
  std::vector<uint32_t> v(100);
  for (auto& x : v) x = uint32_t(rng() % 5);
  std::vector<uint64_t> all;
  KgramHashes(v.data(), v.size(), 7, &all);
  EXPECT_EQ(all.size(), size_t(94));
  for (size_t p = 0; p + 7 <= v.size(); p++) {
    std::vector<uint64_t> one;
    KgramHashes(v.data() + p, 7, 7, &one);
    EXPECT_EQ(one[0], all[p]);
  }
}

TEST(winnow_guarantee_brute_force) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; round++) {
    const uint32_t k = 1 + uint32_t(rng() % 8), w = 1 + uint32_t(rng() % 10);
    const uint32_t t = w + k - 1;
    std::vector<uint32_t> a(150 + rng() % 150), b(150 + rng() % 150);
    const uint32_t alphabet = round % 2 ? 3 : 30;
    for (auto& x : a) x = uint32_t(rng() % alphabet);
    for (auto& x : b) x = uint32_t(rng() % alphabet);
    for (int plant = 0; plant < 3; plant++) {  // shared runs around the guarantee's length
      const size_t len = t - 2 + rng() % 6;
      if (len > a.size() || len > b.size()) continue;
      const size_t i = rng() % (a.size() - len + 1), j = rng() % (b.size() - len + 1);
      std::copy(a.begin() + i, a.begin() + i + len, b.begin() + j);
    }
    std::vector<uint64_t> ha, hb;
    KgramHashes(a.data(), a.size(), k, &ha);
    KgramHashes(b.data(), b.size(), k, &hb);
    std::vector<Fingerprint> fa, fb;
    Winnow(ha.data(), ha.size(), w, &fa);
    Winnow(hb.data(), hb.size(), w, &fb);
    std::set<std::pair<uint64_t, uint32_t>> sb;  // (hash, pos) of b
    for (const auto& f : fb) sb.insert({f.hash, f.pos});
    // every maximal shared run of >= t values holds an equal fingerprint at the same offset in both
    for (const auto& mem : BruteMems(a, b, t)) {
      const uint32_t i = std::get<0>(mem), j = std::get<1>(mem), len = std::get<2>(mem);
      bool found = false;
      for (const auto& f : fa)
        if (f.pos >= i && f.pos + k <= i + len && sb.count({f.hash, f.pos - i + j})) found = true;
      EXPECT(found);
    }
  }
}

namespace {

// Random "source" over a small vocabulary (identifiers kept, so that runs differ), a token a word.
std::string RandomSource(std::mt19937_64& rng, size_t n, size_t vocab) {
  std::string s;
  for (size_t i = 0; i < n; i++) {
    s += "v" + std::to_string(rng() % vocab);
    s += (rng() % 5 == 0) ? "\n" : " ";
  }
  return s;
}

}  // namespace

TEST(match_regions_equal_brute_force) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 20; round++) {
    CorpusOptions co;
    co.k = 2 + uint32_t(rng() % 6);
    co.w = 1 + uint32_t(rng() % 8);
    co.lex.keep_identifiers = true;
    const uint32_t t = co.w + co.k - 1;
    // file texts: random, then shared passages copied between them
    std::vector<std::string> words[3];
    for (auto& f : words) {
      std::string src = RandomSource(rng, 200 + rng() % 100, round % 2 ? 4 : 40);
      size_t p = 0;
      while (p < src.size()) {
        size_t q = src.find_first_of(" \n", p);
        f.push_back(src.substr(p, q - p) + src[q]);
        p = q + 1;
      }
    }
    for (int plant = 0; plant < 4; plant++) {
      const int x = int(rng() % 3), y = (x + 1 + int(rng() % 2)) % 3;
      const size_t len = t + rng() % 20;
      if (len > words[x].size() || len > words[y].size()) continue;
      const size_t i = rng() % (words[x].size() - len + 1), j = rng() % (words[y].size() - len + 1);
      std::copy(words[x].begin() + i, words[x].begin() + i + len, words[y].begin() + j);
    }
    std::string texts[3];
    for (int f = 0; f < 3; f++)
      for (auto& wd : words[f]) texts[f] += wd;
    CodeCorpus corpus(co);
    std::vector<Source> src(3);
    for (int f = 0; f < 3; f++) {
      src[f].data = reinterpret_cast<const uint8_t*>(texts[f].data());
      src[f].size = texts[f].size();
      src[f].lang = Lang::kC;
      src[f].group = uint32_t(f);
    }
    std::vector<SourceState> states;
    EXPECT(corpus.Add(src, &states, nullptr).ok());
    MatchOptions mo;
    mo.max_groups = 0;
    mo.max_repeat = 1u << 30;
    mo.merge_gap = 0;
    mo.pair_budget = 1 + rng() % 50;  // many passes
    std::vector<PairResult> pairs;
    MatchStats st;
    EXPECT(corpus.Match(mo, &pairs, &st).ok());
    for (uint32_t x = 0; x < 3; x++)
      for (uint32_t y = x + 1; y < 3; y++) {
        std::set<std::tuple<uint32_t, uint32_t, uint32_t>> want, got;
        for (const auto& m : BruteMems(corpus.values(x), corpus.values(y), t)) want.insert(m);
        for (const PairResult& p : pairs)
          if (p.group_a == x && p.group_b == y)
            for (const Region& r : p.regions) got.insert({r.a_begin, r.b_begin, r.tokens});
        // merge_gap 0 still merges MEMs that touch in both files: the brute force does the same
        std::set<std::tuple<uint32_t, uint32_t, uint32_t>> merged;
        std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> open;
        for (const auto& m : want) {
          bool done = false;
          for (auto& r : open) {
            const uint32_t ae = std::get<0>(r) + std::get<2>(r), be = std::get<1>(r) + std::get<2>(r);
            if (!done && std::get<0>(m) == ae && std::get<1>(m) == be) {
              std::get<2>(r) += std::get<2>(m);
              done = true;
            }
          }
          if (!done) open.push_back(m);
        }
        for (auto& r : open) merged.insert(r);
        EXPECT(got == merged);
        if (got != merged) std::fprintf(stderr, "  round %d files %u-%u: %zu regions, brute force %zu\n", round, x, y, got.size(), merged.size());
      }
  }
}

TEST(match_base_and_boilerplate) {
  // three files sharing one long run; a base file holding it removes the pairs, max_groups 2 too
  std::string shared;
  for (int i = 0; i < 80; i++) shared += "s" + std::to_string(i) + " ";
  const std::string a = "a1 a2 " + shared + "a3", b = "b1 " + shared, c = shared + "c1 c2";
  CorpusOptions co;
  co.lex.keep_identifiers = true;
  for (int mode = 0; mode < 3; mode++) {
    CodeCorpus corpus(co);
    std::vector<Source> src(mode == 2 ? 4 : 3);
    const std::string* t[4] = {&a, &b, &c, &shared};
    for (size_t f = 0; f < src.size(); f++) {
      src[f].data = reinterpret_cast<const uint8_t*>(t[f]->data());
      src[f].size = t[f]->size();
      src[f].group = uint32_t(f) * 1000003u;  // sparse group numbers come back as given
      src[f].base = f == 3;
    }
    std::vector<SourceState> states;
    EXPECT(corpus.Add(src, &states, nullptr).ok());
    MatchOptions mo;
    mo.max_groups = mode == 1 ? 2 : 10;
    std::vector<PairResult> pairs;
    MatchStats st;
    EXPECT(corpus.Match(mo, &pairs, &st).ok());
    EXPECT_EQ(pairs.size(), size_t(mode == 0 ? 3 : 0));
    if (mode == 0) {
      for (const PairResult& p : pairs) EXPECT(p.group_a % 1000003u == 0 && p.group_b % 1000003u == 0 && p.group_a < p.group_b && p.group_b <= 2000006u);
      EXPECT_EQ(pairs[0].regions.size(), size_t(1));
      EXPECT_EQ(pairs[0].regions[0].tokens, 80u);
    }
    if (mode == 2) EXPECT(states[3] == SourceState::kBase);
  }
  // binary and invalid UTF-8 files are skipped
  CodeCorpus corpus(co);
  const std::string bin("a\0b", 3), bad("a \xff b");
  std::vector<Source> src(2);
  src[0].data = reinterpret_cast<const uint8_t*>(bin.data());
  src[0].size = bin.size();
  src[1].data = reinterpret_cast<const uint8_t*>(bad.data());
  src[1].size = bad.size();
  std::vector<SourceState> states;
  EXPECT(corpus.Add(src, &states, nullptr).ok());
  EXPECT(states[0] == SourceState::kBinary && states[1] == SourceState::kInvalidUtf8);
  EXPECT_EQ(corpus.files(), size_t(0));
}

TEST_MAIN("code")
