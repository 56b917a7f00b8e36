#include "minhash/signature.h"

#include <algorithm>
#include <cstring>

#include "hash/digest.h"
#include "hash/fast64.h"
#include "hash/murmur3.h"
#include "minhash/mt19937.h"
#include "minhash/sha1_shingle.h"
#include "parallel/pool.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace minhash {

namespace {

constexpr uint64_t kEmptyBin = ~uint64_t(0);
constexpr char kDoubriEmpty[] = "EMPTY";

inline uint32_t DatasketchOne(uint64_t a, uint64_t b, uint64_t h) {
  const uint64_t x = a * h + b;  // wraps at 2^64, as numpy's uint64 does
  uint64_t y = (x & kMersenne61) + (x >> 61);
  if (y >= kMersenne61) y -= kMersenne61;
  return static_cast<uint32_t>(y);
}

#if NEARDUP_X86_DISPATCH
// Four permutations per register (64-bit lanes). a*h mod 2^64 from 32-bit pieces: h < 2^32, so
// a*h = lo32(a)*h + (hi32(a)*h << 32). The minimum runs on 32-bit lanes: only the low half of each 64-bit
// lane is meaningful, and min_epu32 treats the halves independently.
NEARDUP_TARGET_AVX2 void DatasketchMinAvx2(const uint32_t* h, size_t n, const uint64_t* a, const uint64_t* b,
                                           size_t k, uint32_t* out) {
  const __m256i p = _mm256_set1_epi64x(static_cast<long long>(kMersenne61));
  const __m256i pm1 = _mm256_set1_epi64x(static_cast<long long>(kMersenne61 - 1));
  size_t i = 0;
  for (; i + 8 <= k; i += 8) {
    const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 4));
    const __m256i ah0 = _mm256_srli_epi64(a0, 32), ah1 = _mm256_srli_epi64(a1, 32);
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 4));
    __m256i m0 = _mm256_set1_epi32(-1), m1 = _mm256_set1_epi32(-1);
    for (size_t j = 0; j < n; j++) {
      const __m256i hv = _mm256_set1_epi64x(static_cast<long long>(h[j]));
      __m256i x0 = _mm256_add_epi64(_mm256_mul_epu32(a0, hv), _mm256_slli_epi64(_mm256_mul_epu32(ah0, hv), 32));
      __m256i x1 = _mm256_add_epi64(_mm256_mul_epu32(a1, hv), _mm256_slli_epi64(_mm256_mul_epu32(ah1, hv), 32));
      x0 = _mm256_add_epi64(x0, b0);
      x1 = _mm256_add_epi64(x1, b1);
      __m256i y0 = _mm256_add_epi64(_mm256_and_si256(x0, p), _mm256_srli_epi64(x0, 61));
      __m256i y1 = _mm256_add_epi64(_mm256_and_si256(x1, p), _mm256_srli_epi64(x1, 61));
      y0 = _mm256_sub_epi64(y0, _mm256_and_si256(_mm256_cmpgt_epi64(y0, pm1), p));
      y1 = _mm256_sub_epi64(y1, _mm256_and_si256(_mm256_cmpgt_epi64(y1, pm1), p));
      m0 = _mm256_min_epu32(m0, y0);
      m1 = _mm256_min_epu32(m1, y1);
    }
    // Gather the low halves: lanes 0,2,4,6 of each.
    const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    const __m128i lo0 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(m0, idx));
    const __m128i lo1 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(m1, idx));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), lo0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 4), lo1);
  }
  if (i < k) DatasketchMinPortable(h, n, a + i, b + i, k - i, out + i);
}

