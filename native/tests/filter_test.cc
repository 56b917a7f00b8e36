// Core tests of the paragraph filter: seen-sets (membership, FP rate, save/load, corrupt files) and small
// Onion cases checked by hand.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <unordered_set>
#include <string>
#include <unistd.h>

#include "check.h"
#include "filter/onion.h"
#include "filter/onion_hash.h"
#include "filter/seen_set.h"
#include "filter/vertical.h"
#include "io/file.h"

using namespace neardup;
using namespace neardup::filter;

static uint64_t LoadLe64Test(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static std::string TmpPath(const char* name) { return std::string("/tmp/neardup-filter-test-") + std::to_string(getpid()) + name; }

// Every inserted key must be found (no false negatives); returns the false-positive rate measured on
// `probes` fresh random keys.
static double MembersFoundAndFpRate(const ApproxSeenSet& s, const std::vector<uint64_t>& keys, std::mt19937_64& r,
                                    size_t probes) {
  std::vector<uint8_t> out(keys.size());
  s.ContainsBatch(keys.data(), keys.size(), out.data());
  size_t found = 0;
  for (uint8_t o : out) found += o;
  EXPECT_EQ(found, keys.size());
  size_t fp = 0;
  for (size_t i = 0; i < probes; i++) fp += s.Contains(r());
  return double(fp) / probes;
}

TEST(exact_set_membership_and_growth) {
  ExactSeenSet s;
  std::mt19937_64 r(1);
  std::vector<uint64_t> keys(100000);
  for (auto& k : keys) k = r();
  keys[5] = 0;
  s.InsertBatch(keys.data(), keys.size());
  s.InsertBatch(keys.data(), 1000);  // repeats ignored
  EXPECT_EQ(s.size(), keys.size());
  std::vector<uint8_t> out(keys.size());
  s.ContainsBatch(keys.data(), keys.size(), out.data());
  size_t found = 0;
  for (uint8_t o : out) found += o;
  EXPECT_EQ(found, keys.size());
  for (int i = 0; i < 1000; i++) EXPECT(!s.Contains(r()));
}

// The packed exact set against std::unordered_set: random keys, keys crowded into one shard and onto a few
// home slots (long runs: the maximum-distance rebuild), repeats, the key 0 and all-ones; then the saved
// payload's order (ascending) and contents against std::set.
static void CheckExactAgainstBruteForce(const std::vector<uint64_t>& keys, std::mt19937_64& r, bool crowded) {
  ExactSeenSet s;
  std::unordered_set<uint64_t> truth;
  std::vector<uint8_t> out;
  for (size_t i = 0; i < keys.size();) {
    const size_t m = std::min<size_t>(keys.size() - i, 1 + r() % 3000);
    out.assign(m, 0);
    s.ContainsBatch(keys.data() + i, m, out.data());
    for (size_t j = 0; j < m; j++) EXPECT_EQ(out[j] != 0, truth.count(keys[i + j]) != 0);
    s.InsertBatch(keys.data() + i, m);
    truth.insert(keys.begin() + i, keys.begin() + i + m);
    EXPECT_EQ(s.size(), truth.size());
    i += m;
  }
  out.assign(keys.size(), 0);
  s.ContainsBatch(keys.data(), keys.size(), out.data());
  for (uint8_t o : out) EXPECT_EQ(o, 1);
  size_t fp = 0;
  for (int i = 0; i < 20000; i++) {
    uint64_t k = r();
    if (i % 2) k = keys[r() % keys.size()] ^ (uint64_t(1) << (r() % 64));  // near misses: one bit off
    fp += s.Contains(k) != (truth.count(k) != 0);
  }
  EXPECT_EQ(fp, 0u);
  EXPECT(s.max_distance() <= 254);
  std::printf("exact vs brute force: %zu keys, max distance %u, %llu stashed\n", truth.size(), s.max_distance(),
              static_cast<unsigned long long>(s.stashed()));
  EXPECT_EQ(s.stashed() > 0, crowded);
  const std::string path = TmpPath("-exact-bf.seen");
  EXPECT(SaveSeenSet(s, 5, path).ok());
  std::string file;
  EXPECT(io::ReadFile(path, &file).ok());
  const std::vector<uint8_t> img(file.begin(), file.end());
  ::unlink(path.c_str());
  std::set<uint64_t> sorted(truth.begin(), truth.end());
  EXPECT_EQ(img.size(), 64 + 8 + 8 * sorted.size());
  size_t at = 72;
  bool order = true;
  for (uint64_t k : sorted) {
    order = order && LoadLe64Test(img.data() + at) == k;
    at += 8;
  }
  EXPECT(order);
  std::unique_ptr<SeenSet> t;
  uint32_t n = 0;
  EXPECT(ParseSeenSet(img.data(), img.size(), "bf", &t, &n).ok());
  if (t) {
    EXPECT_EQ(t->size(), truth.size());
    out.assign(keys.size(), 0);
    t->ContainsBatch(keys.data(), keys.size(), out.data());
    for (uint8_t o : out) EXPECT_EQ(o, 1);
  }
}

TEST(exact_set_matches_brute_force) {
  std::mt19937_64 r(11);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 300000; i++) keys.push_back(r());
  for (int i = 0; i < 50000; i++) keys.push_back(keys[r() % keys.size()]);  // repeats
  keys.push_back(0);
  keys.push_back(~0ull);
  std::shuffle(keys.begin(), keys.end(), r);
  CheckExactAgainstBruteForce(keys, r, false);
  // One shard, a handful of home slots: runs far longer than any distance a slot can store.
  keys.clear();
  for (int i = 0; i < 60000; i++) keys.push_back((uint64_t(7) << 56) | (uint64_t(r() % 4) << 50) | (r() >> 20));
  for (int i = 0; i < 2000; i++) keys.push_back(uint64_t(i));  // shard 0, home 0: remainders 0..1999
  CheckExactAgainstBruteForce(keys, r, true);
}

