// The decision on candidate pairs, apart from where the texts and signatures live: a dedup session (Dedup::Finish,
// its texts in memory or in its temporary file) and the staged dedup's verify stage (docs/scale.md: the texts
// the signatures stage wrote, read in place by document) take it through the same function, so the verified
// pairs, their exact Jaccard values and their estimates are the same bytes.
//
// Exact verification works on the candidates only. The documents of candidate pairs are taken in the order of
// the connected components of the candidate graph (partners next to each other), in blocks whose shingle sets
// fit a memory budget; each set (sorted distinct 64-bit shingle hashes, BuildSet) is built from the text once
// per block and every pair is checked by one merge that stops as soon as the threshold is out of reach
// (JaccardAtLeast). The result is the same whatever the budget.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "io/os.h"
#include "minhash/lsh_dedup.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

// Texts of documents by number; Text may be called from several pool threads at once.
class TextSource {
 public:
  virtual ~TextSource() = default;
  virtual uint64_t Length(uint32_t doc) const = 0;
  // *p: the Length(doc) bytes of doc's text, in memory, or read into sc->text.
  virtual Status Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const = 0;
};

// Signatures of documents by number (params.signature_bytes() each).
class SignatureSource {
 public:
  virtual ~SignatureSource() = default;
  virtual const uint8_t* Signature(uint32_t doc) const = 0;
};

struct VerifyStats {
  uint64_t docs = 0, sets = 0, blocks = 0;  // documents in candidate pairs, sets built, blocks
};

// Exact Jaccard of every candidate pair (a << 32 | b, sorted, distinct): keep[i] = J >= threshold and, for kept
// pairs, exact[i] = J. memory_bytes: shingle sets held at once (0: kDefaultVerifyBytes).
Status VerifyPairsExact(const std::vector<uint64_t>& cand, const TextSource& texts, const TextOptions& topt,
                        double threshold, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint8_t>* keep, std::vector<float>* exact, VerifyStats* stats);

struct PairDecisions {
  std::vector<uint8_t> keep;   // per candidate
  std::vector<float> est;      // per candidate, when signatures were given
  std::vector<float> exact;    // per candidate (0 unless kept), Verify::kExact only
};

// Dedup::Finish's decision: estimates from `sigs` (nullable: none), then keep = exact Jaccard >= threshold
// (Verify::kExact, from `texts`), estimate >= threshold (kEstimate: needs sigs), or every candidate (kNone).
Status DecidePairs(const Params& params, const TextOptions& topt, Verify verify, double threshold, uint64_t memory_bytes,
                   const std::vector<uint64_t>& cand, const SignatureSource* sigs, const TextSource* texts, size_t slots,
                   const std::atomic<bool>* stop, PairDecisions* out, VerifyStats* stats);

// The texts of the staged dedup (docs/FORMAT.md section 13): per signatures shard, a file whose texts follow a
// header of `skip` bytes back to back, with each text's length and CRC-32C (from the shard's docs file).
// Texts are read by document (pread), never copied as a whole, and each one read is checked against its CRC.
struct StageTextFile {
  std::string path;
  uint64_t first = 0;              // number of the shard's first document
  std::vector<uint32_t> len, crc;  // per document of the shard
};

class StageTexts : public TextSource {
 public:
  StageTexts() = default;
  ~StageTexts() override;
  StageTexts(const StageTexts&) = delete;
  StageTexts& operator=(const StageTexts&) = delete;
  // files: ascending document ranges (not necessarily adjacent). Checks that every file holds skip + its texts'
  // bytes.
  Status Open(std::vector<StageTextFile> files, uint64_t skip);
  uint64_t Length(uint32_t doc) const override;
  Status Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const override;
  uint64_t bytes_read() const { return bytes_read_.load(); }

 private:
  struct File {
    StageTextFile f;
    std::vector<uint64_t> off;  // len's prefix sums
    io::os::Fd fd = io::os::kNoFd;
  };
  const File& FileOf(uint32_t doc) const;
  std::vector<File> files_;
  uint64_t skip_ = 0;
  mutable std::atomic<uint64_t> bytes_read_{0};
};

// Signatures held in shards of consecutive documents (the staged dedup's signature files, read by the caller).
class ShardSignatures : public SignatureSource {
 public:
  explicit ShardSignatures(size_t signature_bytes) : sb_(signature_bytes) {}
  // data: count signatures of documents first .. first + count - 1; added in ascending order.
  void Add(uint64_t first, uint64_t count, const uint8_t* data);
  bool Covers(uint32_t doc) const;
  const uint8_t* Signature(uint32_t doc) const override;

 private:
  size_t sb_;
  std::vector<uint64_t> first_, count_;
  std::vector<const uint8_t*> data_;
};

}  // namespace lsh
}  // namespace neardup
