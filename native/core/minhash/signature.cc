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
    // x = a*h + b mod 2^64 by vpmullq (3 uops; beats two 32x32 products, a shift and an add). With
    // y = (x & p) + (x >> 61) the value is y - p when y >= p, else y, and the low 32 bits of y are those of
    // x + (x >> 61). y >= p needs bits 3..60 of x all set (odds ~2^-58 per value): the fast loop takes the
    // low 32 bits of x + (x >> 61) and tracks max(x & p); if that ever reaches p - 7 the block is
    // recomputed with the exact correction.
    __m512i m0 = _mm512_set1_epi32(-1), m1 = _mm512_set1_epi32(-1);
    __m512i g0 = _mm512_setzero_si512(), g1 = _mm512_setzero_si512();
    for (size_t j = 0; j < n; j++) {
      const __m512i hv = _mm512_set1_epi64(static_cast<long long>(h[j]));
      __m512i x0 = _mm512_add_epi64(_mm512_mullo_epi64(a0, hv), b0);
      __m512i x1 = _mm512_add_epi64(_mm512_mullo_epi64(a1, hv), b1);
      g0 = _mm512_max_epu64(g0, _mm512_and_si512(x0, p));
      g1 = _mm512_max_epu64(g1, _mm512_and_si512(x1, p));
      m0 = _mm512_min_epu32(m0, _mm512_add_epi64(x0, _mm512_srli_epi64(x0, 61)));
      m1 = _mm512_min_epu32(m1, _mm512_add_epi64(x1, _mm512_srli_epi64(x1, 61)));
    }
    const __m512i edge = _mm512_set1_epi64(static_cast<long long>(kMersenne61 - 7));
    if ((_mm512_cmpge_epu64_mask(g0, edge) | _mm512_cmpge_epu64_mask(g1, edge)) != 0) {
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
  if (set_stamp_.size() < cap) {
    set_hash_.assign(cap, 0);
    set_idx_.assign(cap, 0);
    set_stamp_.assign(cap, 0);
    gen_ = 0;
  }
  if (++gen_ == 0) {
    std::fill(set_stamp_.begin(), set_stamp_.end(), 0);
    gen_ = 1;
  }
  const size_t mask = cap - 1;
  for (size_t i = begin; i < end; i++) {
    const std::string_view s = shingler_[i];
    const uint64_t h = fast64::HashPrepared(s.data(), s.size(), 0x243f6a8885a308d3ull);
    size_t slot = static_cast<size_t>(h >> 20) & mask;
    bool seen = false;
    while (set_stamp_[slot] == gen_) {
      if (set_hash_[slot] == h && shingler_[set_idx_[slot]] == s) {
        seen = true;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (seen) continue;
    set_stamp_[slot] = gen_;
    set_hash_[slot] = h;
    set_idx_[slot] = static_cast<uint32_t>(i);
    distinct_.push_back(static_cast<uint32_t>(i));
  }
  return distinct_.size();
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
        CollectDistinct(w, std::min(shingler_.size(), w + kDistinctWindow));
        for (uint32_t idx : distinct_) DoubriOne(shingler_[idx], out);
      }
      return;
    }
    case Profile::kDatasketch: {
      // Char shingles repeat a lot within a document and are cheap to compare: SHA-1 each distinct one
      // once. Word shingles rarely repeat (5% of the occurrences on the SpamAssassin corpus) and finding
      // the repeats cost more than SHA-1-ing them, so every occurrence is hashed (docs/minhash.md).
      size_t n;
      if (p.config().text.unit == TextUnit::kChar) {
        if (shingler_.size() > kDistinctWindow) {
          // in windows, as doubri-v1 above: each window's minima, merged
          for (size_t i = 0; i < k; i++) out[i] = 0xFFFFFFFFu;
          window_min_.resize(k);
          for (size_t w = 0; w < shingler_.size(); w += kDistinctWindow) {
            n = CollectDistinct(w, std::min(shingler_.size(), w + kDistinctWindow));
            views_.resize(n);
            for (size_t j = 0; j < n; j++) views_[j] = shingler_[distinct_[j]];
            h32_.resize(n);
            Sha1Le32Many(views_.data(), n, h32_.data());
            DatasketchMin(h32_.data(), n, p.a(), p.b(), k, window_min_.data());
            for (size_t i = 0; i < k; i++) out[i] = std::min(out[i], window_min_[i]);
          }
          return;
        }
        n = CollectDistinct(0, shingler_.size());
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
      ForEachFast64(shingler_, p.fast_seed(), [bins, k](size_t, uint64_t h) { FastAdd(bins, k, h); });
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
      for (size_t j = 0; j < n; j++) DoubriOne(shingles[j], out);
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