TEST(exact_set_is_packed) {
  // 1.78 M uniform keys: 256 shards of 2^13 home slots (7-byte slots) at load 0.85: 8.5 bytes a key. Full
  // 8-byte keys at load <= 3/4 take 2^22 slots: 18.8 bytes a key.
  ExactSeenSet s;
  std::mt19937_64 r(12);
  std::vector<uint64_t> keys(1780000);
  for (auto& k : keys) k = r();
  s.InsertBatch(keys.data(), keys.size());
  const double per = double(s.memory_bytes()) / s.size();
  std::printf("exact: %.2f bytes/key at %zu keys, max distance %u\n", per, keys.size(), s.max_distance());
  EXPECT(per < 9.0);
  ExactSeenSet t;
  t.Reserve(keys.size());
  const uint64_t reserved = t.memory_bytes();
  t.InsertBatch(keys.data(), keys.size());
  EXPECT_EQ(t.memory_bytes(), reserved);  // sized once: no doubling
  EXPECT_EQ(t.size(), s.size());
}

TEST(approx_set_no_false_negatives_and_fp_within_bound) {
  ApproxSeenSet s(0.01, 4096);
  std::mt19937_64 r(2);
  std::vector<uint64_t> keys(500000);
  for (auto& k : keys) k = r();
  s.InsertBatch(keys.data(), keys.size());
  EXPECT(s.stages() >= 5);
  EXPECT(s.fp_bound() < 0.01);
  const double rate = MembersFoundAndFpRate(s, keys, r, 200000);
  std::printf("approx: %zu stages, %.2f bits/key, measured FP %.4f (bound %.4f)\n", s.stages(),
              8.0 * s.memory_bytes() / keys.size(), rate, s.fp_bound());
  EXPECT(rate <= 0.01);
  EXPECT(rate > 0.0005);  // a filter this small must show some false positives (the test can fail)
}

TEST(approx_set_sized_from_progress_is_compact_and_within_bound) {
  // A uniform input: 1 M keys over 100 MB. Stage 1 is sized from the rate seen when stage 0 fills.
  ApproxSeenSet s(0.01);
  std::mt19937_64 r(5);
  std::vector<uint64_t> keys(1000000);
  for (auto& k : keys) k = r();
  for (size_t i = 0; i < keys.size(); i += 1000) {
    s.SetProgress((i + 1000) * 100, keys.size() * 100);
    s.InsertBatch(keys.data() + i, 1000);
  }
  const double rate = MembersFoundAndFpRate(s, keys, r, 400000);
  const double bits = 8.0 * s.memory_bytes() / keys.size();
  std::printf("approx (progress): %zu stages, %.2f bits/key, measured FP %.4f (bound %.4f)\n", s.stages(), bits,
              rate, s.fp_bound());
  EXPECT(rate <= 0.01);
  EXPECT(rate > 0.002);
  EXPECT(s.stages() <= 3);
  EXPECT(bits < 13.5);  // the exact table needs 85-171 bits per key (load 3/8..3/4)
}