// GCC 12 warns about its own _mm512 intrinsics' undefined-value helpers here (a known false positive).
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC-only warning (clang warns about the unknown group)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// The same with eight permutations per register (AVX-512 F+DQ) and a compare-to-mask correction.
__attribute__((target("avx512f,avx512dq,avx2"))) void DatasketchMinAvx512(const uint32_t* h, size_t n,
                                                                          const uint64_t* a, const uint64_t* b,
                                                                          size_t k, uint32_t* out) {
  const __m512i p = _mm512_set1_epi64(static_cast<long long>(kMersenne61));
  const __m512i pm1 = _mm512_set1_epi64(static_cast<long long>(kMersenne61 - 1));
  size_t i = 0;
  for (; i + 16 <= k; i += 16) {
    const __m512i a0 = _mm512_loadu_si512(a + i), a1 = _mm512_loadu_si512(a + i + 8);
    const __m512i ah0 = _mm512_srli_epi64(a0, 32), ah1 = _mm512_srli_epi64(a1, 32);
    const __m512i b0 = _mm512_loadu_si512(b + i), b1 = _mm512_loadu_si512(b + i + 8);
    // x = a*h + b mod 2^64 by vpmullq. With y = (x & p) + (x >> 61) the value is y - p when y >= p, else y.
    // Since the low 32 bits of p are all ones, low32(y) = u = low32(x + (x >> 61)), and low32(y - p) = u + 1:
    // the value is u or u + 1. y >= p needs bits 3..60 of x all set, so low32(x) >= 2^32 - 8 and u is in
    // W = [2^32 - 8, 2^32 - 1] or [0, 6]. The fast loop keeps min(u) and max(u) per lane (low halves):
    // when every u of the block lies in [7, 2^32 - 9] no value needed the correction and min(u) is exact;
    // otherwise (odds ~15 * n / 2^32 per lane) the block is recomputed with the exact correction.
    __m512i m0 = _mm512_set1_epi32(-1), m1 = _mm512_set1_epi32(-1);
    __m512i g0 = _mm512_setzero_si512(), g1 = _mm512_setzero_si512();
    for (size_t j = 0; j < n; j++) {
      const __m512i hv = _mm512_set1_epi64(static_cast<long long>(h[j]));
      const __m512i x0 = _mm512_add_epi64(_mm512_mullo_epi64(a0, hv), b0);
      const __m512i x1 = _mm512_add_epi64(_mm512_mullo_epi64(a1, hv), b1);
      const __m512i u0 = _mm512_add_epi64(x0, _mm512_srli_epi64(x0, 61));
      const __m512i u1 = _mm512_add_epi64(x1, _mm512_srli_epi64(x1, 61));
      m0 = _mm512_min_epu32(m0, u0);
      m1 = _mm512_min_epu32(m1, u1);
      g0 = _mm512_max_epu32(g0, u0);
      g1 = _mm512_max_epu32(g1, u1);
    }
    const __mmask16 low = 0x5555;  // the low half of each 64-bit lane
    const __m512i lo_edge = _mm512_set1_epi32(7), hi_edge = _mm512_set1_epi32(static_cast<int>(0xFFFFFFF7u));
    if ((_mm512_mask_cmplt_epu32_mask(low, _mm512_min_epu32(m0, m1), lo_edge) |
         _mm512_mask_cmpgt_epu32_mask(low, _mm512_max_epu32(g0, g1), hi_edge)) != 0) {
      m0 = _mm512_set1_epi32(-1), m1 = _mm512_set1_epi32(-1);
      for (size_t j = 0; j < n; j++) {
        const __m512i hv = _mm512_set1_epi64(static_cast<long long>(h[j]));
        __m512i x0 = _mm512_add_epi64(_mm512_mul_epu32(a0, hv), _mm512_slli_epi64(_mm512_mul_epu32(ah0, hv), 32));
        __m512i x1 = _mm512_add_epi64(_mm512_mul_epu32(a1, hv), _mm512_slli_epi64(_mm512_mul_epu32(ah1, hv), 32));
        x0 = _mm512_add_epi64(x0, b0);
        x1 = _mm512_add_epi64(x1, b1);
        __m512i y0 = _mm512_add_epi64(_mm512_and_si512(x0, p), _mm512_srli_epi64(x0, 61));
        __m512i y1 = _mm512_add_epi64(_mm512_and_si512(x1, p), _mm512_srli_epi64(x1, 61));
        y0 = _mm512_mask_sub_epi64(y0, _mm512_cmpgt_epu64_mask(y0, pm1), y0, p);
        y1 = _mm512_mask_sub_epi64(y1, _mm512_cmpgt_epu64_mask(y1, pm1), y1, p);
        m0 = _mm512_min_epu32(m0, y0);
        m1 = _mm512_min_epu32(m1, y1);
      }
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi64_epi32(m0));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 8), _mm512_cvtepi64_epi32(m1));
  }
  if (i < k) DatasketchMinAvx2(h, n, a + i, b + i, k - i, out + i);
}

