// MinHash core: permutations (numpy RandomState), doubri-v1 records, datasketch values, fast-profile
// properties, SIMD vs portable kernels, signature files.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "check.h"
#include "io/file.h"
#include "io/header.h"
#include "minhash/mt19937.h"
#include "minhash/profiles.h"
#include "minhash/signature.h"
#include "minhash/signature_file.h"
#include "minhash/sha1_shingle.h"
#include "hash/digest.h"

using namespace neardup;
using namespace neardup::minhash;

static std::shared_ptr<const Plan> MakePlan(const Config& c) {
  std::shared_ptr<const Plan> p;
  Status s = Plan::Create(c, &p);
  EXPECT(s.ok());
  return p;
}

TEST(mt19937_matches_std) {
  // std::mt19937(5489) produces 4123659995 as its 10000th value (C++11 [rand.predef]).
  Mt19937 r(5489);
  uint32_t v = 0;
  for (int i = 0; i < 10000; i++) v = r.Next();
  EXPECT_EQ(v, 4123659995u);
}

TEST(datasketch_permutations_first_values) {
  // From test/fixtures/vectors/datasketch-legacy/vectors.json, permutations_first8.
  uint64_t a[8], b[8];
  DatasketchPermutations(1, 8, a, b);
  EXPECT_EQ(a[0], 775169054918279404ull);
  EXPECT_EQ(b[0], 1758426461858698312ull);
  EXPECT_EQ(a[7], 505211975917066639ull);
  EXPECT_EQ(b[7], 838727479550634564ull);
  DatasketchPermutations(12345, 8, a, b);
  EXPECT_EQ(a[0], 1007488976575081958ull);
  EXPECT_EQ(b[7], 579434019121873127ull);
}

TEST(datasketch_char5_signature) {
  Config c = DefaultConfig(Profile::kDatasketch);
  c.text.unit = TextUnit::kChar;
  Signer s(MakePlan(c));
  std::vector<uint32_t> out(128);
  s.Sign("Madam, I'm Adam.", out.data());
  EXPECT_EQ(out[0], 55953407u);
  EXPECT_EQ(out[1], 183522364u);
  EXPECT_EQ(out[2], 218765341u);
  EXPECT_EQ(out[3], 152691049u);
  s.Sign("", out.data());
  for (uint32_t v : out) EXPECT_EQ(v, 0xFFFFFFFFu);
}

TEST(datasketch_kernel_avx2_matches_portable) {
  std::mt19937_64 rng(7);
  for (size_t k : {1, 3, 8, 13, 128, 131}) {
    std::vector<uint64_t> a(k), b(k);
    DatasketchPermutations(static_cast<uint32_t>(k), k, a.data(), b.data());
    // Also the extreme values, where the mod-p correction matters.
    if (k > 2) {
      a[0] = kMersenne61 - 1;
      b[0] = kMersenne61 - 1;
    }
    for (size_t n : {0, 1, 2, 17, 200}) {
      std::vector<uint32_t> h(n);
      for (auto& x : h) x = static_cast<uint32_t>(rng());
      if (n > 1) h[1] = 0xFFFFFFFFu;
      std::vector<uint32_t> x(k), y(k);
      DatasketchMin(h.data(), n, a.data(), b.data(), k, x.data());
      DatasketchMinPortable(h.data(), n, a.data(), b.data(), k, y.data());
      EXPECT(x == y);
      // Against exact arithmetic written differently: (a*h + b) mod 2^64 via unsigned __int128, then % p.
      for (size_t i = 0; i < k; i++) {
        uint32_t m = 0xFFFFFFFFu;
        for (uint32_t hv : h) {
          const uint64_t w = static_cast<uint64_t>(static_cast<unsigned __int128>(a[i]) * hv + b[i]);
          const uint32_t v = static_cast<uint32_t>(w % kMersenne61);
          if (v < m) m = v;
        }
        EXPECT_EQ(y[i], m);
      }
    }
  }
}

