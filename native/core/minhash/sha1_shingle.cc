#include "minhash/sha1_shingle.h"

#include <cstring>

#include "hash/digest.h"
#include "util/cpu.h"

#if NEARDUP_X86_DISPATCH
#include <immintrin.h>
#endif

namespace neardup {
namespace minhash {

#if NEARDUP_X86_DISPATCH
namespace {

#define ND_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// L independent SHA-1 compressions, one block each, interleaved so that the SHA-NI round instructions of
// different messages fill each other's latency. abcd/e hold each lane's chaining state in the layout of the
// SHA-NI instructions (abcd: a in lane 3; e: e in lane 3, other lanes zero) and are updated in place.
// Round group g covers rounds 4g..4g+3; the message schedule runs 3 groups ahead.
template <int L>
ND_SHA_TARGET __attribute__((always_inline)) inline void CompressN(__m128i* abcd, __m128i* e,
                                                                  const uint8_t* const* blocks) {
  const __m128i mask = _mm_set_epi64x(0x0001020304050607LL, 0x08090a0b0c0d0e0fLL);
  __m128i A[L], E[L][2], M[L][4], A0[L], E0[L];
#pragma GCC unroll 8
  for (int s = 0; s < L; s++) {
    A[s] = A0[s] = abcd[s];
    E[s][0] = E0[s] = e[s];
    for (int j = 0; j < 4; j++)
      M[s][j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[s] + 16 * j)), mask);
  }
#define ND_GROUP(g, F)                                                                              \
  _Pragma("GCC unroll 8") for (int s = 0; s < L; s++) {                                             \
    __m128i& cur = E[s][(g) & 1];                                                                   \
    if ((g) == 0)                                                                                   \
      cur = _mm_add_epi32(cur, M[s][0]);                                                            \
    else                                                                                            \
      cur = _mm_sha1nexte_epu32(cur, M[s][(g) & 3]);                                                \
    E[s][((g) + 1) & 1] = A[s];                                                                     \
    if ((g) >= 3 && (g) <= 18) M[s][((g) + 1) & 3] = _mm_sha1msg2_epu32(M[s][((g) + 1) & 3], M[s][(g) & 3]); \
    A[s] = _mm_sha1rnds4_epu32(A[s], cur, F);                                                       \
    if ((g) >= 1 && (g) <= 16) M[s][((g) + 3) & 3] = _mm_sha1msg1_epu32(M[s][((g) + 3) & 3], M[s][(g) & 3]); \
    if ((g) >= 2 && (g) <= 17) M[s][((g) + 2) & 3] = _mm_xor_si128(M[s][((g) + 2) & 3], M[s][(g) & 3]); \
  }
  ND_GROUP(0, 0) ND_GROUP(1, 0) ND_GROUP(2, 0) ND_GROUP(3, 0) ND_GROUP(4, 0)
  ND_GROUP(5, 1) ND_GROUP(6, 1) ND_GROUP(7, 1) ND_GROUP(8, 1) ND_GROUP(9, 1)
  ND_GROUP(10, 2) ND_GROUP(11, 2) ND_GROUP(12, 2) ND_GROUP(13, 2) ND_GROUP(14, 2)
  ND_GROUP(15, 3) ND_GROUP(16, 3) ND_GROUP(17, 3) ND_GROUP(18, 3) ND_GROUP(19, 3)
#undef ND_GROUP
  // After group 19, E[s][0] holds the state from which the final e derives (rotl 30 of its lane 3).
#pragma GCC unroll 8
  for (int s = 0; s < L; s++) {
    abcd[s] = _mm_add_epi32(A[s], A0[s]);
    e[s] = _mm_sha1nexte_epu32(E[s][0], E0[s]);
  }
}

// One message in flight in a lane: its bytes and the offset of the next block in the padded message.
struct Lane {
  const uint8_t* p;
  size_t len;
  size_t off;
  size_t blocks_left;  // blocks of the padded message still to compress
  size_t index;        // output slot
};

// Points *block at the 64 bytes of the padded message at lane.off: straight into the key when the block
// is all message bytes, else a padded copy in tmp (message tail, 0x80, zeros, bit length big-endian in the
// last 8 bytes of the final block).
inline const uint8_t* BlockOf(const Lane& l, uint8_t* tmp) {
  if (l.off + 64 <= l.len) return l.p + l.off;
  std::memset(tmp, 0, 64);
  if (l.off <= l.len) {
    const size_t r = l.len - l.off;  // 0..63 message bytes, then the 0x80 marker
    std::memcpy(tmp, l.p + l.off, r);
    tmp[r] = 0x80;
  }
  if (l.blocks_left == 1) {
    const uint64_t bits = static_cast<uint64_t>(l.len) * 8;
    for (int i = 0; i < 8; i++) tmp[63 - i] = static_cast<uint8_t>(bits >> (8 * i));
  }
  return tmp;
}

inline size_t BlocksOf(size_t len) { return (len + 8) / 64 + 1; }

// Hashes every key on L interleaved lanes: a lane whose message ends takes the next key, so messages of
// different lengths share the pipeline. Idle lanes (at the end) compress a dummy block.
template <int L>
ND_SHA_TARGET void ManyShaNi(const std::string_view* keys, size_t n, uint32_t* out) {
  const __m128i abcd_init = _mm_set_epi32(0x67452301, static_cast<int>(0xEFCDAB89), static_cast<int>(0x98BADCFE), 0x10325476);
  const __m128i e_init = _mm_set_epi32(static_cast<int>(0xC3D2E1F0), 0, 0, 0);
  alignas(64) uint8_t tmp[L][64];
  __m128i abcd[L], e[L];
  Lane lane[L];
  bool live[L];
  size_t next = 0, active = 0;
  auto load = [&](int s) {
    live[s] = next < n;
    abcd[s] = abcd_init;
    e[s] = e_init;
    if (!live[s]) {
      lane[s] = Lane{reinterpret_cast<const uint8_t*>(""), 0, 0, 1, 0};
      return;
    }
    const std::string_view& k = keys[next];
    lane[s] = Lane{reinterpret_cast<const uint8_t*>(k.data()), k.size(), 0, BlocksOf(k.size()), next};
    next++;
    active++;
  };
  for (int s = 0; s < L; s++) load(s);
  while (active > 0) {
    const uint8_t* blk[L];
    for (int s = 0; s < L; s++) blk[s] = BlockOf(lane[s], tmp[s]);
    CompressN<L>(abcd, e, blk);
    for (int s = 0; s < L; s++) {
      lane[s].off += 64;
      if (--lane[s].blocks_left != 0) continue;
      if (live[s]) {
        out[lane[s].index] = __builtin_bswap32(static_cast<uint32_t>(_mm_extract_epi32(abcd[s], 3)));
        active--;
      }
      load(s);
    }
  }
}

#undef ND_SHA_TARGET

// ---- AVX-512: 16 messages per vector (one 32-bit lane each), the plain SHA-1 rounds on vectors. ----
#define ND_SHA512_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx2")))
// GCC 12 warns about its own _mm512 intrinsics' undefined-value helpers (a known false positive).
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC-only warning (clang warns about the unknown group)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// One SHA-1 lane job: a key and its output slot.
struct Job {
  const uint8_t* p;
  uint32_t len;
  uint32_t blocks;
  size_t index;
};

// Block t of the padded message of a job, as 16 big-endian words in one register: message bytes by a
// masked load (bytes outside the mask are not read), the 0x80 marker, and the bit length in words 14-15 of
// the final block.
ND_SHA512_TARGET __attribute__((always_inline)) inline __m512i LoadBlock(const Job& j, uint32_t t,
                                                                         __m512i bswap) {
  const int64_t r = static_cast<int64_t>(j.len) - 64 * static_cast<int64_t>(t);  // message bytes left
  const __mmask64 km = r >= 64 ? ~__mmask64(0) : r <= 0 ? 0 : (__mmask64(1) << r) - 1;
  __m512i v = _mm512_maskz_loadu_epi8(km, j.p + (r > 0 ? 64 * size_t(t) : 0));
  const __mmask64 mark = (r >= 0 && r < 64) ? __mmask64(1) << r : 0;
  v = _mm512_mask_set1_epi8(v, mark, static_cast<char>(0x80));
  v = _mm512_shuffle_epi8(v, bswap);
  const uint64_t bits = static_cast<uint64_t>(j.len) * 8;
  const __mmask8 last = t + 1 == j.blocks ? 0x80 : 0;
  return _mm512_mask_set1_epi64(v, last, static_cast<long long>((bits << 32) | (bits >> 32)));
}

// W[j] = word j of every lane's block (a 16x16 transpose of 32-bit words).
ND_SHA512_TARGET __attribute__((always_inline)) inline void Transpose16(const __m512i* R, __m512i* W) {
  __m512i T[16], U[16];
  for (int i = 0; i < 8; i++) {
    T[2 * i] = _mm512_unpacklo_epi32(R[2 * i], R[2 * i + 1]);
    T[2 * i + 1] = _mm512_unpackhi_epi32(R[2 * i], R[2 * i + 1]);
  }
  for (int i = 0; i < 4; i++) {
    U[4 * i + 0] = _mm512_unpacklo_epi64(T[4 * i], T[4 * i + 2]);
    U[4 * i + 1] = _mm512_unpackhi_epi64(T[4 * i], T[4 * i + 2]);
    U[4 * i + 2] = _mm512_unpacklo_epi64(T[4 * i + 1], T[4 * i + 3]);
    U[4 * i + 3] = _mm512_unpackhi_epi64(T[4 * i + 1], T[4 * i + 3]);
  }
  // U[4i+c], 128-bit lane L = rows 4i..4i+3 at column 4L+c; a 4x4 transpose of 128-bit lanes finishes.
  for (int c = 0; c < 4; c++) {
    const __m512i v0 = _mm512_shuffle_i32x4(U[c], U[4 + c], 0x44);
    const __m512i v1 = _mm512_shuffle_i32x4(U[c], U[4 + c], 0xEE);
    const __m512i v2 = _mm512_shuffle_i32x4(U[8 + c], U[12 + c], 0x44);
    const __m512i v3 = _mm512_shuffle_i32x4(U[8 + c], U[12 + c], 0xEE);
    W[c] = _mm512_shuffle_i32x4(v0, v2, 0x88);
    W[4 + c] = _mm512_shuffle_i32x4(v0, v2, 0xDD);
    W[8 + c] = _mm512_shuffle_i32x4(v1, v3, 0x88);
    W[12 + c] = _mm512_shuffle_i32x4(v1, v3, 0xDD);
  }
}

// 16 jobs in lock step for the largest block count among them; a job's result is taken after its own
// last block. Lanes beyond n repeat job 0.
ND_SHA512_TARGET void Run16(const Job* jobs, size_t n, uint32_t* out) {
  const __m512i bswap = _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203);
  Job J[16];
  uint32_t maxb = 0;
  for (size_t s = 0; s < 16; s++) {
    J[s] = jobs[s < n ? s : 0];
    if (J[s].blocks > maxb) maxb = J[s].blocks;
  }
  __m512i a = _mm512_set1_epi32(0x67452301), b = _mm512_set1_epi32(static_cast<int>(0xEFCDAB89));
  __m512i c = _mm512_set1_epi32(static_cast<int>(0x98BADCFE)), d = _mm512_set1_epi32(0x10325476);
  __m512i e = _mm512_set1_epi32(static_cast<int>(0xC3D2E1F0));
  for (uint32_t t = 0; t < maxb; t++) {
    __m512i R[16], W[16];
    for (int s = 0; s < 16; s++) R[s] = LoadBlock(J[s], t, bswap);
    Transpose16(R, W);
    const __m512i a0 = a, b0 = b, c0 = c, d0 = d, e0 = e;
#define ND_R(i, F, K)                                                                                   \
  {                                                                                                     \
    if ((i) >= 16)                                                                                      \
      W[(i) & 15] = _mm512_rol_epi32(                                                                   \
          _mm512_xor_si512(_mm512_ternarylogic_epi32(W[((i) - 3) & 15], W[((i) - 8) & 15], W[((i) - 14) & 15], 0x96), \
                           W[(i) & 15]), 1);                                                            \
    const __m512i f = _mm512_ternarylogic_epi32(b, c, d, F);                                            \
    const __m512i tmp = _mm512_add_epi32(_mm512_add_epi32(_mm512_rol_epi32(a, 5), f),                   \
                                         _mm512_add_epi32(e, _mm512_add_epi32(W[(i) & 15], _mm512_set1_epi32(static_cast<int>(K))))); \
    e = d;                                                                                              \
    d = c;                                                                                              \
    c = _mm512_rol_epi32(b, 30);                                                                        \
    b = a;                                                                                              \
    a = tmp;                                                                                            \
  }
#pragma GCC unroll 80
    for (int i = 0; i < 20; i++) ND_R(i, 0xCA, 0x5A827999u)
#pragma GCC unroll 80
    for (int i = 20; i < 40; i++) ND_R(i, 0x96, 0x6ED9EBA1u)
#pragma GCC unroll 80
    for (int i = 40; i < 60; i++) ND_R(i, 0xE8, 0x8F1BBCDCu)
#pragma GCC unroll 80
    for (int i = 60; i < 80; i++) ND_R(i, 0x96, 0xCA62C1D6u)
#undef ND_R
    a = _mm512_add_epi32(a, a0);
    b = _mm512_add_epi32(b, b0);
    c = _mm512_add_epi32(c, c0);
    d = _mm512_add_epi32(d, d0);
    e = _mm512_add_epi32(e, e0);
    alignas(64) uint32_t h0[16];
    _mm512_store_si512(h0, a);
    for (size_t s = 0; s < n; s++)
      if (J[s].blocks == t + 1) out[J[s].index] = __builtin_bswap32(h0[s]);
  }
}

