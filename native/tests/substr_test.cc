// Core tests of repeated-substring removal (substr/repeats.h): the spans on small random corpora (few
// letters, so that repeats happen, multibyte characters, several documents) against a brute force written
// here (every window compared with every earlier one), for both rules; planted repeats; bad UTF-8.
// Skipped, saying so, when libdivsufsort is not installed.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <unistd.h>

#include "check.h"
#include "substr/index_file.h"
#include "substr/repeats.h"

using namespace neardup;
using namespace neardup::substr;

namespace {

struct Ref {
  uint64_t doc, start, end, first_doc, first_offset;
  bool operator==(const Ref& o) const {
    return doc == o.doc && start == o.start && end == o.end && first_doc == o.first_doc && first_offset == o.first_offset;
  }
};

bool Cont(uint8_t b) { return (b & 0xC0) == 0x80; }

// The rule, by brute force: byte i of a document is removed when it lies in a window [p, p + L) of the
// document whose bytes also occur at another window (keep-first: an earlier one, in corpus order). Spans are
// maximal runs of removed bytes, shrunk to whole code points; the source of a span is the earliest window,
// other than itself, equal to the window at the run's start, shifted as the start was.
std::vector<Ref> Brute(const std::vector<std::string>& docs, uint32_t L, bool drop_all) {
  struct W {
    uint64_t doc, off;
  };
  std::vector<W> all;  // every window, in corpus order
  for (uint64_t d = 0; d < docs.size(); d++)
    for (uint64_t p = 0; p + L <= docs[d].size(); p++) all.push_back({d, p});
  const auto same = [&](const W& a, const W& b) { return std::memcmp(docs[a.doc].data() + a.off, docs[b.doc].data() + b.off, L) == 0; };
  std::vector<std::vector<char>> removed(docs.size());
  for (uint64_t d = 0; d < docs.size(); d++) removed[d].assign(docs[d].size(), 0);
  for (size_t i = 0; i < all.size(); i++) {
    bool hit = false;
    for (size_t j = 0; j < all.size() && !hit; j++) {
      if (j == i || (!drop_all && j > i)) continue;
      hit = same(all[i], all[j]);
    }
    if (hit) std::fill(removed[all[i].doc].begin() + long(all[i].off), removed[all[i].doc].begin() + long(all[i].off + L), 1);
  }
  std::vector<Ref> out;
  for (uint64_t d = 0; d < docs.size(); d++) {
    const std::string& s = docs[d];
    for (uint64_t p = 0; p < s.size();) {
      if (!removed[d][p]) {
        p++;
        continue;
      }
      uint64_t e = p;
      while (e < s.size() && removed[d][e]) e++;
      const uint64_t s0 = p;
      uint64_t b = p, f = e;
      while (b < f && Cont(uint8_t(s[b]))) b++;
      while (f > b && f < s.size() && Cont(uint8_t(s[f]))) f--;
      if (b < f) {
        W w0{d, s0};
        for (const W& w : all) {
          if (w.doc == d && w.off == s0) continue;
          if (same(w, w0)) {
            out.push_back({d, b, f, w.doc, w.off + (b - s0)});
            break;
          }
        }
      }
      p = e;
    }
  }
  return out;
}

// Token mode by brute force: tokens split at the whitespace these tests use (space, \t, \n, U+00A0,
// U+3000); a token is removed when it lies in a window of L tokens whose sequence occurs at another window
// (keep-first: an earlier one); spans are runs of removed tokens, from the first one's start to the last
// one's end; the source is the earliest other window equal to the run's first.
std::vector<Ref> BruteTokens(const std::vector<std::string>& docs, uint32_t L, bool drop_all) {
  struct Tok {
    uint64_t b, e;
  };
  std::vector<std::vector<Tok>> toks(docs.size());
  for (size_t d = 0; d < docs.size(); d++) {
    const std::string& s = docs[d];
    uint64_t i = 0;
    bool in = false;
    uint64_t start = 0;
    while (i < s.size()) {
      const uint8_t c = uint8_t(s[i]);
      const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
      const std::string ch = s.substr(i, len);
      const bool space = ch == " " || ch == "\t" || ch == "\n" || ch == "\xC2\xA0" || ch == "\xE3\x80\x80";
      if (space && in) toks[d].push_back({start, i});
      if (!space && !in) start = i;
      in = !space;
      i += len;
    }
    if (in) toks[d].push_back({start, s.size()});
  }
  struct W {
    uint64_t doc, tok;
  };
  std::vector<W> all;
  for (uint64_t d = 0; d < docs.size(); d++)
    for (uint64_t j = 0; j + L <= toks[d].size(); j++) all.push_back({d, j});
  const auto same = [&](const W& a, const W& b) {
    for (uint32_t k = 0; k < L; k++) {
      const Tok& x = toks[a.doc][a.tok + k];
      const Tok& y = toks[b.doc][b.tok + k];
      if (docs[a.doc].substr(x.b, x.e - x.b) != docs[b.doc].substr(y.b, y.e - y.b)) return false;
    }
    return true;
  };
  std::vector<std::vector<char>> removed(docs.size());
  for (uint64_t d = 0; d < docs.size(); d++) removed[d].assign(toks[d].size(), 0);
  for (size_t i = 0; i < all.size(); i++) {
    bool hit = false;
    for (size_t j = 0; j < all.size() && !hit; j++) {
      if (j == i || (!drop_all && j > i)) continue;
      hit = same(all[i], all[j]);
    }
    if (hit) std::fill(removed[all[i].doc].begin() + long(all[i].tok), removed[all[i].doc].begin() + long(all[i].tok + L), 1);
  }
  std::vector<Ref> out;
  for (uint64_t d = 0; d < docs.size(); d++) {
    for (uint64_t j = 0; j < toks[d].size();) {
      if (!removed[d][j]) {
        j++;
        continue;
      }
      uint64_t e = j;
      while (e < toks[d].size() && removed[d][e]) e++;
      W w0{d, j};
      for (const W& w : all) {
        if (w.doc == d && w.tok == j) continue;
        if (same(w, w0)) {
          out.push_back({d, toks[d][j].b, toks[d][e - 1].e, w.doc, toks[w.doc][w.tok].b});
          break;
        }
      }
      j = e;
    }
  }
  return out;
}

std::vector<Ref> Fast(const std::vector<std::string>& docs, uint32_t L, bool drop_all, FindStats* st = nullptr, Unit unit = Unit::kByte,
                      uint32_t code_bytes = 0) {
  Corpus c;
  std::vector<const uint8_t*> ptr;
  std::vector<size_t> len;
  for (const auto& d : docs) {
    ptr.push_back(reinterpret_cast<const uint8_t*>(d.data()));
    len.push_back(d.size());
  }
  // two batches, as the binding adds them
  const size_t half = docs.size() / 2;
  size_t bad = 0;
  EXPECT(c.Add(Docs{ptr.data(), len.data(), half}, &bad).ok());
  EXPECT(c.Add(Docs{ptr.data() + half, len.data() + half, docs.size() - half}, &bad).ok());
  FindOptions o;
  o.length = L;
  o.drop_all = drop_all;
  o.unit = unit;
  o.code_bytes = code_bytes;
  std::vector<Span> spans;
  FindStats local;
  Status s = c.Find(o, &spans, st ? st : &local);
  EXPECT(s.ok());
  if (!s.ok()) std::fprintf(stderr, "  %s\n", s.message().c_str());
  std::vector<Ref> out;
  for (const Span& x : spans) out.push_back({x.doc, x.start, x.end, x.first_doc, x.first_offset});
  return out;
}

bool Available() {
  Status why;
  if (SuffixSortAvailable(&why)) return true;
  static bool said = false;
  if (!said) std::fprintf(stderr, "  skipped: %s\n", why.message().c_str());
  said = true;
  return false;
}

std::string RandomDoc(std::mt19937& r, size_t max_units) {
  static const char* units[] = {"a", "b", "c", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"};  // a b c é € 😀
  std::string s;
  const size_t n = r() % (max_units + 1);
  for (size_t i = 0; i < n; i++) s += units[r() % ((r() % 4 == 0) ? 6 : 3)];
  return s;
}

void Compare(const std::vector<std::string>& docs, uint32_t L, bool drop_all, int round) {
  const auto want = Brute(docs, L, drop_all);
  const auto got = Fast(docs, L, drop_all);
  EXPECT_EQ(got.size(), want.size());
  const bool same = got == want;
  EXPECT(same);
  if (!same) {
    std::fprintf(stderr, "  round %d, L %u, drop_all %d\n", round, L, int(drop_all));
    for (size_t i = 0; i < std::max(got.size(), want.size()); i++) {
      Ref g = i < got.size() ? got[i] : Ref{9, 9, 9, 9, 9}, w = i < want.size() ? want[i] : Ref{9, 9, 9, 9, 9};
      std::fprintf(stderr, "   got %llu [%llu,%llu) <- %llu:%llu   want %llu [%llu,%llu) <- %llu:%llu\n",
                   (unsigned long long)g.doc, (unsigned long long)g.start, (unsigned long long)g.end,
                   (unsigned long long)g.first_doc, (unsigned long long)g.first_offset, (unsigned long long)w.doc,
                   (unsigned long long)w.start, (unsigned long long)w.end, (unsigned long long)w.first_doc,
                   (unsigned long long)w.first_offset);
    }
  }
}

}  // namespace

TEST(random_corpora_match_brute_force) {
  if (!Available()) return;
  std::mt19937 r(7);
  for (int round = 0; round < 300; round++) {
    std::vector<std::string> docs(1 + r() % 6);
    for (auto& d : docs) d = RandomDoc(r, 40);
    const uint32_t L = 4 + r() % 6;
    Compare(docs, L, false, round);
    Compare(docs, L, true, round);
  }
}

TEST(token_mode_matches_brute_force) {
  if (!Available()) return;
  std::mt19937 r(19);
  static const char* words[] = {"a", "b", "ab", "\xC3\xA9", "b\xE2\x82\xAC"};
  static const char* spaces[] = {" ", " ", "  ", "\n", "\t", "\xC2\xA0", "\xE3\x80\x80"};
  size_t with_spans = 0;
  for (int round = 0; round < 300; round++) {
    std::vector<std::string> docs(1 + r() % 5);
    for (auto& d : docs) {
      if (r() % 3 == 0) d += spaces[r() % 7];
      const size_t n = r() % 14;
      for (size_t i = 0; i < n; i++) {
        d += words[r() % 5];
        if (i + 1 < n || r() % 3 == 0) d += spaces[r() % 7];
      }
    }
    const uint32_t L = 1 + r() % 4;
    for (bool drop_all : {false, true}) {
      const auto want = BruteTokens(docs, L, drop_all);
      // 3-byte codes, and every tenth round the 4-byte codes of corpora with 2^24 - 1 distinct tokens or more
      const auto got = Fast(docs, L, drop_all, nullptr, Unit::kToken, round % 10 == 0 ? 4 : 0);
      EXPECT_EQ(got.size(), want.size());
      const bool same = got == want;
      EXPECT(same);
      if (!same) {
        std::fprintf(stderr, "  token round %d, L %u, drop_all %d\n", round, L, int(drop_all));
        for (const Ref& g : got) std::fprintf(stderr, "   got %llu [%llu,%llu) <- %llu:%llu\n", (unsigned long long)g.doc, (unsigned long long)g.start, (unsigned long long)g.end, (unsigned long long)g.first_doc, (unsigned long long)g.first_offset);
        for (const Ref& w : want) std::fprintf(stderr, "   want %llu [%llu,%llu) <- %llu:%llu\n", (unsigned long long)w.doc, (unsigned long long)w.start, (unsigned long long)w.end, (unsigned long long)w.first_doc, (unsigned long long)w.first_offset);
        return;
      }
      with_spans += !want.empty();
    }
  }
  EXPECT(with_spans > 200);
}

TEST(planted_repeat_is_removed_from_later_copies_only) {
  if (!Available()) return;
  std::mt19937 r(3);
  std::string planted;
  for (int i = 0; i < 150; i++) planted += char('A' + r() % 26);
  std::vector<std::string> docs;
  for (int d = 0; d < 4; d++) {
    std::string s;
    for (int i = 0; i < 300; i++) s += char('a' + r() % 26);  // random letters: no chance repeat of 100 bytes
    s.insert(50 + d * 10, std::string(1, char('0' + d)) + planted + std::string(1, char('0' + d)));
    docs.push_back(s);
  }
  FindStats st;
  const auto got = Fast(docs, 100, false, &st);
  EXPECT_EQ(got.size(), 3u);
  for (size_t i = 0; i < got.size(); i++) {
    EXPECT_EQ(got[i].doc, i + 1);
    EXPECT_EQ(got[i].start, 51 + (i + 1) * 10);
    EXPECT_EQ(got[i].end, 51 + (i + 1) * 10 + 150);
    EXPECT_EQ(got[i].first_doc, 0u);
    EXPECT_EQ(got[i].first_offset, 51u);
  }
  EXPECT_EQ(st.removed_bytes, 450u);
  EXPECT_EQ(st.documents_changed, 3u);
  EXPECT_EQ(st.groups, 51u);  // 51 windows of 100 bytes in the planted 150, each in a group of 4
  const auto all = Fast(docs, 100, true);
  EXPECT_EQ(all.size(), 4u);
  if (all.size() == 4) {
    EXPECT_EQ(all[0].doc, 0u);
    EXPECT_EQ(all[0].first_doc, 1u);  // the first copy's other earliest occurrence
    EXPECT_EQ(all[0].first_offset, 61u);
  }
  // shorter than L: nothing
  EXPECT_EQ(Fast(docs, 151, false).size(), 0u);
}

TEST(windows_never_cross_documents) {
  if (!Available()) return;
  // "abcd" + "efgh" would repeat "cdef" across the boundary of docs 0/1 if windows crossed it
  const std::vector<std::string> docs = {"xxabcd", "efghyy", "zcdefz"};
  EXPECT_EQ(Fast(docs, 4, false).size(), 0u);
  EXPECT_EQ(Fast(docs, 4, true).size(), 0u);
}

TEST(index_file_counts_occurrences_as_a_naive_search) {
  if (!Available()) return;
  std::mt19937 r(5);
  const std::string path = "/tmp/neardup-substr-test-" + std::to_string(getpid()) + ".subx";
  for (int round = 0; round < 20; round++) {
    std::vector<std::string> docs(1 + r() % 6);
    for (auto& d : docs) d = RandomDoc(r, 60);
    Corpus c;
    std::vector<const uint8_t*> ptr;
    std::vector<size_t> len;
    for (const auto& d : docs) {
      ptr.push_back(reinterpret_cast<const uint8_t*>(d.data()));
      len.push_back(d.size());
    }
    size_t bad = 0;
    EXPECT(c.Add(Docs{ptr.data(), len.data(), docs.size()}, &bad).ok());
    FindOptions o;
    o.length = 4;
    o.index_path = path;
    std::vector<Span> spans;
    FindStats st;
    EXPECT(c.Find(o, &spans, &st).ok());
    SubstringIndex idx;
    Status s = idx.Open(path, true);
    EXPECT(s.ok());
    if (!s.ok()) {
      std::fprintf(stderr, "  %s\n", s.message().c_str());
      break;
    }
    EXPECT_EQ(idx.documents(), docs.size());
    for (int q = 0; q < 30; q++) {
      // a piece of a document (often repeated) or a random string
      std::string pat;
      const std::string& d = docs[r() % docs.size()];
      if (!d.empty() && q % 3 != 0) {
        const size_t a = r() % d.size();
        pat = d.substr(a, 1 + r() % std::min<size_t>(8, d.size() - a));
      } else {
        pat = RandomDoc(r, 4);
        if (pat.empty()) pat = "a";
      }
      uint64_t want = 0;
      for (const auto& doc : docs)
        for (size_t p = 0; p + pat.size() <= doc.size(); p++) want += doc.compare(p, pat.size(), pat) == 0;
      uint64_t got = 99;
      EXPECT(idx.Count(reinterpret_cast<const uint8_t*>(pat.data()), pat.size(), &got).ok());
      EXPECT_EQ(got, want);
    }
  }
  // a damaged payload: refused when verified
  {
    std::FILE* f = std::fopen(path.c_str(), "r+b");
    std::fseek(f, 70, SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, 70, SEEK_SET);
    std::fputc(c ^ 1, f);
    std::fclose(f);
    SubstringIndex idx;
    EXPECT(idx.Open(path, true).code() == Code::kCorrupt);
  }
  std::remove(path.c_str());
}

TEST(bad_utf8_names_the_document_and_byte) {
  Corpus c;
  const std::string a = "fine", b = "ok \xFF no";
  const uint8_t* ptr[] = {reinterpret_cast<const uint8_t*>(a.data()), reinterpret_cast<const uint8_t*>(b.data())};
  size_t len[] = {a.size(), b.size()};
  size_t bad = 99;
  Status s = c.Add(Docs{ptr, len, 2}, &bad);
  EXPECT(!s.ok());
  EXPECT(s.code() == Code::kInvalidInput);
  EXPECT_EQ(bad, 1u);
  EXPECT(s.message().find("byte 3") != std::string::npos);
  EXPECT_EQ(c.documents(), 0u);  // nothing of a refused batch is added
  FindOptions o;
  o.length = 3;
  std::vector<Span> spans;
  FindStats st;
  EXPECT(c.Find(o, &spans, &st).code() == Code::kInvalidArgument);
}

TEST_MAIN("substr")
