// Word units in the shingle stream, one thread: word 3-grams, lower-cased, fast64 into a reused buffer (as
// engines consume it), under each word split: whitespace, nonword, and unicode with each cluster unit
// (docs/languages.md). Prints MB of input per CPU-second (the median of the repeats) per corpus and split.
// Input: packed corpus files (bench/pack-corpus.ts layout); bench/shingles-words.ts writes and runs them.
//   words_bench FILE... [-r repeats]
// Built with -DWORDS_BENCH_BASE, it runs the splits that exist before the unicode one (a build of an older
// commit, for before/after figures of the same binary's other paths).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "cpu_time.h"
#include "packed_corpus.h"
#include "shingle_rate.h"
#include "text/shingle.h"

using namespace neardup;


int main(int argc, char** argv) {
  int repeats = 5;
  std::vector<const char*> files;
  for (int i = 1; i < argc; i++) {
    if (std::strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
      repeats = std::atoi(argv[++i]);
    } else {
      files.push_back(argv[i]);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: words_bench FILE... [-r repeats]\n");
    return 2;
  }
  struct Split {
    const char* name;
    WordSplit split;
    int cjk;  // 0 chars, 1 bigrams
  };
  const Split splits[] = {
      {"whitespace", WordSplit::kWhitespace, 0},
      {"nonword", WordSplit::kNonWord, 0},
#ifndef WORDS_BENCH_BASE
      {"unicode-chars", WordSplit::kUnicode, 0},
      {"unicode-bigrams", WordSplit::kUnicode, 1},
#endif
  };
  volatile uint64_t sink = 0;
  for (const char* path : files) {
    PackedCorpus c;
    if (!c.Open(path)) return 1;
    for (const Split& s : splits) {
      TextOptions o;
      o.unit = TextUnit::kWord;
      o.n = 3;
      o.lowercase = true;
      o.split = s.split;
#ifndef WORDS_BENCH_BASE
      o.cjk = s.cjk ? ClusterUnit::kBigrams : ClusterUnit::kChars;
#endif
      std::printf("%s\t%s\t%.0f\n", path, s.name, ShingleMbPerCpuSecond(c, o, repeats, &sink));
    }
  }
  return 0;
}
