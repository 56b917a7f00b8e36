// The packed corpus file of the core benchmarks (written by bench/pack-corpus.ts): u64 LE count, count+1
// u64 LE offsets, then the documents' bytes.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "io/file.h"

struct PackedCorpus {
  neardup::io::MappedFile file;
  uint64_t count = 0;
  const uint64_t* offsets = nullptr;  // count + 1 entries
  const uint8_t* base = nullptr;

  // Maps `path`; prints the reason and returns false when it cannot be read or is too short.
  bool Open(const char* path) {
    neardup::Status st = file.Open(path);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return false;
    }
    if (file.size() < 8) {
      std::fprintf(stderr, "%s: not a packed corpus\n", path);
      return false;
    }
    std::memcpy(&count, file.data(), 8);
    if (file.size() < 8 + 8 * (count + 1)) {
      std::fprintf(stderr, "%s: not a packed corpus\n", path);
      return false;
    }
    offsets = reinterpret_cast<const uint64_t*>(file.data() + 8);
    base = file.data() + 8 + 8 * (count + 1);
    return true;
  }
};