#pragma GCC diagnostic pop

bool HasAvx512() {
  return Cpu().avx2 && Cpu().avx512f && Cpu().avx512dq;
}
#endif

// Open-addressing set of shingle indexes keyed by a 64-bit hash, with exact comparison on hash equality.
inline size_t Pow2AtLeast(size_t n) {
  size_t c = 16;
  while (c < n) c <<= 1;
  return c;
}

}  // namespace

void DatasketchMinPortable(const uint32_t* h, size_t n, const uint64_t* a, const uint64_t* b, size_t k,
                           uint32_t* out) {
  for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
  for (size_t j = 0; j < n; j++) {
    const uint64_t hv = h[j];
    for (size_t i = 0; i < k; i++) {
      const uint32_t v = DatasketchOne(a[i], b[i], hv);
      if (v < out[i]) out[i] = v;
    }
  }
}

void DatasketchMin(const uint32_t* h, size_t n, const uint64_t* a, const uint64_t* b, size_t k, uint32_t* out) {
#if NEARDUP_X86_DISPATCH
  if (HasAvx512()) return DatasketchMinAvx512(h, n, a, b, k, out);
  if (Cpu().avx2) return DatasketchMinAvx2(h, n, a, b, k, out);
#endif
  DatasketchMinPortable(h, n, a, b, k, out);
}

const char* DatasketchKernel() {
#if NEARDUP_X86_DISPATCH
  if (HasAvx512()) return "avx512";
  if (Cpu().avx2) return "avx2";
#endif
  return "portable";
}

Signer::Signer(std::shared_ptr<const Plan> plan) : plan_(std::move(plan)), shingler_(plan_->config().text) {
  if (plan_->profile() == Profile::kFast) bins_.resize(plan_->k());
}

