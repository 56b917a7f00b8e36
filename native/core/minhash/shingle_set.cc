#include "minhash/shingle_set.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace lsh {

void SortHashes(uint64_t* a, size_t n, std::vector<uint64_t>* tmp, std::vector<uint32_t>* cnt) {
  if (n < 64) {
    std::sort(a, a + n);
    return;
  }
  int lg = 0;
  while ((size_t(1) << lg) < n) lg++;
  const int want = std::min(lg + 4, 64);
  const int passes = (want + 10) / 11, per = (want + passes - 1) / passes, bits = per * passes;
  const int low = std::max(64 - bits, 0);  // the unsorted low bits (bits > 64: the top pass sees zeros)
  const size_t nb = size_t(1) << per;
  const uint64_t mask = nb - 1;
  cnt->assign(nb * passes, 0);
  uint32_t* c = cnt->data();
  if (passes == 2) {  // documents of 2^7 to 2^18 shingles
    for (size_t i = 0; i < n; i++) {
      const uint64_t x = a[i] >> low;
      c[x & mask]++;
      c[nb + ((x >> per) & mask)]++;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      const uint64_t x = a[i] >> low;
      for (int p = 0; p < passes; p++) c[p * nb + ((x >> (p * per)) & mask)]++;
    }
  }
  if (tmp->size() < n) tmp->resize(n);
  uint64_t* src = a;
  uint64_t* dst = tmp->data();
  for (int p = 0; p < passes; p++) {
    uint32_t* cp = c + p * nb;
    uint32_t sum = 0;
    for (size_t k = 0; k < nb; k++) {
      const uint32_t v = cp[k];
      cp[k] = sum;
      sum += v;
    }
    const int shift = low + p * per;
    for (size_t i = 0; i < n; i++) {
      const uint64_t v = src[i];
      dst[cp[(v >> shift) & mask]++] = v;
    }
    std::swap(src, dst);
  }
  if (src != a) std::memcpy(a, src, n * sizeof(uint64_t));
  // The radix passes ordered the top bits; an insertion sort orders the low bits within each of their runs.
  // Uniform hashes leave runs of about 1/16 of a value, but values that share their top bits (crafted
  // shingles, or a test's skewed inputs) leave one long run and a quadratic insertion sort: past a budget of
  // moves, std::sort finishes instead (O(n log n) in every case).
  size_t budget = 16 * n;
  for (size_t i = 1; i < n; i++) {
    const uint64_t v = a[i];
    if (a[i - 1] <= v) continue;
    size_t j = i;
    do {
      a[j] = a[j - 1];
      j--;
    } while (j > 0 && a[j - 1] > v);
    a[j] = v;
    const size_t moved = i - j;
    if (moved > budget) {
      std::sort(a, a + n);
      return;
    }
    budget -= moved;
  }
}

namespace {

// Merge-intersection of two sorted sets of distinct values, a block of one against a block of the other
// (every pair of the two blocks compared at once), advancing the block with the smaller last value (both on a
// tie): each equal pair meets exactly once (Schlegel et al., "Fast sorted-set intersection using SIMD
// instructions", 2011). Runs while both sides have a whole block left, adding to *inter and moving *i, *k;
// returns false once even matching every remaining value could not give `need`. The scalar merge finishes
// from where it stops.
#if NEARDUP_X86_DISPATCH
// GCC 12 warns about its own _mm512 intrinsics' undefined-value helpers here (a known false positive).
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f,popcnt"))) bool BlocksAvx512(const uint64_t* a, size_t na, const uint64_t* b, size_t nb,
                                                          size_t need, size_t* ip, size_t* kp, size_t* interp) {
  size_t i = *ip, k = *kp, inter = *interp;
  bool ok = true;
  while (i + 8 <= na && k + 8 <= nb) {
    const __m512i va = _mm512_loadu_si512(a + i), vb = _mm512_loadu_si512(b + k);
    __mmask8 m = _mm512_cmpeq_epu64_mask(va, vb);
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 1));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 2));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 3));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 4));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 5));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 6));
    m |= _mm512_cmpeq_epu64_mask(va, _mm512_alignr_epi64(vb, vb, 7));
    inter += static_cast<size_t>(__builtin_popcount(m));
    const uint64_t amax = a[i + 7], bmax = b[k + 7];
    i += amax <= bmax ? 8 : 0;
    k += bmax <= amax ? 8 : 0;
    if (inter + std::min(na - i, nb - k) < need) {
      ok = false;
      break;
    }
  }
  *ip = i, *kp = k, *interp = inter;
  return ok;
}
#pragma GCC diagnostic pop

