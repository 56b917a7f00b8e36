// The index of an exact dedup run (`neardup exact --index-out`, read by later runs' `--index`): the 128-bit
// hash of every document the indexed runs kept, sorted, with its document number over those runs and,
// optionally, its id (JSON text). docs/FORMAT.md, "Exact index (EXIX)".
//
// Payload (little-endian, after the common header of kind "EXIX"; params[0] = entries, params[1] = the
// documents the indexed runs read; flags bit 0: ids present):
//   u32 meta length M, M bytes of meta (the settings, JSON text), zero padding to a multiple of 8
//   entries x { u64 hash hi, u64 hash lo, u64 document }, strictly ascending by (hi, lo)
//   with ids: (entries + 1) x u64 offsets (ascending, the first 0), then the id bytes (offsets[entries] of them)
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "exact/exact_dedup.h"
#include "text/docs.h"
#include "io/file.h"
#include "util/status.h"

namespace neardup {
namespace exact {

class ExactIndex {
 public:
  // Maps and checks the file (header, payload CRC, lengths, order); kCorrupt names the file and the fault.
  Status Load(const std::string& path);
  uint64_t size() const { return n_; }
  uint64_t documents() const { return documents_; }
  bool has_ids() const { return ids_ != nullptr; }
  const std::string& meta() const { return meta_; }
  // The entry of hash h, if indexed.
  bool Find(const Hash128& h, uint64_t* entry) const;
  Hash128 hash(uint64_t e) const { return Hash128{rec_[3 * e], rec_[3 * e + 1]}; }
  uint64_t doc(uint64_t e) const { return rec_[3 * e + 2]; }
  std::string_view id(uint64_t e) const {
    return std::string_view(reinterpret_cast<const char*>(ids_) + off_[e], off_[e + 1] - off_[e]);
  }

 private:
  io::MappedFile map_;
  std::string meta_;
  const uint64_t* rec_ = nullptr;
  const uint64_t* off_ = nullptr;
  const uint8_t* ids_ = nullptr;
  uint64_t n_ = 0, documents_ = 0;
  std::vector<uint64_t> dir_;  // dir_[k]: the first entry whose hi >> 48 is >= k (65537 values)
};

struct IndexWrite {
  std::string meta;
  uint64_t documents = 0;          // the documents of the indexed runs and of this one
  uint64_t first_doc = 0;          // this run's document d is number first_doc + d
  const ExactIndex* prior = nullptr;  // its entries are kept (nullptr: none)
  // with ids: this run's ids by document (JSON text)
  bool with_ids = false;
  Docs ids;
};

// Writes prior's entries and `fresh` (sorted by hash, none of them in prior) to `path` atomically.
Status WriteExactIndex(const std::string& path, const IndexWrite& w, const NewEntry* fresh, size_t n_fresh);

}  // namespace exact
}  // namespace neardup
