// The LSH index file (kind LSHI, docs/FORMAT.md section 6): a reader for versions 1 and 2 (a version 1 file is
// converted to a version 2 image in memory as it is loaded) and the version 2 writer, which streams the live
// entries of a saved segment (removed ones left out, slots renumbered) followed by appended entries.
//
// Version 2 keeps, per entry (a "slot", numbered in insertion order): its key (a u64 or a UTF-8 string), one
// 64-bit key per band, and optionally its signature and an opaque data blob (dedup keeps the sorted shingle set
// there). The key directory and each band table are sorted arrays searched in place, so a mapped segment
// answers a query with b binary searches and never needs to be read whole.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "io/file.h"
#include "minhash/lsh_params.h"
#include "util/status.h"

namespace neardup {
namespace lsh {

enum class KeyType : uint32_t { kInt = 0, kString = 1 };

// A key: an unsigned 64-bit integer, or a byte string (UTF-8). `s` points into memory owned elsewhere.
struct Key {
  KeyType type = KeyType::kInt;
  uint64_t i = 0;
  std::string_view s;
  static Key Int(uint64_t v) {
    Key k;
    k.i = v;
    return k;
  }
  static Key Str(std::string_view v) {
    Key k;
    k.type = KeyType::kString;
    k.s = v;
    return k;
  }
  bool operator==(const Key& o) const { return type == o.type && (type == KeyType::kInt ? i == o.i : s == o.s); }
};

// The order of the key directory: an integer key is its own hash; a string key hashes to fast64(bytes, seed 0).
uint64_t KeyHash(const Key& k);
// For messages: the integer, or the string in double quotes (cut at 200 bytes).
std::string KeyText(const Key& k);

// What an index keeps per entry beyond its key and band keys.
struct Store {
  bool signatures = false;
  bool data = false;
  bool operator==(const Store& o) const { return signatures == o.signatures && data == o.data; }
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(const void* data, size_t n) = 0;
  virtual Status WriteAt(uint64_t offset, const void* data, size_t n) = 0;
};

// A file written atomically (io::AtomicFile: temporary name, fsync, rename on Commit).
class FileSink : public ByteSink {
 public:
  Status Open(const std::string& path) { return f_.Open(path); }
  Status Write(const void* data, size_t n) override { return f_.Write(data, n); }
  Status WriteAt(uint64_t offset, const void* data, size_t n) override { return f_.WriteAt(offset, data, n); }
  Status Commit() { return f_.Commit(); }

 private:
  io::AtomicFile f_;
};

// An image in memory (v1 conversion, tests, fuzzing).
class VectorSink : public ByteSink {
 public:
  Status Write(const void* data, size_t n) override;
  Status WriteAt(uint64_t offset, const void* data, size_t n) override;
  std::vector<uint8_t> bytes;
};

// A saved index: memory-mapped (or an image in memory). Read-only; every method is safe to call concurrently.
// With verify, Open reads the whole payload and checks everything the writer guarantees (checksum, key
// directory, sorted tables holding each slot once, offsets); without, only what costs O(1), and each access
// checks its own bounds (a damaged file may then give wrong answers, but is never read outside its bytes).
class Segment {
 public:
  Status Open(const std::string& path, bool verify);
  // The same over an image in memory; `data` must outlive the segment (a version 1 image is converted to an
  // owned version 2 image). `name` names it in errors.
  Status OpenBytes(const uint8_t* data, size_t size, const std::string& name, bool verify);

  const Params& params() const { return p_; }
  KeyType key_type() const { return key_type_; }
  Store store() const { return store_; }
  uint64_t size() const { return n_; }
  uint32_t file_version() const { return file_version_; }
  const std::string& name() const { return name_; }
  std::string_view meta() const { return meta_; }

