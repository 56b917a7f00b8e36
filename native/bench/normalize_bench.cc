// Unicode normalisation inside the core, one thread: (1) the normaliser alone (each document into a reused
// buffer), (2) the shingle stream (char 5-grams; word 3-grams lower-cased; fast64 into a reused buffer, as
// engines consume it) under each form. Prints MB of input per CPU-second (the median of the repeats).
// Input: packed corpus files (bench/pack-corpus.ts layout); bench/normalize.ts writes and runs them.
//   normalize_bench FILE... [-r repeats]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "cpu_time.h"
#include "packed_corpus.h"
#include "shingle_rate.h"
#include "text/normalization.h"
#include "text/shingle.h"

using namespace neardup;


int main(int argc, char** argv) {
  std::vector<const char*> files;
  int repeats = 5;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: normalize_bench FILE... [-r repeats]\n");
    return 2;
  }
  const text::NormalForm forms[] = {text::NormalForm::kNone, text::NormalForm::kNfc, text::NormalForm::kNfkc,
                                    text::NormalForm::kNfkcCasefold};
  volatile uint64_t sink = 0;
  for (const char* path : files) {
    PackedCorpus c;
    if (!c.Open(path)) return 1;
    const uint64_t n = c.count;
    const double mb = double(c.offsets[n]) / 1e6;
    // normaliser alone (kNone: the validating copy)
    std::printf("%s\tnormalize", path);
    text::Normalizer nz;
    RawBuffer<uint8_t> out;
    for (text::NormalForm f : forms) {
      const double rate = MedianMbPerCpuSecond(mb, repeats, [&] {
        uint64_t bytes = 0;
        bool bad = false;
        for (uint64_t i = 0; i < n; i++) bytes += nz.Normalize(f, c.base + c.offsets[i], c.offsets[i + 1] - c.offsets[i], &out, &bad);
        sink = sink + bytes;
      });
      std::printf("\t%.0f", rate);
    }
    std::printf("\n");
    struct Shape {
      const char* name;
      TextUnit unit;
      uint32_t n;
      bool lowercase;
    } shapes[] = {{"char5", TextUnit::kChar, 5, false}, {"word3-lower", TextUnit::kWord, 3, true}};
    for (const Shape& s : shapes) {
      std::printf("%s\t%s", path, s.name);
      for (text::NormalForm f : forms) {
        TextOptions o;
        o.unit = s.unit;
        o.n = s.n;
        o.lowercase = s.lowercase;
        o.normalize = f;
        std::printf("\t%.0f", ShingleMbPerCpuSecond(c, o, repeats, &sink));
      }
      std::printf("\n");
    }
  }
  return 0;
}
