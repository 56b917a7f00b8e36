// Shingle hashes of a batch of documents on the thread pool, as one flat array plus per-document offsets
// (document i's hashes are hashes[offsets[i] .. offsets[i+1])).
//
// Memory: the result is written in place, once. Each document gets a slot of ShingleBound() values in one
// uninitialised allocation; documents whose bound is not exact are then compacted (memmove, in order) and
// the allocation is shrunk. Peak memory is about the bound (~ 1 value per input byte for the char unit,
// 1 per 2 bytes for words) plus the input.
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "text/docs.h"
#include "text/shingle.h"
#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {

struct ShingleConfig {
  TextOptions text;
  ShingleHash hash = ShingleHash::kFast64;
  uint64_t seed = 0;
  bool dedupe = false;
};

struct ShingleBatchResult {
  RawBuffer<uint64_t> h64;  // filled for 64-bit hash kinds
  RawBuffer<uint32_t> h32;  // filled for 32-bit hash kinds
  RawBuffer<uint32_t> offsets;
  uint64_t invalid_utf8_docs = 0;
};

// slots: parallelism (1 = on the calling thread only). Fails with kInvalidArgument when more than 2^32-1
// hashes would be produced (split the batch).
Status ShingleBatch(const Docs& docs, const ShingleConfig& config, size_t slots, const std::atomic<bool>* stop,
                    ShingleBatchResult* out);

}  // namespace neardup