  Status KeyAt(uint64_t slot, Key* k) const;
  // The slot holding `k`, if any.
  bool Find(const Key& k, uint64_t* slot) const;
  // Calls fn(slot) for each slot whose band-j key is `key`, ascending. Slots >= size() are skipped.
  template <typename Fn>
  void Lookup(uint32_t j, uint64_t key, Fn&& fn) const;
  const uint64_t* dir_hashes() const { return dir_hash_; }
  const uint32_t* dir_slots() const { return dir_slot_; }
  const uint64_t* band_keys(uint32_t j) const { return tables_ + size_t(j) * table_words_; }
  const uint32_t* band_slots(uint32_t j) const {
    return reinterpret_cast<const uint32_t*>(tables_ + size_t(j) * table_words_ + n_);
  }
  // nullptr when signatures are not stored.
  const uint8_t* Signature(uint64_t slot) const;
  Status Data(uint64_t slot, const uint8_t** p, uint64_t* n) const;
  uint64_t DataSize(uint64_t slot) const;  // 0 when damaged (Data then fails)

 private:
  Status Parse(bool verify);
  Status Verify() const;
  Status Corrupt(const std::string& what) const;
  io::MappedFile map_;
  std::vector<uint8_t> owned_;  // a version 1 file converted to version 2
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  uint32_t file_version_ = 0;
  Params p_;
  KeyType key_type_ = KeyType::kInt;
  Store store_;
  uint64_t n_ = 0, key_bytes_ = 0, data_bytes_ = 0;
  uint64_t table_words_ = 0;             // u64 words per table (keys, then slots padded)
  const uint64_t* keys_ = nullptr;       // int keys, or string offsets (n + 1)
  const uint8_t* key_chars_ = nullptr;   // string key bytes
  const uint64_t* dir_hash_ = nullptr;
  const uint32_t* dir_slot_ = nullptr;
  const uint64_t* tables_ = nullptr;
  const uint8_t* sigs_ = nullptr;
  const uint64_t* data_off_ = nullptr;
  const uint8_t* data_bytes_p_ = nullptr;
  std::string_view meta_;
};

template <typename Fn>
void Segment::Lookup(uint32_t j, uint64_t key, Fn&& fn) const {
  const uint64_t* k = band_keys(j);
  const uint32_t* s = band_slots(j);
  size_t lo = 0, hi = n_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (k[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n_ && k[lo] == key; lo++)
    if (s[lo] < n_) fn(uint64_t(s[lo]));
}

// Entries appended after a segment's live entries when an index is written.
class AppendSource {
 public:
  virtual ~AppendSource() = default;
  virtual uint64_t count() const = 0;
  // Every key in order, through fn(key); called twice by the writer. Keys must be distinct and not among the
  // segment's live keys (the index checks that as entries are added).
  virtual Status Keys(const std::function<Status(const Key&)>& fn) = 0;
  // Band j's key of every entry: out[i] for i < count().
  virtual Status BandKeys(uint32_t j, uint64_t* out) = 0;
  // Every signature in order (only called when signatures are stored).
  virtual Status Signatures(const std::function<Status(const uint8_t*)>& fn) = 0;
  // The data blobs (only called when data is stored): sizes, then the bytes in order.
  virtual Status DataSizes(uint64_t* out) = 0;
  virtual Status Data(const std::function<Status(const uint8_t*, size_t)>& fn) = 0;
};

struct WriteSpec {
  Params params;
  KeyType key_type = KeyType::kInt;
  Store store;
  std::string_view meta;
};

// Writes a version 2 file: the live entries of `base` (nullable; dead holds one bit per base slot, bit set =
// removed, and may be empty), then every entry of `sources`, renumbered from 0 in that order. Memory: for
// each band in turn, 24 bytes per appended entry; the base is streamed from its map.
Status WriteIndex(const WriteSpec& spec, const Segment* base, const std::vector<uint64_t>& dead,
                  const std::vector<AppendSource*>& sources, ByteSink* out);

inline bool DeadBit(const std::vector<uint64_t>& dead, uint64_t slot) {
  return !dead.empty() && ((dead[slot >> 6] >> (slot & 63)) & 1);
}

}  // namespace lsh
}  // namespace neardup