TEST(blocked_bloom_design_meets_target) {
  for (double t : {0.01, 0.002, 0.0001}) {
    double bpk;
    uint32_t k;
    ApproxSeenSet::Design(t, &bpk, &k);
    EXPECT(ApproxSeenSet::BlockedFpRate(bpk, k) <= t);
    EXPECT(ApproxSeenSet::BlockedFpRate(bpk - 0.5, k) > t * 0.7);
  }
  // the rates are kept between calls: the same answers as the plain scan computed here, in any order
  for (int round = 0; round < 2; round++)
    for (int i = 0; i <= 40; i++) {
      const double t = 0.6 * std::pow(10.0, -((i * 7) % 41) / 5.0);  // 0.6 .. 6e-9
      double bpk;
      uint32_t k;
      ApproxSeenSet::Design(t, &bpk, &k);
      double want_bpk = 64.0;
      uint32_t want_k = 32;
      for (double b = 3.0; b < 64.0 && want_bpk == 64.0; b += 0.125) {
        const int k0 = std::max(1, static_cast<int>(b * 0.693) - 3);
        for (int kk = k0; kk <= std::min(32, k0 + 6); kk++)
          if (ApproxSeenSet::BlockedFpRate(b, static_cast<uint32_t>(kk)) <= 0.95 * t) {
            want_bpk = b;
            want_k = static_cast<uint32_t>(kk);
            break;
          }
      }
      EXPECT(bpk == want_bpk && k == want_k);
    }
}

TEST(save_load_round_trip_and_corruption) {
  for (SeenKind kind : {SeenKind::kExact, SeenKind::kApprox}) {
    auto s = MakeSeenSet(kind, 0.01);
    std::mt19937_64 r(3);
    std::vector<uint64_t> keys(20000);
    for (auto& k : keys) k = r();
    s->InsertBatch(keys.data(), keys.size());
    const std::string path = TmpPath("seen");
    EXPECT(SaveSeenSet(*s, 7, path).ok());
    std::unique_ptr<SeenSet> t;
    uint32_t n = 0;
    Status st = LoadSeenSet(path, &t, &n);
    EXPECT(st.ok());
    EXPECT_EQ(n, 7u);
    EXPECT(t->kind() == kind);
    EXPECT_EQ(t->size(), s->size());
    for (uint64_t k : keys) EXPECT(t->Contains(k));
    std::string bytes;
    EXPECT(io::ReadFile(path, &bytes).ok());
    // truncated
    {
      FILE* f = std::fopen(path.c_str(), "wb");
      std::fwrite(bytes.data(), 1, bytes.size() - 3, f);
      std::fclose(f);
      Status e = LoadSeenSet(path, &t, &n);
      EXPECT(e.code() == Code::kCorrupt);
      EXPECT(e.message().find("truncated") != std::string::npos);
    }
    // payload flipped
    {
      std::string b = bytes;
      b[b.size() - 1] ^= 0x40;
      FILE* f = std::fopen(path.c_str(), "wb");
      std::fwrite(b.data(), 1, b.size(), f);
      std::fclose(f);
      Status e = LoadSeenSet(path, &t, &n);
      EXPECT(e.code() == Code::kCorrupt);
      EXPECT(e.message().find("checksum") != std::string::npos);
    }
    std::remove(path.c_str());
  }
}

// Vertical text through the whole pipeline: flags per line as a string.
static std::string Run(const std::string& text, OnionOptions o) {
  Deduper d(o, MakeSeenSet(SeenKind::kExact, 0.01));
  VerticalFilter v(&d, VerticalTags(), OutputMode::kNone);
  VerticalOutput out;
  EXPECT(v.Push(reinterpret_cast<const uint8_t*>(text.data()), text.size(), true, 2, nullptr, &out).ok());
  std::string s;
  for (uint8_t f : out.flags) s.push_back(f ? '1' : '0');
  return s;
}

