// Copied-code matching (`neardup code`, docs/code.md): source files tokenised (code/lexer.h), their normalised
// token streams winnowed (code/winnow.h), the fingerprints of all files grouped by hash in memory, and for
// every pair of files (or of groups: submissions) that share fingerprints, the shared fraction of each and
// the matched regions.
//
// Regions: each pair of equal fingerprints (same hash, at token positions pa and pb) is checked against the
// token values and extended left and right while the values stay equal: a maximal exact match (MEM) of
// normalised tokens. MEMs shorter than w + k - 1 tokens are dropped (only those are guaranteed to be found,
// so only those are reported: on every input the reported MEMs are exactly the shared runs of at least
// w + k - 1 tokens, unless a fingerprint of theirs was dropped as boilerplate or base code). MEMs in order in
// both files (the next one starts after the previous one ends, in A and in B) whose gaps are at most
// merge_gap tokens on both sides are merged into one region.
//
// Memory held: 8 bytes per token of every file (its value and line); while Match runs, 16 bytes per
// fingerprint (about 2 / (w + 1) of the tokens) twice over, plus the pair entries (24 bytes per shared
// fingerprint pair), made in passes of at most pair_budget entries.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "code/lexer.h"
#include "code/winnow.h"
#include "util/status.h"

namespace neardup {
namespace code {

struct CorpusOptions {
  uint32_t k = kDefaultK;
  uint32_t w = kDefaultW;
  LexOptions lex;
  uint64_t max_file_bytes = uint64_t(16) << 20;  // larger files are skipped (and counted)
};

// What Add did with one source.
enum class SourceState : uint8_t { kIndexed = 0, kBinary = 1, kInvalidUtf8 = 2, kTooLarge = 3, kBase = 4 };

struct Source {
  const uint8_t* data = nullptr;  // the bytes, unless path is given
  size_t size = 0;
  std::string path;  // when not empty: the file is read by Add (data is not used)
  Lang lang = Lang::kC;
  uint32_t group = 0;  // files of one group (a submission) are never compared with each other
  bool base = false;   // base code: its k-grams are excluded from every match
};

struct MatchOptions {
  uint32_t max_groups = 10;  // a fingerprint in more groups than this is boilerplate, dropped (0: no limit)
  uint32_t max_repeat = 16;  // a fingerprint more often than this in one file is dropped for that file
  uint32_t merge_gap = 16;   // tokens between MEMs merged into one region
  double min_shared = 0;     // pairs whose larger shared fraction is below this are not reported
  uint64_t pair_budget = uint64_t(32) << 20;  // pair entries made per pass
  const std::atomic<bool>* stop = nullptr;
};

struct Region {
  uint32_t file_a, file_b;            // files (in Add order)
  uint32_t a_begin, a_end;            // token range [begin, end) in file_a
  uint32_t b_begin, b_end;            // in file_b
  uint32_t a_first_line, a_last_line;  // 1-based lines of the first and last token
  uint32_t b_first_line, b_last_line;
  uint32_t tokens;  // a_end - a_begin
};

struct PairResult {
  uint32_t group_a, group_b;  // group_a < group_b
  uint64_t matched_a = 0, matched_b = 0;  // fingerprints of A found in B, and of B in A
  double shared_a = 0, shared_b = 0;      // matched / the group's fingerprints (base code not counted)
  uint64_t tokens = 0;                    // tokens of A covered by the regions
  std::vector<Region> regions;            // by file_a, file_b, a_begin
};

struct MatchStats {
  uint64_t files = 0, base_files = 0, tokens = 0, fingerprints = 0, base_kgrams = 0;
  uint64_t base_fingerprints = 0;        // fingerprints dropped as base code
  uint64_t boilerplate_hashes = 0;       // distinct hashes dropped by max_groups
  uint64_t boilerplate_fingerprints = 0;
  uint64_t repeated_fingerprints = 0;    // dropped by max_repeat
  uint64_t pair_entries = 0, passes = 0, candidate_pairs = 0, mems = 0;
  double seconds_fingerprints = 0, seconds_pairs = 0;
};

class CodeCorpus {
 public:
  explicit CodeCorpus(const CorpusOptions& o) : opts_(o) {}

  // Tokenises the sources on the pool; states[i]: what happened to sources[i]. A file that cannot be read is
  // an error naming it (nothing of the batch is added then).
  Status Add(const std::vector<Source>& sources, std::vector<SourceState>* states, const std::atomic<bool>* stop);

  // The pairs, largest shared fraction first (then more tokens, then groups).
  Status Match(const MatchOptions& o, std::vector<PairResult>* out, MatchStats* stats) const;

  size_t files() const { return files_.size(); }
  uint64_t tokens() const { return tokens_; }
  const CorpusOptions& options() const { return opts_; }
  // The normalised values of file f (tests).
  const std::vector<uint32_t>& values(size_t f) const { return files_[f].values; }

 private:
  struct File {
    uint32_t group;
    std::vector<uint32_t> values, lines;
  };
  CorpusOptions opts_;
  std::vector<File> files_;
  std::vector<uint64_t> base_;  // k-gram hashes of base code (sorted, distinct after Match prepares them)
  uint64_t tokens_ = 0, base_files_ = 0;
};

}  // namespace code
}  // namespace neardup