// Groups keys by block count (1, 2, 3 or more) so that the 16 lanes of a run mostly finish together;
// groups are run as they fill; what is left at the end (a few keys per group) goes to SHA-NI.
ND_SHA512_TARGET void ManyAvx512(const std::string_view* keys, size_t n, uint32_t* out) {
  Job groups[3][16];
  size_t fill[3] = {0, 0, 0};
  for (size_t i = 0; i < n; i++) {
    const size_t len = keys[i].size();
    if (len >= (size_t(1) << 31)) {  // not a shingle; keep the lane arithmetic in 32 bits
      out[i] = Sha1Le32(keys[i].data(), len);
      continue;
    }
    const uint32_t blocks = static_cast<uint32_t>(BlocksOf(len));
    const size_t g = blocks >= 3 ? 2 : blocks - 1;
    groups[g][fill[g]++] = Job{reinterpret_cast<const uint8_t*>(keys[i].data()), static_cast<uint32_t>(len), blocks, i};
    if (fill[g] == 16) {
      Run16(groups[g], 16, out);
      fill[g] = 0;
    }
  }
  for (size_t g = 0; g < 3; g++) {
    if (fill[g] == 0) continue;
    if (fill[g] >= 6) {
      Run16(groups[g], fill[g], out);
      continue;
    }
    std::string_view rest[16];
    uint32_t h[16];
    for (size_t s = 0; s < fill[g]; s++) rest[s] = std::string_view(reinterpret_cast<const char*>(groups[g][s].p), groups[g][s].len);
    ManyShaNi<2>(rest, fill[g], h);
    for (size_t s = 0; s < fill[g]; s++) out[groups[g][s].index] = h[s];
  }
}

