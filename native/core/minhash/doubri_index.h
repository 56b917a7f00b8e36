// doubri 1.0's group deduplication (doubri-self, doubri-other), reproduced byte for byte.
//
// self: hash files are processed in the given order with one set per band (40 bands of 80 bytes). A record
//   whose flag is '1' becomes '0' when any of its bands equals the same band of an earlier *kept* record;
//   otherwise it is kept and its 40 bands enter the sets. Records already '0' are skipped. The index files
//   PREFIX.00000 .. PREFIX.00039 then hold, per band, the 80-byte bands of every kept record sorted by memcmp
//   (unsigned byte order), no header.
// other: the 40 index files are loaded (memory-mapped); each record flagged '1' in the given hash files
//   becomes '0' when any of its bands is found (binary search) in the same band's index file. Records are
//   neither added to the index nor compared with each other.
//
// Differences from doubri 1.0 (on purpose): every input is checked before any file is modified; a missing,
// truncated or unsorted index file is an error (doubri reads a missing one as empty); a flag file whose size
// differs from the record count is an error.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace neardup {
namespace doubri {

struct Stats {
  std::string target;  // base name of the hash file
  uint64_t total = 0, active = 0, skips = 0, drops = 0;
};

// {"target": "...", "num_total": T, "num_active": A, "num_skips": S, "num_drops": D, "active_rate": x,
//  "drop_rate": y} with rates as %.6f (no newline).
std::string FormatStats(const Stats& s);

// `slots` = parallel::MaxSlots() (per-band sorting and hashing run on the pool); `stop` may be null.
Status Self(const std::vector<std::string>& hash_files, const std::string& index_prefix, size_t slots,
            const std::atomic<bool>* stop, std::vector<Stats>* stats);
Status Other(const std::string& index_prefix, const std::vector<std::string>& hash_files, size_t slots,
             const std::atomic<bool>* stop, std::vector<Stats>* stats);

// PREFIX.00007 for band 7.
std::string IndexFileName(const std::string& prefix, uint32_t band);

// The pieces of Other(), on images in memory (the fuzz target uses them without files).
class HashFile;
struct IndexBand {
  const uint8_t* data = nullptr;
  uint64_t count = 0;  // 80-byte entries
};
// Checks one index file's image (a multiple of 80 bytes, sorted); `name` names it in errors.
Status CheckIndexBand(const uint8_t* data, size_t size, const std::string& name, IndexBand* out);
// Marks '1' -> '0' in `flags` (one per record of `hf`) for records with a band found in `index` (kBands
// entries) and fills the stats' counts.
Status MarkOther(const std::vector<IndexBand>& index, const HashFile& hf, std::vector<uint8_t>* flags, size_t slots,
                 const std::atomic<bool>* stop, Stats* st);

}  // namespace doubri
}  // namespace neardup
