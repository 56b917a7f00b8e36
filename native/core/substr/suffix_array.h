// Suffix arrays by libdivsufsort (Yuta Mori; MIT), an optional dependency loaded at run time, so that the
// shipped addon loads where the library is absent (HACKING.md, "Optional dependency"): divsufsort() for texts
// below 2^31 bytes (4-byte entries), divsufsort64() beyond (8-byte entries). Debian/Ubuntu: the package
// libdivsufsort3; the error when it is missing says so.
#pragma once
#include <cstddef>
#include <cstdint>

#include "util/status.h"

namespace neardup {
namespace substr {

// Loads the library once (thread-safe); Ok when its functions are there.
Status LoadSuffixSort();
// sa[i] = start of the i-th smallest suffix of text[0, n): n < 2^31 (Build32) or any n (Build64).
Status BuildSuffixArray32(const uint8_t* text, int32_t* sa, uint64_t n);
Status BuildSuffixArray64(const uint8_t* text, int64_t* sa, uint64_t n);

}  // namespace substr
}  // namespace neardup