#pragma GCC diagnostic pop
#undef ND_SHA512_TARGET

}  // namespace
#endif

bool HasShaNi() {
#if NEARDUP_X86_DISPATCH
  return Cpu().avx2 && Cpu().sha;
#else
  return false;
#endif
}

bool HasAvx512Sha1() {
#if NEARDUP_X86_DISPATCH
  // Also needs SHA-NI: the few keys left over at the end of a call go there.
  const CpuFeatures& c = Cpu();
  return HasShaNi() && c.avx512f && c.avx512bw && c.avx512dq;
#else
  return false;
#endif
}

bool Sha1KernelSupported(Sha1Kernel k) {
  switch (k) {
    case Sha1Kernel::kPortable: return true;
    case Sha1Kernel::kShaNi: return HasShaNi();
    case Sha1Kernel::kAvx512: return HasAvx512Sha1();
  }
  return false;
}

Sha1Kernel BestSha1Kernel() {
  if (HasAvx512Sha1()) return Sha1Kernel::kAvx512;
  if (HasShaNi()) return Sha1Kernel::kShaNi;
  return Sha1Kernel::kPortable;
}

const char* Sha1KernelName(Sha1Kernel k) {
  switch (k) {
    case Sha1Kernel::kPortable: return "openssl";
    case Sha1Kernel::kShaNi: return "sha-ni";
    case Sha1Kernel::kAvx512: return "avx512";
  }
  return "?";
}

void Sha1Le32ManyWith(Sha1Kernel k, const std::string_view* keys, size_t n, uint32_t* out) {
#if NEARDUP_X86_DISPATCH
  if (k == Sha1Kernel::kAvx512 && HasAvx512Sha1()) return ManyAvx512(keys, n, out);
  if (k != Sha1Kernel::kPortable && HasShaNi()) return ManyShaNi<2>(keys, n, out);
#endif
  for (size_t i = 0; i < n; i++) out[i] = Sha1Le32(keys[i].data(), keys[i].size());
}

void Sha1Le32Many(const std::string_view* keys, size_t n, uint32_t* out) {
  static const Sha1Kernel best = BestSha1Kernel();
  Sha1Le32ManyWith(best, keys, n, out);
}

}  // namespace minhash
}  // namespace neardup