size_t Signer::CollectDistinct(size_t begin, size_t end) {
  const size_t n = end - begin;
  distinct_.clear();
  if (n <= 1) {
    if (n == 1) distinct_.push_back(static_cast<uint32_t>(begin));
    return distinct_.size();
  }
  const size_t cap = Pow2AtLeast(2 * n);
  if (set_.size() < cap) {
    set_.assign(cap, DistinctSlot{0, 0, 0});
    gen_ = 0;
  }
  if (++gen_ == 0) {
    for (DistinctSlot& e : set_) e.gen = 0;
    gen_ = 1;
  }
  const size_t mask = cap - 1;
  DistinctSlot* set = set_.data();
  const uint32_t gen = gen_;
  if (shingler_.fixed_width() && shingler_.span() <= 8) {
    // ASCII char n-grams of <= 8 bytes: the key is the shingle itself (one load and a mask), so equal keys
    // are equal shingles and no bytes are compared.
    const uint8_t* base = reinterpret_cast<const uint8_t*>(shingler_.text().data());
    const size_t len = shingler_.text().size(), w = shingler_.span();
    const uint64_t wmask = w == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * w)) - 1;
    for (size_t i = begin; i < end; i++) {
      const uint64_t v = i + 8 <= len ? fast64::R64(base + i) & wmask : fast64::LoadSmall(base + i, w, base + len);
      size_t slot = static_cast<size_t>(fast64::Fold(v ^ 0x243f6a8885a308d3ull, fast64::kP1)) & mask;
      bool seen = false;
      while (set[slot].gen == gen) {
        if (set[slot].key == v) {
          seen = true;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (seen) continue;
      set[slot] = DistinctSlot{v, static_cast<uint32_t>(i), gen};
      distinct_.push_back(static_cast<uint32_t>(i));
    }
    return distinct_.size();
  }
  for (size_t i = begin; i < end; i++) {
    const std::string_view s = shingler_[i];
    const uint64_t h = fast64::HashPrepared(s.data(), s.size(), 0x243f6a8885a308d3ull);
    size_t slot = static_cast<size_t>(h >> 20) & mask;
    bool seen = false;
    while (set[slot].gen == gen) {
      if (set[slot].key == h && shingler_[set[slot].idx] == s) {
        seen = true;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (seen) continue;
    set[slot] = DistinctSlot{h, static_cast<uint32_t>(i), gen};
    distinct_.push_back(static_cast<uint32_t>(i));
  }
  return distinct_.size();
}

size_t Signer::CollectDistinctLossy(size_t begin, size_t end) {
  constexpr size_t kSlots = size_t(1) << 14;  // 128 KB
  const size_t n = end - begin;
  if (recent_.size() != kSlots) recent_.assign(kSlots, 0);
  if (++recent_tag_ == 256) {  // a tag is reused only after the table is cleared
    std::fill(recent_.begin(), recent_.end(), 0);
    recent_tag_ = 1;
  }
  // A document of n shingles uses the first ~2n slots (fewer lines touched for a short one).
  const size_t mask = std::min(kSlots, Pow2AtLeast(2 * n)) - 1;
  const uint64_t tag = static_cast<uint64_t>(recent_tag_) << 56;
  distinct_.resize(n);
  uint32_t* out = distinct_.data();
  uint64_t* table = recent_.data();
  const uint8_t* base = reinterpret_cast<const uint8_t*>(shingler_.text().data());
  const size_t len = shingler_.text().size(), w = shingler_.span();
  const uint64_t wmask = (uint64_t(1) << (8 * w)) - 1;  // w <= 7: the top byte is free for the tag
  size_t kept = 0;
  for (size_t i = begin; i < end; i++) {
    const uint64_t v = i + 8 <= len ? fast64::R64(base + i) & wmask : fast64::LoadSmall(base + i, w, base + len);
    const size_t slot = static_cast<size_t>(fast64::Fold(v ^ 0x243f6a8885a308d3ull, fast64::kP1)) & mask;
    const uint64_t key = v | tag;
    const bool seen = table[slot] == key;
    table[slot] = key;
    out[kept] = static_cast<uint32_t>(i);
    kept += !seen;
  }
  distinct_.resize(kept);
  return kept;
}

void Signer::DoubriOne(std::string_view s, uint32_t* out) {
  if (mixed_.size() < s.size() / 4 + 1) mixed_.resize(s.size() / 4 + 1);
  Murmur3_x86_32_MinSeq(s.data(), s.size(), static_cast<uint32_t>(plan_->config().seed), plan_->k(), out,
                        mixed_.data());
}

namespace {

// Optimal densification (Shrivastava 2017): an empty bin i takes the value of the first non-empty bin in
// its own pseudo-random probe sequence j(i, 1), j(i, 2), ... — the same sequence for every document.
void Densify(const uint64_t* bins, size_t k, uint64_t probe_seed, uint32_t* out) {
  size_t filled = 0;
  for (size_t i = 0; i < k; i++) filled += bins[i] != kEmptyBin;
  if (filled == 0) {
    for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
    return;
  }
  for (size_t i = 0; i < k; i++) {
    if (bins[i] != kEmptyBin) {
      out[i] = static_cast<uint32_t>(bins[i]);
      continue;
    }
    uint64_t x = probe_seed ^ (static_cast<uint64_t>(i) << 32);
    for (;;) {
      x += 0x9e3779b97f4a7c15ull;
      const uint64_t r = fast64::Mix64(x);
      const size_t j = static_cast<size_t>(((r >> 32) * k) >> 32);
      if (bins[j] != kEmptyBin) {
        out[i] = static_cast<uint32_t>(bins[j]);
        break;
      }
    }
  }
}

inline void FastAdd(uint64_t* bins, size_t k, uint64_t h) {
  const size_t bin = static_cast<size_t>(((h >> 32) * k) >> 32);
  const uint64_t v = static_cast<uint32_t>(h);
  bins[bin] = v < bins[bin] ? v : bins[bin];  // branch-free: the comparison is unpredictable early on
}

// The same bin when k = 2^b (b <= 32): (hi32(h) * 2^b) >> 32 = h >> (64 - b), a shift instead of a multiply
// (the 64-bit multiplier is the fast profile's bottleneck: two per shingle are in the hash itself).
inline void FastAddPow2(uint64_t* bins, unsigned shift, uint64_t h) {
  const size_t bin = static_cast<size_t>(h >> shift);
  const uint64_t v = static_cast<uint32_t>(h);
  bins[bin] = v < bins[bin] ? v : bins[bin];
}

#if NEARDUP_X86_DISPATCH
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// fast64::Fold on eight 64-bit lanes by a constant b: the 128-bit product from four 32x32 products (AVX-512
// has no high 64-bit multiply), its low half by vpmullq.
__attribute__((target("avx512f,avx512dq"))) inline __m512i Fold8(__m512i a, __m512i b, __m512i b1) {
  const __m512i m32 = _mm512_set1_epi64(0xFFFFFFFFll);
  const __m512i a1 = _mm512_srli_epi64(a, 32);
  const __m512i p00 = _mm512_mul_epu32(a, b), p10 = _mm512_mul_epu32(a1, b);
  const __m512i p01 = _mm512_mul_epu32(a, b1), p11 = _mm512_mul_epu32(a1, b1);
  const __m512i mid = _mm512_add_epi64(p10, _mm512_srli_epi64(p00, 32));
  const __m512i mid2 = _mm512_add_epi64(p01, _mm512_and_si512(mid, m32));
  const __m512i hi = _mm512_add_epi64(_mm512_add_epi64(p11, _mm512_srli_epi64(mid, 32)), _mm512_srli_epi64(mid2, 32));
  return _mm512_xor_si512(_mm512_mullo_epi64(a, b), hi);
}

// fast64::HashSmall of the eight w-byte shingles at p .. p + 7 (16 readable bytes at p).
__attribute__((target("avx512f,avx512bw,avx512dq"))) inline __m512i Hash8(const uint8_t* p, __m512i shuf, __mmask64 bytes,
                                                                         __m512i c0, __m512i b1, __m512i b1h, __m512i p2,
                                                                         __m512i b3, __m512i b3h) {
  const __m512i text = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i v = _mm512_maskz_shuffle_epi8(bytes, text, shuf);
  const __m512i f1 = _mm512_xor_si512(Fold8(_mm512_xor_si512(v, c0), b1, b1h), p2);
  return Fold8(f1, b3, b3h);
}

// The fast profile on fixed-width shingles of w <= 8 bytes (ASCII char n-grams), k = 2^(64 - shift) bins:
// eight shingle hashes per step (fast64::HashSmall, the same values), then the bin minima in scalar code
// (they run on other ports than the vector multiplies). Returns the number of shingles done; the caller does
// the rest.
__attribute__((target("avx512f,avx512bw,avx512dq"))) size_t FastFixedAvx512(const uint8_t* base, size_t len,
                                                                           size_t count, size_t w, uint64_t seed,
                                                                           uint64_t* bins, unsigned shift) {
  // 16 text bytes broadcast to the four 128-bit lanes; qword e (lane e / 2) takes bytes e .. e + 7 of them,
  // the shingle at offset i + e, its bytes past w zeroed by the mask.
  alignas(64) uint8_t idx[64];
  for (int e = 0; e < 8; e++)
    for (int b = 0; b < 8; b++) idx[8 * e + b] = static_cast<uint8_t>(e + b);
  const __m512i shuf = _mm512_load_si512(idx);
  const uint64_t qmask = w == 8 ? 0xFFu : (1u << w) - 1;
  const __mmask64 bytes = _cvtu64_mask64(qmask * 0x0101010101010101ull);
  const __m512i c0 = _mm512_set1_epi64(static_cast<long long>(seed ^ fast64::kP0));
  const uint64_t k1 = fast64::kP1 ^ w;
  const __m512i b1 = _mm512_set1_epi64(static_cast<long long>(k1)), b1h = _mm512_set1_epi64(static_cast<long long>(k1 >> 32));
  const __m512i p2 = _mm512_set1_epi64(static_cast<long long>(fast64::kP2));
  const __m512i b3 = _mm512_set1_epi64(static_cast<long long>(fast64::kP3)), b3h = _mm512_set1_epi64(static_cast<long long>(fast64::kP3 >> 32));
  // Software-pipelined: the hashes of the next 16 shingles are computed while the bins take the last 16.
  alignas(64) uint64_t h[16];
  size_t i = 0;
  if (count >= 16 && len >= 24) {
    _mm512_store_si512(h, Hash8(base, shuf, bytes, c0, b1, b1h, p2, b3, b3h));
    _mm512_store_si512(h + 8, Hash8(base + 8, shuf, bytes, c0, b1, b1h, p2, b3, b3h));
    for (i = 16; i + 16 <= count && i + 24 <= len; i += 16) {
      const __m512i n0 = Hash8(base + i, shuf, bytes, c0, b1, b1h, p2, b3, b3h);
      const __m512i n1 = Hash8(base + i + 8, shuf, bytes, c0, b1, b1h, p2, b3, b3h);
      for (int e = 0; e < 16; e++) FastAddPow2(bins, shift, h[e]);
      _mm512_store_si512(h, n0);
      _mm512_store_si512(h + 8, n1);
    }
    for (int e = 0; e < 16; e++) FastAddPow2(bins, shift, h[e]);
  }
  return i;
}
#pragma GCC diagnostic pop

bool HasFastAvx512() { return Cpu().avx512f && Cpu().avx512bw && Cpu().avx512dq; }
#endif

}  // namespace

void Signer::SignPrepared(uint32_t* out) {
  const Plan& p = *plan_;
  const size_t k = p.k();
  switch (p.profile()) {
    case Profile::kDoubriV1: {
      for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
      if (shingler_.units() < p.config().text.n) {
        DoubriOne(std::string_view(kDoubriEmpty, 5), out);
        return;
      }
      // The minimum over a set does not depend on repeats: a huge document is taken in windows of
      // kDistinctWindow shingles (the same values; a shingle repeated across windows is hashed again), so
      // the distinct-set scratch stays bounded (~16 bytes x 2-4 slots per shingle of one window).
      for (size_t w = 0; w < shingler_.size(); w += kDistinctWindow) {
        const size_t n = CollectDistinct(w, std::min(shingler_.size(), w + kDistinctWindow));
        views_.resize(n);
        for (size_t j = 0; j < n; j++) views_[j] = shingler_[distinct_[j]];
        Murmur3_x86_32_MinSeqMany(views_.data(), n, static_cast<uint32_t>(p.config().seed), k, out, &mixed_);
      }
      return;
    }
    case Profile::kDatasketch: {
      // Char shingles repeat a lot within a document and are cheap to compare: SHA-1 each distinct one
      // once. Word shingles rarely repeat (5% of the occurrences on the SpamAssassin corpus) and finding
      // the repeats cost more than SHA-1-ing them, so every occurrence is hashed (docs/minhash.md).
      size_t n;
      if (p.config().text.unit == TextUnit::kChar) {
        const bool lossy = shingler_.fixed_width() && shingler_.span() <= 7;
        if (shingler_.size() > kDistinctWindow) {
          // in windows, as doubri-v1 above: each window's minima, merged
          for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
          window_min_.resize(k);
          for (size_t w = 0; w < shingler_.size(); w += kDistinctWindow) {
            n = lossy ? CollectDistinctLossy(w, std::min(shingler_.size(), w + kDistinctWindow))
                      : CollectDistinct(w, std::min(shingler_.size(), w + kDistinctWindow));
            views_.resize(n);
            for (size_t j = 0; j < n; j++) views_[j] = shingler_[distinct_[j]];
            h32_.resize(n);
            Sha1Le32Many(views_.data(), n, h32_.data());
            DatasketchMin(h32_.data(), n, p.a(), p.b(), k, window_min_.data());
            for (size_t i = 0; i < k; i++) out[i] = std::min(out[i], window_min_[i]);
          }
          return;
        }
        n = lossy ? CollectDistinctLossy(0, shingler_.size()) : CollectDistinct(0, shingler_.size());
        views_.resize(n);
        for (size_t j = 0; j < n; j++) views_[j] = shingler_[distinct_[j]];
      } else {
        n = shingler_.size();
        views_.resize(n);
        for (size_t j = 0; j < n; j++) views_[j] = shingler_[j];
      }
      h32_.resize(n);
      Sha1Le32Many(views_.data(), n, h32_.data());
      DatasketchMin(h32_.data(), n, p.a(), p.b(), k, out);
      return;
    }
    case Profile::kFast: {
      std::fill(bins_.begin(), bins_.end(), kEmptyBin);
      uint64_t* bins = bins_.data();
      if (k > 1 && (k & (k - 1)) == 0) {  // k = 1: a shift by 64 is undefined
        const unsigned shift = 64 - static_cast<unsigned>(__builtin_ctzll(k));
#if NEARDUP_X86_DISPATCH
        if (shingler_.fixed_width() && shingler_.span() <= 8 && HasFastAvx512()) {
          const uint8_t* base = reinterpret_cast<const uint8_t*>(shingler_.text().data());
          const size_t len = shingler_.text().size(), count = shingler_.size(), w = shingler_.span();
          size_t i = FastFixedAvx512(base, len, count, w, p.fast_seed(), bins, shift);
          const uint64_t mask = w == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * w)) - 1;
          for (; i < count; i++) {
            const uint64_t v = i + 8 <= len ? fast64::R64(base + i) & mask : fast64::LoadSmall(base + i, w, base + len);
            FastAddPow2(bins, shift, fast64::HashSmall(v, w, p.fast_seed()));
          }
          Densify(bins, k, p.probe_seed(), out);
          return;
        }
#endif
        ForEachFast64(shingler_, p.fast_seed(), [bins, shift](size_t, uint64_t h) { FastAddPow2(bins, shift, h); });
      } else {
        ForEachFast64(shingler_, p.fast_seed(), [bins, k](size_t, uint64_t h) { FastAdd(bins, k, h); });
      }
      Densify(bins, k, p.probe_seed(), out);
      return;
    }
  }
}

