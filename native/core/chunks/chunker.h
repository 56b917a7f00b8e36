// Chunks (Kasprzak, Brandejs, Brandejsová): a document's overlapping sequences of n words, each hashed to a
// chunk id, kept as a sorted set. Words come from the shingle stream (text/shingle.h: word unit, its split
// and normalisers); a chunk id is the top `bits` bits of fast64 of the chunk's bytes (the n words joined by
// single spaces), as the paper takes the top bits of MD5 (docs/FORMAT.md section 12).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "text/shingle.h"
#include "util/status.h"

namespace neardup {
namespace chunks {

struct ChunkOptions {
  // Word unit; n = words per chunk (5); nonword split and lower-casing by default.
  TextOptions text;
  // Bits of a chunk id: 64 (default: exact in practice) or 28..32 (32-bit keys: colliding chunks count as
  // shared, n^2 / 2^33 pairs of distinct chunks among n; docs/similar.md).
  uint32_t bits = 64;
  uint64_t seed = 0;
  ChunkOptions() {
    text.unit = TextUnit::kWord;
    text.n = 5;
    text.split = WordSplit::kNonWord;
    text.lowercase = true;
  }
  bool wide() const { return bits > 32; }
};

Status ValidateChunkOptions(const ChunkOptions& o);

// The chunk id of a fast64 hash.
inline uint64_t ChunkIdOf(uint64_t h, uint32_t bits) { return bits >= 64 ? h : h >> (64 - bits); }

// One per thread: reuses its scratch (no allocation once grown to the largest document).
class Chunker {
 public:
  explicit Chunker(const ChunkOptions& o) : o_(o), sh_(o.text) {}
  // The distinct chunk ids of one UTF-8 text, ascending, into *out (replaced).
  void Run(const uint8_t* text, size_t len, std::vector<uint64_t>* out);
  // Whether the last text held invalid UTF-8 (replaced by U+FFFD, as everywhere in the shingle stream).
  bool had_invalid_utf8() const { return sh_.had_invalid_utf8(); }

 private:
  ChunkOptions o_;
  Shingler sh_;
};

}  // namespace chunks
}  // namespace neardup
