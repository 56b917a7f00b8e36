// The text of `neardup simhash find-all`'s pairs: "a b\n" lines of unsigned 64-bit decimal numbers, as
// seomoz's simhash-find-all prints them, written straight into a caller's buffer (no allocation): the
// command's output was 2 s of its 2.7 s on 1.25M pairs when JavaScript formatted each BigInt.
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {
namespace simhash {

// The longest line: two 20-digit numbers, a space and a newline.
constexpr size_t kMaxPairLine = 42;

// v in decimal (1 to 20 digits) at out; returns the digits written.
size_t FormatU64(uint64_t v, char* out);

// Lines "a[i] b[i]\n" for i = first, first + 1, ... while a whole line fits in out[0..cap) and i < n;
// returns the bytes written and sets *next to the first pair not written.
size_t FormatPairLines(const uint64_t* a, const uint64_t* b, size_t n, size_t first, char* out, size_t cap, size_t* next);

}  // namespace simhash
}  // namespace neardup