TEST(onion_small_cases) {
  OnionOptions o;
  o.n = 2;
  o.max_stub = 1;
  // Doc 2 repeats doc 1's paragraph: removed as a whole (doc tags too).
  const std::string a = "<doc>\n<p>\na\nb\nc\n</p>\n</doc>\n";
  EXPECT(Run(a + a, o) == std::string(std::string("0000000") + "1111111"));
  // A repeated paragraph inside a document is dropped (within-doc), the first copy kept.
  const std::string b = "<doc>\n<p>\nx\ny\nz\n</p>\n<p>\nx\ny\nz\n</p>\n</doc>\n";
  EXPECT(Run(b, o) == std::string("000000111110"));
  o.within_doc = false;
  EXPECT(Run(b, o) == std::string("000000000000"));
  // Threshold: 2 of 3 tokens covered (0.67) is a duplicate at t = 0.5, not at t = 0.7.
  o.within_doc = true;
  const std::string c = "<doc>\n<p>\na\nb\nc\n</p>\n</doc>\n<doc>\n<p>\na\nb\nq\n</p>\n</doc>\n";
  EXPECT(Run(c, o) == std::string(std::string("0000000") + "1111111"));
  o.threshold = 0.7f;
  EXPECT(Run(c, o) == std::string(std::string("0000000") + "0000000"));
  // Smoothing: a 1-token paragraph between a duplicate and the end is dropped; keep_unique_short leaves
  // a unique 1-token document alone.
  o.threshold = 0.5f;
  const std::string d = "<doc>\n<p>\na\nb\nc\n</p>\n</doc>\n<doc>\n<p>\na\nb\nc\n</p>\n<p>\nk\n</p>\n</doc>\n<doc>\n<p>\nu\n</p>\n</doc>\n";
  EXPECT(Run(d, o) == std::string(std::string("0000000") + "1111111111" + "11111"));
  o.keep_unique_short = true;
  EXPECT(Run(d, o) == std::string(std::string("0000000") + "1111111111" + "00000"));
  // No trailing newline, text outside tags, an empty line as a token.
  o = OnionOptions();
  o.n = 1;
  o.smoothing = false;
  EXPECT(Run("<doc>\nt\n</doc>\nt", o) == std::string("0001"));
  EXPECT(Run("<doc>\n\n</doc>\n\n", o) == std::string("0001"));
  EXPECT(Run("t\n\nt", o) == std::string("000"));  // one document, one paragraph: 1 of 3 tokens repeated
}

// Vertical text pushed in pieces of about `piece` bytes (cut after a newline) from one reused buffer that is
// overwritten after every call; returns the marked output.
static std::string Marked(const std::string& text, size_t piece) {
  OnionOptions o;
  o.n = 3;
  Deduper d(o, MakeSeenSet(SeenKind::kExact, 0.01));
  VerticalFilter v(&d, VerticalTags(), OutputMode::kMark);
  VerticalOutput out;
  std::vector<uint8_t> buf;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.size(), at + piece);
    while (end < text.size() && text[end - 1] != '\n') end++;
    buf.assign(text.begin() + at, text.begin() + end);
    EXPECT(v.Push(buf.data(), buf.size(), end == text.size(), 2, nullptr, &out).ok());
    std::fill(buf.begin(), buf.end(), 'X');  // the filter must not keep pointers into the caller's bytes
    at = end;
  }
  return out.text;
}

TEST(vertical_pieces_and_long_lines_give_the_same_output) {
  // Text outside tags (one long document spanning every piece) with a 600 KB line (longer than a parse
  // part), then tagged documents, every other one a copy of the one before.
  std::string text;
  for (int i = 0; i < 3000; i++) text += "u" + std::to_string(i) + "\n";
  text += std::string(600 << 10, 'L') + "\n";
  for (int d = 0; d < 40; d++) {
    text += "<doc>\n<p>\n";
    for (int i = 0; i < 30; i++) text += "w" + std::to_string(d / 2) + "_" + std::to_string(i) + "\n";
    text += "</p>\n</doc>\n";
  }
  const std::string whole = Marked(text, text.size());
  EXPECT_EQ(std::count(whole.begin(), whole.end(), '\n'), std::count(text.begin(), text.end(), '\n'));
  EXPECT(whole.find("1\tw1_0\n") != std::string::npos && whole.find("0\tw1_0\n") != std::string::npos);
  EXPECT(whole.find("0\t" + std::string(600 << 10, 'L') + "\n") != std::string::npos);
  for (size_t piece : {1, 100, 5000, 300000}) EXPECT(Marked(text, piece) == whole);
}

