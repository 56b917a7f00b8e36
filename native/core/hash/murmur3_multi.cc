// Multi-seed MurmurHash3_x86_32. h starts at the seed; every block step is h = rotl(h ^ k, 13) * 5 + c with
// k independent of the seed, so the mixed blocks are computed once and the seed-dependent steps run in
// SIMD lanes.
#include <algorithm>
#include <cstring>
#include <vector>

#include "hash/murmur3.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace {

inline uint32_t Rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Prepares the seed-independent part: mixed[i] for each full block, and the mixed tail word (0 if none).
inline size_t PrepareBlocks(const uint8_t* p, size_t len, uint32_t* mixed, uint32_t* tail_k) {
  const size_t nblocks = len / 4;
  for (size_t i = 0; i < nblocks; i++) {
    uint32_t k;
    std::memcpy(&k, p + 4 * i, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    k = __builtin_bswap32(k);
#endif
    k *= 0xcc9e2d51u;
    k = Rotl32(k, 15);
    mixed[i] = k * 0x1b873593u;
  }
  const uint8_t* tail = p + 4 * nblocks;
  uint32_t k = 0;
  switch (len & 3) {
    case 3: k ^= uint32_t(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= uint32_t(tail[1]) << 8; [[fallthrough]];
    case 1: k ^= tail[0]; k *= 0xcc9e2d51u; k = Rotl32(k, 15); k *= 0x1b873593u; break;
    default: break;
  }
  *tail_k = k;
  return nblocks;
}

inline uint32_t FinishOne(uint32_t h, const uint32_t* mixed, size_t nblocks, uint32_t tail_k, uint32_t len) {
  for (size_t i = 0; i < nblocks; i++) {
    h ^= mixed[i];
    h = Rotl32(h, 13);
    h = h * 5 + 0xe6546b64u;
  }
  h ^= tail_k;
  h ^= len;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

#if NEARDUP_X86_DISPATCH
NEARDUP_TARGET_AVX2 inline __m256i Finish8(__m256i h, const uint32_t* mixed, size_t nblocks, uint32_t tail_k,
                                           uint32_t len) {
  const __m256i c = _mm256_set1_epi32(static_cast<int>(0xe6546b64u));
  for (size_t i = 0; i < nblocks; i++) {
    h = _mm256_xor_si256(h, _mm256_set1_epi32(static_cast<int>(mixed[i])));
    h = _mm256_or_si256(_mm256_slli_epi32(h, 13), _mm256_srli_epi32(h, 19));
    h = _mm256_add_epi32(_mm256_add_epi32(h, _mm256_slli_epi32(h, 2)), c);
  }
  h = _mm256_xor_si256(h, _mm256_set1_epi32(static_cast<int>(tail_k ^ len)));
  h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
  h = _mm256_mullo_epi32(h, _mm256_set1_epi32(static_cast<int>(0x85ebca6bu)));
  h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 13));
  h = _mm256_mullo_epi32(h, _mm256_set1_epi32(static_cast<int>(0xc2b2ae35u)));
  h = _mm256_xor_si256(h, _mm256_srli_epi32(h, 16));
  return h;
}

NEARDUP_TARGET_AVX2 void SeedsAvx2(const uint32_t* mixed, size_t nblocks, uint32_t tail_k, uint32_t len,
                                   const uint32_t* seeds, size_t count, uint32_t* out) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(seeds + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), Finish8(h, mixed, nblocks, tail_k, len));
  }
  for (; i < count; i++) out[i] = FinishOne(seeds[i], mixed, nblocks, tail_k, len);
}

NEARDUP_TARGET_AVX2 void MinSeqAvx2(const uint32_t* mixed, size_t nblocks, uint32_t tail_k, uint32_t len,
                                    uint32_t first_seed, size_t count, uint32_t* out) {
  size_t i = 0;
  __m256i seed = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(first_seed)),
                                  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i eight = _mm256_set1_epi32(8);
  for (; i + 8 <= count; i += 8) {
    __m256i h = Finish8(seed, mixed, nblocks, tail_k, len);
    __m256i* dst = reinterpret_cast<__m256i*>(out + i);
    _mm256_storeu_si256(dst, _mm256_min_epu32(_mm256_loadu_si256(dst), h));
    seed = _mm256_add_epi32(seed, eight);
  }
  for (; i < count; i++) {
    uint32_t h = FinishOne(first_seed + static_cast<uint32_t>(i), mixed, nblocks, tail_k, len);
    if (h < out[i]) out[i] = h;
  }
}

// Many keys, seeds first_seed.. in 16 lanes, the seeds outer and the keys inner: the minima of 32 seeds stay
// in two registers while every key of the batch passes (no load/store of out per key), and the first
// rotation is hoisted: rotl(seed ^ m, 13) = rotl(seed, 13) ^ rotl(m, 13), with rotl(m, 13) prepared per key.
// keys: per key {first mixed word, blocks, tail_k ^ len}, mixed words with the first already rotated.
// GCC 12 warns about its own _mm512 intrinsics' undefined-value helpers here (a known false positive).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f"))) inline __m512i Key16(__m512i rs, const uint32_t* w, uint32_t nb, uint32_t tl) {
  const __m512i c = _mm512_set1_epi32(static_cast<int>(0xe6546b64u));
  __m512i h;
  if (nb == 0) {
    h = _mm512_rol_epi32(rs, 19);  // undo the hoisted rotation: h is the seed itself
  } else {
    h = _mm512_xor_si512(rs, _mm512_set1_epi32(static_cast<int>(w[0])));
    h = _mm512_add_epi32(_mm512_add_epi32(h, _mm512_slli_epi32(h, 2)), c);
    for (uint32_t b = 1; b < nb; b++) {
      h = _mm512_rol_epi32(_mm512_xor_si512(h, _mm512_set1_epi32(static_cast<int>(w[b]))), 13);
      h = _mm512_add_epi32(_mm512_add_epi32(h, _mm512_slli_epi32(h, 2)), c);
    }
  }
  h = _mm512_xor_si512(h, _mm512_set1_epi32(static_cast<int>(tl)));
  h = _mm512_xor_si512(h, _mm512_srli_epi32(h, 16));
  h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(0x85ebca6bu)));
  h = _mm512_xor_si512(h, _mm512_srli_epi32(h, 13));
  h = _mm512_mullo_epi32(h, _mm512_set1_epi32(static_cast<int>(0xc2b2ae35u)));
  return _mm512_xor_si512(h, _mm512_srli_epi32(h, 16));
}