void Signer::Sign(const uint8_t* data, size_t len, uint32_t* out) {
  shingler_.Reset(data, len);
  SignPrepared(out);
}

void Signer::SignShingles(const std::string_view* shingles, size_t n, uint32_t* out) {
  const Plan& p = *plan_;
  const size_t k = p.k();
  switch (p.profile()) {
    case Profile::kDoubriV1:
      for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
      Murmur3_x86_32_MinSeqMany(shingles, n, static_cast<uint32_t>(p.config().seed), k, out, &mixed_);
      return;
    case Profile::kDatasketch:
      h32_.resize(n);
      Sha1Le32Many(shingles, n, h32_.data());
      DatasketchMin(h32_.data(), n, p.a(), p.b(), k, out);
      return;
    case Profile::kFast:
      std::fill(bins_.begin(), bins_.end(), kEmptyBin);
      for (size_t j = 0; j < n; j++)
        FastAdd(bins_.data(), k, fast64::HashPrepared(shingles[j].data(), shingles[j].size(), p.fast_seed()));
      Densify(bins_.data(), k, p.probe_seed(), out);
      return;
  }
}

Status SignBatch(const Docs& docs, const std::shared_ptr<const Plan>& plan, size_t slots,
                 const std::atomic<bool>* stop, uint32_t* out, uint64_t* invalid_utf8) {
  if (!plan) return Status(Code::kInternal, "no MinHash plan");
  if (slots == 0) slots = 1;
  const size_t n = docs.size();
  const size_t k = plan->k();
  std::vector<std::unique_ptr<Signer>> signers(slots);
  std::atomic<uint64_t> invalid{0};
  // Small chunks: documents vary a lot in size, and a chunk is the unit of load balancing.
  const size_t grain = std::max<size_t>(1, std::min<size_t>(64, n / (slots * 8 + 1)));
  parallel::ParallelFor(
      n, grain, slots,
      [&](size_t b, size_t e, size_t slot) {
        if (!signers[slot]) signers[slot] = std::make_unique<Signer>(plan);
        Signer& s = *signers[slot];
        uint64_t local = 0;
        for (size_t i = b; i < e; i++) {
          s.Sign(docs.ptr[i], docs.len[i], out + i * k);
          local += s.had_invalid_utf8();
        }
        if (local) invalid.fetch_add(local);
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  if (invalid_utf8 != nullptr) *invalid_utf8 = invalid.load();
  return Status::Ok();
}

}  // namespace minhash
}  // namespace neardup