TEST(datasketch_kernel_rare_correction) {
  // a = 1, b = 2^64 - 1 - 5: for h = 5, x = a*h + b = 2^64 - 1 (bits 3..60 all set), whose value mod p is 7
  // while the uncorrected low bits of x + (x >> 61) give 6; the fast kernels must take their exact path.
  for (size_t k : {1, 8, 16, 32, 40}) {
    std::vector<uint64_t> a(k, 1), b(k, ~uint64_t(0) - 5);
    const uint32_t h[3] = {1000, 5, 70000};
    std::vector<uint32_t> x(k), y(k);
    DatasketchMin(h, 3, a.data(), b.data(), k, x.data());
    DatasketchMinPortable(h, 3, a.data(), b.data(), k, y.data());
    EXPECT(x == y);
    EXPECT_EQ(y[0], 7u);
  }
  // x = 2^64 - 8: y = (x & p) + 7 = p exactly, value 0, while the low bits of x + (x >> 61) are 2^32 - 1 (the
  // largest, not the smallest): a kernel that only watched small minima would keep 2^32 - 1.
  for (size_t k : {8, 16, 24}) {
    std::vector<uint64_t> a(k, 1), b(k, ~uint64_t(0) - 15);
    const uint32_t h[2] = {8, 123456};
    std::vector<uint32_t> x(k), y(k);
    DatasketchMin(h, 1, a.data(), b.data(), k, x.data());
    DatasketchMinPortable(h, 1, a.data(), b.data(), k, y.data());
    EXPECT(x == y);
    EXPECT_EQ(y[0], 0u);
    DatasketchMin(h, 2, a.data(), b.data(), k, x.data());
    DatasketchMinPortable(h, 2, a.data(), b.data(), k, y.data());
    EXPECT(x == y);
    EXPECT_EQ(y[0], 0u);
  }
}

static std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::string s;
  if (!io::ReadFile(path, &s).ok()) return {};
  return std::vector<uint8_t>(s.begin(), s.end());
}

TEST(doubri_v1_edge_records) {
  const std::vector<uint8_t> file = ReadBytes("test/fixtures/vectors/doubri-v1/edge.hash");
  EXPECT(file.size() == 24 + 3200 * 14);
  if (file.size() != 24 + 3200 * 14) return;
  const char* texts[] = {"", "a", "abcd", "abcde", "EMPTY", "Madam, I'm Adam.", "Madam, I'm Adam.",
                         "caf\xc3\xa9 au lait, s'il vous pla\xc3\xaet"};
  Signer s(MakePlan(DefaultConfig(Profile::kDoubriV1)));
  std::vector<uint32_t> out(800);
  for (size_t r = 0; r < sizeof texts / sizeof texts[0]; r++) {
    s.Sign(texts[r], out.data());
    EXPECT(std::memcmp(out.data(), file.data() + 24 + 3200 * r, 3200) == 0);
  }
}

static double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b) {
  size_t inter = 0;
  for (auto& x : a) inter += b.count(x);
  const size_t uni = a.size() + b.size() - inter;
  return uni == 0 ? 1.0 : double(inter) / double(uni);
}

