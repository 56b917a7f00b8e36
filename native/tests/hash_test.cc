#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "check.h"
#include "hash/crc32c.h"
#include "hash/digest.h"
#include "hash/fast64.h"
#include "hash/murmur3.h"

using namespace neardup;

// SMHasher's verification: hash keys {0}, {0,1}, ..., {0..254} (key i has length i, seed 256 - i), hash
// the concatenated results with seed 0, and read the first 4 bytes little-endian.
template <typename F>
static uint32_t Verification(size_t width, F hash) {
  uint8_t key[256];
  std::vector<uint8_t> hashes(256 * width);
  for (int i = 0; i < 256; i++) {
    key[i] = static_cast<uint8_t>(i);
    hash(key, i, 256 - i, &hashes[i * width]);
  }
  uint8_t final[16];
  hash(hashes.data(), 256 * width, 0, final);
  return uint32_t(final[0]) | (uint32_t(final[1]) << 8) | (uint32_t(final[2]) << 16) | (uint32_t(final[3]) << 24);
}

TEST(murmur3_x86_32_verification) {
  const uint32_t v = Verification(4, [](const void* k, size_t n, uint32_t seed, uint8_t* out) {
    const uint32_t h = Murmur3_x86_32(k, n, seed);
    std::memcpy(out, &h, 4);
  });
  EXPECT_EQ(v, 0xB0F57EE3u);
}

TEST(murmur3_x64_128_verification) {
  const uint32_t v = Verification(16, [](const void* k, size_t n, uint32_t seed, uint8_t* out) {
    uint64_t h[2];
    Murmur3_x64_128(k, n, seed, h);
    std::memcpy(out, h, 16);
  });
  EXPECT_EQ(v, 0x6384BA69u);
}

TEST(murmur3_known_values) {
  EXPECT_EQ(Murmur3_x86_32("", 0, 0), 0u);
  EXPECT_EQ(Murmur3_x86_32("", 0, 1), 0x514E28B7u);
  EXPECT_EQ(Murmur3_x86_32("hello", 5, 0), 0x248BFA47u);
  EXPECT_EQ(Murmur3_x86_32("The quick brown fox jumps over the lazy dog", 43, 0), 0x2E4FF723u);
}

TEST(murmur3_multi_seed_matches_scalar) {
  std::mt19937 rng(7);
  std::vector<uint32_t> seeds(803), out(803), ref(803), mixed(64), mins(803), minref(803);
  for (size_t i = 0; i < seeds.size(); i++) seeds[i] = rng();
  for (size_t len = 0; len < 70; len++) {
    std::vector<uint8_t> key(len);
    for (auto& b : key) b = static_cast<uint8_t>(rng());
    Murmur3_x86_32_Seeds(key.data(), len, seeds.data(), seeds.size(), out.data(), mixed.data());
    for (size_t i = 0; i < seeds.size(); i++) ref[i] = Murmur3_x86_32(key.data(), len, seeds[i]);
    EXPECT(out == ref);
    for (size_t i = 0; i < mins.size(); i++) mins[i] = minref[i] = rng();
    Murmur3_x86_32_MinSeq(key.data(), len, 5, mins.size(), mins.data(), mixed.data());
    for (size_t i = 0; i < minref.size(); i++) {
      const uint32_t h = Murmur3_x86_32(key.data(), len, static_cast<uint32_t>(5 + i));
      if (h < minref[i]) minref[i] = h;
    }
    EXPECT(mins == minref);
  }
}

TEST(murmur3_multi_key_min_matches_scalar) {
  // Keys of every length 0..69 (0 to 17 blocks, every tail), in batches, seeds past a multiple of 16 and 32.
  std::mt19937 rng(11);
  std::vector<std::string> keys;
  for (size_t len = 0; len < 70; len++) {
    std::string k(len, '\0');
    for (auto& c : k) c = static_cast<char>(rng());
    keys.push_back(k);
  }
  for (size_t count : {1, 7, 16, 31, 32, 33, 800, 803}) {
    for (size_t n : {0, 1, 5, 70}) {
      std::vector<std::string_view> v;
      for (size_t j = 0; j < n; j++) v.push_back(keys[(j * 37 + count) % keys.size()]);
      std::vector<uint32_t> mins(count), ref(count), scratch;
      for (size_t i = 0; i < count; i++) mins[i] = ref[i] = rng() | (i % 3 == 0 ? 0xFFFF0000u : 0u);
      Murmur3_x86_32_MinSeqMany(v.data(), n, 0xFFFFFFF0u, count, mins.data(), &scratch);
      for (size_t i = 0; i < count; i++)
        for (const auto& k : v) ref[i] = std::min(ref[i], Murmur3_x86_32(k.data(), k.size(), static_cast<uint32_t>(0xFFFFFFF0u + i)));
      EXPECT(mins == ref);
    }
  }
}

TEST(crc32c_check_value) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  // Streaming equals one shot.
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<uint8_t>(i * 31 + 7);
  const uint32_t whole = Crc32c(data.data(), data.size());
  uint32_t c = 0;
  for (size_t off = 0; off < data.size(); off += 37) c = Crc32c(&data[off], std::min<size_t>(37, data.size() - off), c);
  EXPECT_EQ(c, whole);
}

TEST(digests) {
  uint8_t d[20];
  Sha1("abc", 3, d);
  EXPECT_EQ(d[0], 0xa9);
  EXPECT_EQ(d[19], 0x9d);
  EXPECT_EQ(Sha1Le32("abc", 3), 0x363e99a9u);  // bytes a9 99 3e 36, little-endian
  EXPECT_EQ(Md5Be64("", 0), 0xd41d8cd98f00b204ull);
}

TEST(fast64_properties) {
  // Every length from 0 to 200 at every offset gives distinct values, and the seed matters.
  std::vector<uint8_t> buf(256);
  for (size_t i = 0; i < buf.size(); i++) buf[i] = static_cast<uint8_t>(i * 7);
  std::vector<uint64_t> seen;
  for (size_t len = 0; len <= 200; len++) seen.push_back(fast64::Hash(buf.data(), len, 0));
  std::sort(seen.begin(), seen.end());
  EXPECT(std::adjacent_find(seen.begin(), seen.end()) == seen.end());
  EXPECT(fast64::Hash("abc", 3, 0) != fast64::Hash("abc", 3, 1));
  EXPECT_EQ(fast64::Hash("abc", 3, 0), fast64::HashPrepared("abc", 3, fast64::PrepareSeed(0)));
  // Avalanche on a short key: flipping any single bit of an 8-byte key changes about half the output bits.
  double total = 0;
  int trials = 0;
  for (int bit = 0; bit < 64; bit++) {
    uint64_t k = 0x0123456789abcdefull, k2 = k ^ (1ull << bit);
    total += __builtin_popcountll(fast64::Hash(&k, 8, 0) ^ fast64::Hash(&k2, 8, 0));
    trials++;
  }
  EXPECT(total / trials > 26 && total / trials < 38);
}

TEST_MAIN("hash")
