// The rate of the shingle stream over a packed corpus, as the engines take it (fast64 hashes of every
// document, repeats dropped): the loop the normalisation and word-split benchmarks time.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu_time.h"
#include "packed_corpus.h"
#include "text/shingle.h"

// MB of input per CPU-second under options `o` (the median of `repeats` runs); the hashes' XOR goes to *sink.
inline double ShingleMbPerCpuSecond(const PackedCorpus& c, const neardup::TextOptions& o, int repeats, volatile uint64_t* sink) {
  using namespace neardup;
  const uint64_t n = c.count;
  Shingler sh(o);
  HashDedup dd;
  std::vector<uint64_t> buf;
  return MedianMbPerCpuSecond(double(c.offsets[n]) / 1e6, repeats, [&] {
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; i++) {
      sh.Reset(c.base + c.offsets[i], c.offsets[i + 1] - c.offsets[i]);
      if (buf.size() < sh.size()) buf.resize(sh.size());
      const size_t k = WriteShingleHashes<uint64_t>(sh, ShingleHash::kFast64, 0, false, &dd, buf.data());
      for (size_t j = 0; j < k; j++) acc ^= buf[j];
    }
    *sink = *sink + acc;
  });
}
