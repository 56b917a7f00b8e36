// MurmurHash3 (Austin Appleby's public-domain algorithm), bit-exact with the reference for any seed and
// any length. Little-endian block reads regardless of host order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace neardup {

uint32_t Murmur3_x86_32(const void* key, size_t len, uint32_t seed);

// Writes the 128-bit result as the reference does: out[0] = h1, out[1] = h2.
void Murmur3_x64_128(const void* key, size_t len, uint32_t seed, uint64_t out[2]);

// The same key under many seeds: out[i] = Murmur3_x86_32(key, len, seeds[i]). The per-block mixing does not
// depend on the seed, so it is done once; the seed-dependent part runs 8 seeds per AVX2 register when the
// CPU has AVX2. `mixed` is scratch of at least len/4 words (no allocation here).
void Murmur3_x86_32_Seeds(const void* key, size_t len, const uint32_t* seeds, size_t count, uint32_t* out,
                          uint32_t* mixed);

// out[i] = min(out[i], Murmur3_x86_32(key, len, first_seed + i)) for i in [0, count): the MinHash update of
// doubri-style signatures, seeds first_seed..first_seed+count-1.
void Murmur3_x86_32_MinSeq(const void* key, size_t len, uint32_t first_seed, size_t count, uint32_t* out,
                           uint32_t* mixed);

// The same update for many keys at once: out[i] = min(out[i], min over j of Murmur3_x86_32(keys[j], first_seed + i)).
// With AVX-512 the seeds run outer (32 per pair of registers, kept there) and the keys inner; `scratch` holds
// the keys' mixed blocks (grown as needed).
void Murmur3_x86_32_MinSeqMany(const std::string_view* keys, size_t n, uint32_t first_seed, size_t count,
                               uint32_t* out, std::vector<uint32_t>* scratch);

}  // namespace neardup