__attribute__((target("avx512f"))) void MinSeqManyAvx512(const uint32_t* keys, size_t n, const uint32_t* words,
                                                       uint32_t first_seed, size_t count, uint32_t* out) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m512i s0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first_seed + i)), lane);
    const __m512i s1 = _mm512_add_epi32(s0, _mm512_set1_epi32(16));
    const __m512i r0 = _mm512_rol_epi32(s0, 13), r1 = _mm512_rol_epi32(s1, 13);
    __m512i m0 = _mm512_loadu_si512(out + i), m1 = _mm512_loadu_si512(out + i + 16);
    for (size_t j = 0; j < n; j++) {
      const uint32_t* k = keys + 3 * j;
      const uint32_t* w = words + k[0];
      m0 = _mm512_min_epu32(m0, Key16(r0, w, k[1], k[2]));
      m1 = _mm512_min_epu32(m1, Key16(r1, w, k[1], k[2]));
    }
    _mm512_storeu_si512(out + i, m0);
    _mm512_storeu_si512(out + i + 16, m1);
  }
  for (; i < count; i += 16) {
    const __mmask16 live = count - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (count - i)) - 1);
    const __m512i s0 = _mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(first_seed + i)), lane);
    const __m512i r0 = _mm512_rol_epi32(s0, 13);
    __m512i m0 = _mm512_maskz_loadu_epi32(live, out + i);
    for (size_t j = 0; j < n; j++) {
      const uint32_t* k = keys + 3 * j;
      m0 = _mm512_min_epu32(m0, Key16(r0, words + k[0], k[1], k[2]));
    }
    _mm512_mask_storeu_epi32(out + i, live, m0);
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

void Murmur3_x86_32_Seeds(const void* key, size_t len, const uint32_t* seeds, size_t count, uint32_t* out,
                          uint32_t* mixed) {
  uint32_t tail_k;
  const size_t nblocks = PrepareBlocks(static_cast<const uint8_t*>(key), len, mixed, &tail_k);
  const uint32_t len32 = static_cast<uint32_t>(len);
#if NEARDUP_X86_DISPATCH
  if (Cpu().avx2) return SeedsAvx2(mixed, nblocks, tail_k, len32, seeds, count, out);
#endif
  for (size_t i = 0; i < count; i++) out[i] = FinishOne(seeds[i], mixed, nblocks, tail_k, len32);
}

void Murmur3_x86_32_MinSeq(const void* key, size_t len, uint32_t first_seed, size_t count, uint32_t* out,
                           uint32_t* mixed) {
  uint32_t tail_k;
  const size_t nblocks = PrepareBlocks(static_cast<const uint8_t*>(key), len, mixed, &tail_k);
  const uint32_t len32 = static_cast<uint32_t>(len);
#if NEARDUP_X86_DISPATCH
  if (Cpu().avx2) return MinSeqAvx2(mixed, nblocks, tail_k, len32, first_seed, count, out);
#endif
  for (size_t i = 0; i < count; i++) {
    uint32_t h = FinishOne(first_seed + static_cast<uint32_t>(i), mixed, nblocks, tail_k, len32);
    if (h < out[i]) out[i] = h;
  }
}


void Murmur3_x86_32_MinSeqMany(const std::string_view* keys, size_t n, uint32_t first_seed, size_t count,
                               uint32_t* out, std::vector<uint32_t>* scratch) {
#if NEARDUP_X86_DISPATCH
  if (Cpu().avx512f) {
    // keys: 3 words each, then the mixed words of every key (the first of each pre-rotated by 13).
    size_t words = 0;
    for (size_t j = 0; j < n; j++) words += keys[j].size() / 4;
    scratch->resize(3 * n + words);
    uint32_t* meta = scratch->data();
    uint32_t* w = meta + 3 * n;
    size_t at = 0;
    for (size_t j = 0; j < n; j++) {
      uint32_t tail_k;
      const size_t nb = PrepareBlocks(reinterpret_cast<const uint8_t*>(keys[j].data()), keys[j].size(), w + at, &tail_k);
      if (nb > 0) w[at] = Rotl32(w[at], 13);
      meta[3 * j] = static_cast<uint32_t>(at);
      meta[3 * j + 1] = static_cast<uint32_t>(nb);
      meta[3 * j + 2] = tail_k ^ static_cast<uint32_t>(keys[j].size());
      at += nb;
    }
    return MinSeqManyAvx512(meta, n, w, first_seed, count, out);
  }
#endif
  size_t most = 0;
  for (size_t j = 0; j < n; j++) most = std::max(most, keys[j].size() / 4 + 1);
  if (scratch->size() < most) scratch->resize(most);
  for (size_t j = 0; j < n; j++)
    Murmur3_x86_32_MinSeq(keys[j].data(), keys[j].size(), first_seed, count, out, scratch->data());
}

}  // namespace neardup
