// The decision on candidate pairs, apart from where the texts and signatures live: a dedup session (Dedup::Finish,
// its texts in memory or in its temporary file) and the staged dedup's verify stage (docs/scale.md: the texts
// read in place by document, from plain inputs' lines or the signatures stage's copies) take it through the
// same function, so the verified
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
#include "text/json_line.h"
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

// The documents of candidate pairs (a << 32 | b): sorted, distinct.
std::vector<uint32_t> PairDocuments(const std::vector<uint64_t>& cand);

// Exact Jaccard of every candidate pair (a << 32 | b, sorted, distinct): keep[i] = J >= threshold and, for kept
// pairs, exact[i] = J. memory_bytes: shingle sets held at once (0: kDefaultVerifyBytes).
Status VerifyPairsExact(const std::vector<uint64_t>& cand, const TextSource& texts, const TextOptions& topt,
                        double threshold, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop,
                        std::vector<uint8_t>* keep, std::vector<float>* exact, VerifyStats* stats);

// doubri's keep rule verified lazily (Dedup::Finish with Verify::kExact, Clustering::kKept and neither pairs nor
// candidates wanted), from the band buckets themselves, without listing their pairs: documents are decided in
// order, and a document is checked only against the documents kept so far in its buckets (each bucket keeps
// the list of its kept members; dropped documents never enter it), in ascending order, until the first with
// exact Jaccard >= threshold (its representative). The result is that of verifying every candidate pair and
// applying the rule to them (Dedup::DecideStream), at a cost that grows with the kept candidates, not with the pairs.
// Texts are taken in windows of consecutive documents whose sets fit half the budget: a window's texts are
// hashed (two 64-bit hashes and the length: identical texts match without their sets), the sets needed (the
// members of a bucket that does not hold one text only) built in parallel, the candidates of earlier windows
// checked in parallel (their sets from a cache of the other half of the budget, kept while a later document
// shares a bucket with them), then the window's own candidates in order.
// member: doc << 32 | bucket for every member of a bucket of 2 or more documents, sorted; buckets: their
// number. rep: per document of the session, initialised by the caller (itself, or kIndexRep for documents
// never kept nor decided); the dropped documents get their representative. *checked: pairs compared by sets.
// Texts in buckets have at least one shingle (an empty set has the all-ones signature, which is in no band
// bucket: lsh_dedup.h), so two identical texts have Jaccard 1.
Status DecideKeptExact(const std::vector<uint64_t>& member, uint64_t buckets, const TextSource& texts, const TextOptions& topt,
                       double threshold, uint64_t memory_bytes, size_t slots, const std::atomic<bool>* stop,
                       std::vector<uint32_t>* rep, VerifyStats* stats, uint64_t* checked);

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

// The texts of the staged dedup (docs/FORMAT.md section 13). Every document of a signatures shard has a record
// in the shard's `sig-I.locs` file (20 bytes: where its text is, its lengths and its text's CRC-32C), stored in
// blocks of `block` records, each block with a CRC-32C of its own, so that the verify stage reads only the
// blocks of the documents of its pairs. A document of a plain JSONL input is read again from its input file
// (`offset`: its line, `raw_len` bytes) and its line parsed as the signatures stage parsed it; any other
// document's text was copied to the shard's `sig-I.texts` (`offset` after the header, raw_len = text_len).
// Each text read is checked against its CRC: a mismatch in an input file means the input changed since the
// signatures stage (ERR invalid input, naming the file and the line's offset), in a texts file that the file is
// corrupt.
constexpr size_t kDocLocBytes = 20;  // u64 offset, u32 raw_len, u32 text_len, u32 crc (little-endian)

struct StageInput {
  std::string path;
  uint64_t first = 0, count = 0;  // its documents (global numbers)
  bool in_place = false;          // plain JSONL: read from its lines; else copied to the shard's texts file
};

struct StageShard {
  uint64_t first = 0, n = 0;  // global number of its first document, documents
  std::string locs;           // sig-I.locs
  uint32_t locs_crc = 0;      // its header's payload CRC: the CRC-32C of its block CRCs
  uint64_t block = 0;         // records per block
  std::string texts;          // sig-I.texts ("" when the shard copied no text)
  uint64_t texts_bytes = 0;   // the texts file's payload bytes
  std::vector<StageInput> inputs;  // ascending
};

class StageDocs : public TextSource {
 public:
  StageDocs() = default;
  ~StageDocs() override;
  StageDocs(const StageDocs&) = delete;
  StageDocs& operator=(const StageDocs&) = delete;
  // Loads the records of `docs` (sorted, distinct), reading only their blocks, each checked against its CRC
  // (and the block CRCs against the header's); opens the texts files and the input files they need. `skip`:
  // the header bytes of the stage files; `field`: the text field of the input lines.
  Status Open(std::vector<StageShard> shards, const std::vector<uint32_t>& docs, uint64_t skip, const jsonl::FieldPath& field);
  uint64_t Length(uint32_t doc) const override;
  Status Text(uint32_t doc, SetScratch* sc, const uint8_t** p) const override;
  // bytes read: records (blocks and block CRCs), copied texts, input lines
  uint64_t bytes_read() const { return bytes_read_.load(); }

 private:
  struct Loc {
    uint64_t offset;
    uint32_t raw_len, text_len, crc;
  };
  struct Shard {
    StageShard s;
    io::os::Fd texts_fd = io::os::kNoFd;
    std::vector<io::os::Fd> input_fd;  // per input (kNoFd: not needed)
  };
  const Loc* Find(uint32_t doc) const;
  std::vector<Shard> shards_;
  std::vector<uint32_t> docs_;  // the loaded documents, sorted
  std::vector<Loc> locs_;       // and their records
  uint64_t skip_ = 0;
  const jsonl::FieldPath* field_ = nullptr;
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