TEST(fast_profile_properties) {
  Config c = DefaultConfig(Profile::kFast);
  c.num_perm = 256;
  Signer s(MakePlan(c));
  std::vector<uint32_t> x(256), y(256);
  s.Sign("", x.data());
  for (uint32_t v : x) EXPECT_EQ(v, 0xFFFFFFFFu);
  // Repeats do not change a set's signature; a single shingle fills every bin.
  s.Sign("abcdeabcde", x.data());
  s.Sign("abcdeabcdeabcde", y.data());
  EXPECT(x == y);
  s.Sign("abc", x.data());
  for (uint32_t v : x) EXPECT_EQ(v, x[0]);
  // Estimates of Jaccard similarity of random word sets are within a few standard errors.
  std::mt19937_64 rng(11);
  double err2 = 0;
  const int pairs = 60;
  for (int t = 0; t < pairs; t++) {
    std::string a, b;
    std::set<std::string> sa, sb;
    const int n = 20 + static_cast<int>(rng() % 400);
    for (int i = 0; i < n; i++) {
      const std::string w = "w" + std::to_string(rng() % 2000) + " ";
      a += w;
      if (rng() % 4 != 0) b += w;
      else b += "x" + std::to_string(rng() % 2000) + " ";
    }
    Config wc = c;
    wc.text.unit = TextUnit::kWord;
    wc.text.n = 1;
    Signer ws(MakePlan(wc));
    ws.Sign(a, x.data());
    ws.Sign(b, y.data());
    Shingler sh(wc.text);
    sh.Reset(a);
    for (size_t i = 0; i < sh.size(); i++) sa.insert(std::string(sh[i]));
    sh.Reset(b);
    for (size_t i = 0; i < sh.size(); i++) sb.insert(std::string(sh[i]));
    size_t eq = 0;
    for (size_t i = 0; i < 256; i++) eq += x[i] == y[i];
    const double d = double(eq) / 256 - Jaccard(sa, sb);
    err2 += d * d;
  }
  // Full-permutation MinHash has variance J(1-J)/k <= 1/(4k): rms error <= 0.031 for k = 256.
  EXPECT(std::sqrt(err2 / pairs) < 0.045);
}

TEST(big_document_does_not_blow_up) {
  std::string doc;
  std::mt19937 rng(3);
  while (doc.size() < 300000) doc.push_back(static_cast<char>('a' + rng() % 26));
  for (Profile p : {Profile::kFast, Profile::kDatasketch, Profile::kDoubriV1}) {
    Config c = DefaultConfig(p);
    c.text.unit = TextUnit::kChar;
    Signer s(MakePlan(c));
    std::vector<uint32_t> out(c.num_perm);
    s.Sign(doc, out.data());
    EXPECT(out[0] != 0xFFFFFFFFu);
  }
}

TEST(invalid_configs) {
  Config c = DefaultConfig(Profile::kFast);
  c.num_perm = 0;
  std::shared_ptr<const Plan> p;
  EXPECT(!Plan::Create(c, &p).ok());
  c.num_perm = kMaxFastPerm + 1;
  EXPECT(!Plan::Create(c, &p).ok());
  c = DefaultConfig(Profile::kDatasketch);
  c.seed = uint64_t(1) << 32;
  EXPECT_EQ(Plan::Create(c, &p).code(), Code::kInvalidArgument);
  c = DefaultConfig(Profile::kDoubriV1);
  c.seed = 0xFFFFFFFFull;
  EXPECT(!Plan::Create(c, &p).ok());
}

TEST(signature_files) {
  const std::string dir = "build-core/minhash-test-files";
  std::system(("mkdir -p " + dir).c_str());
  const uint32_t v[6] = {1, 2, 3, 0xFFFFFFFFu, 5, 6};
  SignatureFileWriter w;
  EXPECT(w.Open(dir + "/a.hash", FileFormat::kDoubri, 3, 1, "").ok());
  EXPECT(w.Append(v, 1).ok());
  EXPECT(w.Append(v + 3, 1).ok());
  EXPECT(w.Commit().ok());
  std::vector<uint8_t> f = ReadBytes(dir + "/a.hash");
  EXPECT_EQ(f.size(), size_t(24 + 24));
  EXPECT(std::memcmp(f.data(), "MinHash\x04\x02\0\0\0\0\0\0\0\x03\0\0\0\0\0\0\0", 24) == 0);
  EXPECT(std::memcmp(f.data() + 24, v, 24) == 0);
  SignatureFileWriter m;
  EXPECT(m.Open(dir + "/a.mhsg", FileFormat::kNeardup, 3, 2, "{}").ok());
  EXPECT(m.Append(v, 2).ok());
  EXPECT(m.Commit().ok());
  f = ReadBytes(dir + "/a.mhsg");
  io::FileHeader h;
  EXPECT(io::DecodeHeader(f.data(), f.size(), kSignatureKind, 1, true, "a.mhsg", &h).ok());
  EXPECT_EQ(h.params[0], 2u);
  EXPECT_EQ(h.params[1], 3u);
  EXPECT_EQ(h.flags, 2u);
  EXPECT(std::memcmp(f.data() + 64, v, 24) == 0);
  EXPECT(std::memcmp(f.data() + 88, "{}", 2) == 0);
}

