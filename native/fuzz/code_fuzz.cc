// Fuzz target: the code lexers and the matcher on arbitrary bytes (code/lexer.h, code/match.h). The first byte
// picks the language and the options (odd sizes: the bytes mapped onto code punctuation). Invariants: tokens are non-empty, in order, inside the input, each
// token's line is 1 + the newlines before it, and values are the kind's symbol unless kept; then the input
// split in two files is matched (small k and w, nothing dropped): every region's token ranges are equal in
// both files, lie inside them, and are at least w + k - 1 tokens long.
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "code/lexer.h"
#include "code/match.h"

using namespace neardup;
using namespace neardup::code;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t c = data[0];
  const Lang lang = Lang((c & 15) % kLangCount);
  LexOptions lo;
  lo.keep_identifiers = c & 16;
  lo.keep_literals = c & 32;
  const uint8_t* src = data + 1;
  const size_t n = size - 1;
  // odd sizes: each byte mapped onto the characters lexers decide on, so that quotes, comment openers,
  // template and raw-string syntax and prefixes meet often
  static const char kCode[] = "\"'`/\\*#{}()[]$@\n\r rRbBuUfFL8x0.e+-_a=<>!?:;,&|%^~";
  std::vector<uint8_t> mapped;
  if (size & 1) {
    mapped.resize(n);
    for (size_t i = 0; i < n; i++) mapped[i] = uint8_t(kCode[src[i] % (sizeof(kCode) - 1)]);
    src = mapped.data();
  }
  std::vector<Token> toks;
  Tokenize(src, n, lang, lo, &toks);
  uint32_t prev_end = 0;
  size_t at = 0;
  uint32_t line = 1;
  for (const Token& t : toks) {
    if (t.begin >= t.end || t.begin < prev_end || t.end > n) std::abort();
    for (; at < t.begin; at++)
      if (src[at] == '\n') line++;
    if (t.line != line) std::abort();
    if (t.value > kValueMask) std::abort();
    if (t.kind == Kind::kIdentifier && !lo.keep_identifiers && t.value != kIdentifierValue) std::abort();
    if (t.kind == Kind::kString && !lo.keep_literals && t.value != kStringValue) std::abort();
    if (t.kind == Kind::kNumber && !lo.keep_literals && t.value != kNumberValue) std::abort();
    prev_end = t.end;
  }
  // two files: the halves of the input
  CorpusOptions co;
  co.k = 1 + (c >> 6);
  co.w = 1 + ((c >> 4) & 3);
  co.lex = lo;
  CodeCorpus corpus(co);
  std::vector<Source> s(2);
  s[0].data = src;
  s[0].size = n / 2;
  s[1].data = src + n / 2;
  s[1].size = n - n / 2;
  s[0].lang = s[1].lang = lang;
  s[1].group = 1;
  std::vector<SourceState> states;
  if (!corpus.Add(s, &states, nullptr).ok()) std::abort();
  MatchOptions mo;
  mo.max_groups = 0;
  mo.merge_gap = c & 3;
  std::vector<PairResult> pairs;
  MatchStats st;
  if (!corpus.Match(mo, &pairs, &st).ok()) std::abort();
  if (corpus.files() < 2) return 0;
  for (const PairResult& p : pairs) {
    for (const Region& r : p.regions) {
      const std::vector<uint32_t>& a = corpus.values(r.file_a);
      const std::vector<uint32_t>& b = corpus.values(r.file_b);
      if (r.a_end > a.size() || r.b_end > b.size() || r.a_begin >= r.a_end) std::abort();
      if (r.tokens < co.w + co.k - 1) std::abort();
      if (mo.merge_gap == 0) {
        if (r.a_end - r.a_begin != r.b_end - r.b_begin) std::abort();
        for (uint32_t i = 0; i < r.a_end - r.a_begin; i++)
          if (a[r.a_begin + i] != b[r.b_begin + i]) std::abort();
      }
    }
  }
  return 0;
}