NEARDUP_TARGET_AVX2 bool BlocksAvx2(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t need, size_t* ip,
                                    size_t* kp, size_t* interp) {
  size_t i = *ip, k = *kp, inter = *interp;
  bool ok = true;
  while (i + 4 <= na && k + 4 <= nb) {
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + k));
    __m256i m = _mm256_cmpeq_epi64(va, vb);
    m = _mm256_or_si256(m, _mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x39)));
    m = _mm256_or_si256(m, _mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x4e)));
    m = _mm256_or_si256(m, _mm256_cmpeq_epi64(va, _mm256_permute4x64_epi64(vb, 0x93)));
    inter += static_cast<size_t>(__builtin_popcount(static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(m)))));
    const uint64_t amax = a[i + 3], bmax = b[k + 3];
    i += amax <= bmax ? 4 : 0;
    k += bmax <= amax ? 4 : 0;
    if (inter + std::min(na - i, nb - k) < need) {
      ok = false;
      break;
    }
  }
  *ip = i, *kp = k, *interp = inter;
  return ok;
}
#endif

bool Blocks(IntersectKernel kernel, const uint64_t* a, size_t na, const uint64_t* b, size_t nb, size_t need, size_t* i,
            size_t* k, size_t* inter) {
#if NEARDUP_X86_DISPATCH
  if (kernel == IntersectKernel::kAvx512) return BlocksAvx512(a, na, b, nb, need, i, k, inter);
  if (kernel == IntersectKernel::kAvx2) return BlocksAvx2(a, na, b, nb, need, i, k, inter);
#endif
  return true;
}

IntersectKernel Best() {
#if NEARDUP_X86_DISPATCH
  if (Cpu().avx512f && Cpu().popcnt) return IntersectKernel::kAvx512;
  if (Cpu().avx2 && Cpu().popcnt) return IntersectKernel::kAvx2;
#endif
  return IntersectKernel::kPortable;
}

}  // namespace

IntersectKernel BestIntersectKernel() {
  static const IntersectKernel k = Best();
  return k;
}

const char* IntersectKernelName(IntersectKernel k) {
  switch (k) {
    case IntersectKernel::kAvx512: return "avx512";
    case IntersectKernel::kAvx2: return "avx2";
    case IntersectKernel::kPortable: return "portable";
  }
  return "?";
}

bool JaccardAtLeast(const uint64_t* a, size_t na, const uint64_t* b, size_t nb, double t, double* j,
                    IntersectKernel kernel) {
  if (na == 0 || nb == 0) return false;  // an empty set is no near-duplicate of anything, not even of another
  const size_t total = na + nb, most = std::min(na, nb);
  auto pass = [&](size_t inter) { return static_cast<double>(inter) / static_cast<double>(total - inter) >= t; };
  // need = the smallest intersection that passes (the ratio grows with it, also after rounding)
  size_t need = static_cast<size_t>(std::min<double>(static_cast<double>(most), std::ceil(t * total / (1 + t))));
  while (need > 0 && pass(need - 1)) need--;
  while (need <= most && !pass(need)) need++;
  if (need > most) return false;
  size_t i = 0, k = 0, inter = 0;
  if (!Blocks(kernel, a, na, b, nb, need, &i, &k, &inter)) return false;
  while (i < na && k < nb) {
    // a stretch of branch-free merge steps (each moves i or k or both by one, so none runs past an end),
    // then the bound
    for (size_t steps = std::min<size_t>(64, std::min(na - i, nb - k)); steps > 0; steps--) {
      const uint64_t x = a[i], y = b[k];
      inter += x == y;
      i += x <= y;
      k += y <= x;
    }
    if (inter + std::min(na - i, nb - k) < need) return false;
  }
  if (inter < need) return false;
  *j = static_cast<double>(inter) / static_cast<double>(total - inter);
  return true;
}

}  // namespace lsh
}  // namespace neardup