TEST(sha1_many_matches_openssl) {
  std::mt19937 rng(5);
  std::vector<std::string> keys;
  for (size_t len = 0; len <= 130; len++) {
    std::string k;
    for (size_t i = 0; i < len; i++) k.push_back(static_cast<char>(rng()));
    keys.push_back(k);
  }
  keys.push_back("abc");
  for (size_t n : {keys.size(), keys.size() - 1, size_t(1)}) {
    std::vector<std::string_view> v(keys.begin(), keys.begin() + n);
    std::vector<uint32_t> got(n);
    Sha1Le32Many(v.data(), n, got.data());
    for (size_t i = 0; i < n; i++) EXPECT_EQ(got[i], Sha1Le32(keys[i].data(), keys[i].size()));
  }
  // Every kernel, keys of 0..400 bytes in random order (1, 2, 3+ blocks mixed), every count up to 40 and
  // a long run (full 16-lane groups plus left-overs).
  std::vector<std::string> mixed;
  for (size_t i = 0; i < 700; i++) {
    const size_t len = i % 4 == 0 ? rng() % 401 : rng() % 130;
    std::string k;
    for (size_t j = 0; j < len; j++) k.push_back(static_cast<char>(rng()));
    mixed.push_back(k);
  }
  std::vector<std::string_view> mv(mixed.begin(), mixed.end());
  for (Sha1Kernel kern : {Sha1Kernel::kPortable, Sha1Kernel::kShaNi, Sha1Kernel::kAvx512}) {
    if (!Sha1KernelSupported(kern)) continue;
    for (size_t n = 0; n <= mv.size(); n += n < 40 ? 1 : 331) {
      std::vector<uint32_t> got(n + 1, 0xDEADBEEF);
      Sha1Le32ManyWith(kern, mv.data(), n, got.data());
      bool ok = got[n] == 0xDEADBEEF;
      for (size_t i = 0; i < n; i++) ok = ok && got[i] == Sha1Le32(mixed[i].data(), mixed[i].size());
      EXPECT(ok);
    }
  }
  // SHA-1("abc") = a9993e36...: the first 4 bytes little-endian.
  std::string_view abc("abc");
  uint32_t h = 0;
  Sha1Le32Many(&abc, 1, &h);
  EXPECT_EQ(h, 0x363e99a9u);
}

// A document of more than Signer::kDistinctWindow char shingles is taken in windows: its signature is still
// the minimum over all its shingles, i.e. the element-wise minimum of the signatures of pieces that
// overlap by n-1 characters (each piece small enough for one window).
TEST(huge_document_in_windows_same_signature) {
  std::string text;
  uint64_t x = 12345;
  while (text.size() < 5500000) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    text += static_cast<char>('a' + (x >> 59) % 26);
    if ((x >> 40) % 7 == 0) text += ' ';
  }
  EXPECT(text.size() > Signer::kDistinctWindow);
  for (Profile p : {Profile::kDoubriV1, Profile::kDatasketch}) {
    Config c = DefaultConfig(p);
    if (p == Profile::kDoubriV1) c.num_perm = 64;  // fewer values: the test stays quick
    Signer s(MakePlan(c));
    std::vector<uint32_t> whole(s.k()), piece(s.k()), merged(s.k(), 0xFFFFFFFFu);
    s.Sign(text, whole.data());
    const size_t step = 2000000, n = c.text.n;
    for (size_t at = 0; at + n - 1 < text.size(); at += step) {
      s.Sign(std::string_view(text).substr(at, step + n - 1), piece.data());
      for (size_t i = 0; i < piece.size(); i++) merged[i] = std::min(merged[i], piece[i]);
    }
    EXPECT(whole == merged);
  }
}

TEST_MAIN("minhash")
