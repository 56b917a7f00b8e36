// datasketch's shingle hash, fast: the first 4 bytes of SHA-1 read little-endian, for many keys at once.
// Kernels (chosen at run time; NEARDUP_DISABLE_SIMD=1 forces the portable one):
//   avx512   16 keys per vector, the SHA-1 rounds on 32-bit lanes (AVX-512 F/BW/DQ); keys are grouped by
//            block count so that the lanes of a run finish together; the few left over go to sha-ni.
//   sha-ni   the x86 SHA extensions, two keys interleaved, any length (multi-block).
//   openssl  Sha1Le32 (hash/digest.h), one key at a time.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace neardup {
namespace minhash {

// out[i] = Sha1Le32(keys[i]).
void Sha1Le32Many(const std::string_view* keys, size_t n, uint32_t* out);

enum class Sha1Kernel : uint8_t { kPortable = 0, kShaNi = 1, kAvx512 = 2 };
bool Sha1KernelSupported(Sha1Kernel k);
Sha1Kernel BestSha1Kernel();
const char* Sha1KernelName(Sha1Kernel k);
// The same with a given kernel (tests, benchmarks); an unsupported kernel falls back to a supported one.
void Sha1Le32ManyWith(Sha1Kernel k, const std::string_view* keys, size_t n, uint32_t* out);
bool HasShaNi();

}  // namespace minhash
}  // namespace neardup