// Values printed by Onion 1.2's own hash_string/buzhash (its buzhash.c compiled outside the project).
TEST(onion_hash_matches_onion_vectors) {
  auto t = [](const std::string& s) { return onion::TokenHash(reinterpret_cast<const uint8_t*>(s.data()), s.size()); };
  EXPECT_EQ(t(""), 0ull);
  EXPECT_EQ(t("a"), 16753083719276361102ull);
  EXPECT_EQ(t("the"), 4435708268129110045ull);
  EXPECT_EQ(t("Subject"), 9265266149609421183ull);
  EXPECT_EQ(t("0123456789012345678901234567890123456789012345678901234567890123456789"), 3099685029772995250ull);
  EXPECT_EQ(t("\xc3\xa9t\xc3\xa9"), 3206659669038630359ull);
  EXPECT_EQ(t("x\ty"), 10972558115002843011ull);
  // Onion sees tokens as C strings: bytes after a NUL do not count.
  EXPECT_EQ(t(std::string("the\0xyz", 7)), t("the"));
  // buzhash with n = 3 over a b c d a b c: the n-grams abc, bcd, cda, dab, abc.
  std::vector<uint64_t> tok;
  for (const char* w : {"a", "b", "c", "d", "a", "b", "c"}) tok.push_back(t(w));
  std::vector<uint64_t> g;
  onion::NgramHashes(tok.data(), tok.size(), 3, &g);
  const uint64_t want[] = {8758126028113864746ull, 3697213978488614693ull, 11734080477051196582ull,
                           11223630617433587947ull, 8758126028113864746ull};
  EXPECT_EQ(g.size(), 5u);
  for (size_t i = 0; i < 5 && i < g.size(); i++) EXPECT_EQ(g[i], want[i]);
}

// Rolling equals the definition H_i = XOR_j rotl(t_{i-j}, j mod 64), also for n >= 64.
TEST(onion_ngram_hash_rolls_like_its_definition) {
  std::mt19937_64 r(5);
  std::vector<uint64_t> tok(300);
  for (auto& x : tok) x = r();
  for (uint32_t n : {1u, 2u, 7u, 63u, 64u, 65u, 130u}) {
    std::vector<uint64_t> g;
    onion::NgramHashes(tok.data(), tok.size(), n, &g);
    EXPECT_EQ(g.size(), tok.size() - n + 1);
    for (size_t i = n - 1; i < tok.size(); i += 37) {
      uint64_t h = 0;
      for (uint32_t j = 0; j < n; j++) h ^= onion::Rotl(tok[i - j], j);
      EXPECT_EQ(g[i - (n - 1)], h);
    }
  }
}

// hashgen: every n-gram of the non-markup lines across documents, in range files; hashdup: repeats once.
TEST(onion_hashgen_and_hashdup) {
  const std::string text = "<doc>\na\nb\nc\n</doc>\n<doc>\na\nb\nc\n\nd\n</doc>\n";
  onion::Hashgen gen(3, 4);
  std::vector<std::vector<uint8_t>> out(4);
  gen.Push(reinterpret_cast<const uint8_t*>(text.data()), text.size(), &out);
  EXPECT_EQ(gen.lines(), 12u);
  std::vector<uint64_t> tok;
  for (const char* w : {"a", "b", "c", "a", "b", "c", "", "d"})
    tok.push_back(onion::TokenHash(reinterpret_cast<const uint8_t*>(w), std::strlen(w)));
  std::vector<uint64_t> want;
  onion::NgramHashes(tok.data(), tok.size(), 3, &want);
  std::vector<uint64_t> got;
  const uint64_t range = UINT64_MAX / 4;
  for (size_t k = 0; k < 4; k++) {
    EXPECT_EQ(out[k].size() % 8, 0u);
    for (size_t i = 0; i + 8 <= out[k].size(); i += 8) {
      uint64_t v = 0;
      for (int b = 7; b >= 0; b--) v = (v << 8) | out[k][i + b];
      EXPECT(k == 3 ? v > 3 * range : v <= (k + 1) * range && (k == 0 || v > k * range));
      got.push_back(v);
    }
  }
  std::vector<uint64_t> w2 = want;
  std::sort(w2.begin(), w2.end());
  std::sort(got.begin(), got.end());
  EXPECT(got == w2);
  std::vector<uint64_t> dups;
  onion::DuplicateHashes(got.data(), got.size(), &dups);
  EXPECT_EQ(dups.size(), 1u);  // abc twice
  if (!dups.empty()) EXPECT_EQ(dups[0], want[0]);
  std::vector<uint64_t> v = {5, 5, 5, 1, 2, 2, 9};
  dups.clear();
  onion::DuplicateHashes(v.data(), v.size(), &dups);
  EXPECT(dups == std::vector<uint64_t>({2, 5}));
}

TEST_MAIN("filter")
