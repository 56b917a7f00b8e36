// datasketch's shingle hash, fast: the first 4 bytes of SHA-1 read little-endian, for many short keys.
// Keys of at most 55 bytes are one SHA-1 block; with the x86 SHA extensions they are compressed here with
// the SHA-NI instructions, two keys at a time (independent chains fill the pipeline). Longer keys, and CPUs
// without SHA-NI (or NEARDUP_DISABLE_SIMD=1), use Sha1Le32 (hash/digest.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace neardup {
namespace minhash {

// out[i] = Sha1Le32(keys[i]).
void Sha1Le32Many(const std::string_view* keys, size_t n, uint32_t* out);
bool HasShaNi();

}  // namespace minhash
}  // namespace neardup
