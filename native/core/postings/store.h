// Posting-list store: key -> ascending list of distinct 32-bit doc ids (docs/FORMAT.md, section 10). Keys
// are 32-bit (blots) or 64-bit (chunk ids): every class is a template on the key type, instantiated for
// uint32_t (SegmentBuilder, Segment, PostingIndex, ...) and uint64_t (SegmentBuilder64, Segment64,
// PostingIndex64, ...); the key width is recorded in every file and checked when it is opened.
//
// SegmentBuilder builds one immutable segment in bounded memory: (key, doc) pairs are collected up to the
// memory budget, sorted, and spilled as sorted runs into one temporary file (each run's key space split into
// buckets by the key's top bits, with the bucket offsets kept); Finish() merges the runs bucket by bucket
// (a k-way merge reading each run's bucket through a small buffer) and streams the lists to the output.
// The bytes written do not depend on the budget. Segment is the memory-mapped reader (many concurrent
// readers; only the key-table entries and lists a query touches are read). PostingIndex is a folder with a
// manifest, segments (one per append), tombstones (deleted ids) and free ids (deleted ids dropped by a
// merge, reused by later appends). A merge writes exactly the segment a fresh build of the live documents
// with the same ids writes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/file.h"
#include "postings/codec.h"
#include "util/status.h"

namespace neardup {
namespace lsh {
class TempFile;
}
namespace postings {

constexpr char kSegmentKind[4] = {'P', 'S', 'T', 'S'};
constexpr char kManifestKind[4] = {'P', 'S', 'T', 'M'};
constexpr uint32_t kSegmentVersion = 3;   // version 2 (no key block checksums) is still read
constexpr uint32_t kManifestVersion = 3;   // 3: with commit data; written as version 2 without it
constexpr size_t kTrailerSize = 48;
constexpr size_t kBlockKeys = 64;  // keys per key block

// Directory entry size of a segment with Key keys: first key, u64 key-part bit offset, u8 k_gap, u8 k_count.
template <typename Key>
constexpr size_t DirEntrySize() {
  return sizeof(Key) + 10;
}

template <typename Key>
struct BasicKeyEntry {
  Key key;
  uint32_t count;   // 0: the entry could not be read (a corrupt key block; Segment::Entry says why)
  uint64_t offset;  // bit offset of the key's list in the segment body
};

// Streams lists (ascending keys) into a segment file written with io::AtomicFile. Doc ids must lie in
// [id_begin, id_end), the id range of the documents the segment was built from (it decides the codec's
// universe: a fresh build and a merge of the same documents write the same bytes).
template <typename Key>
class BasicSegmentWriter {
 public:
  BasicSegmentWriter();
  ~BasicSegmentWriter();
  Status Open(const std::string& path, const std::string& tmp_dir, uint32_t id_begin, uint64_t id_end);
  // Any 32-bit ids (the universe [0, 2^32)).
  Status Open(const std::string& path, const std::string& tmp_dir) { return Open(path, tmp_dir, 0, uint64_t(1) << 32); }
  // ids ascending and distinct, n >= 1; keys strictly ascending across calls.
  Status Add(Key key, const uint32_t* ids, size_t n);
  // Keys[0 .. m) (ascending) with lists already encoded for this writer's id range, back to back from bit
  // `bit` of `body` (the body of a segment with the same id base and universe, checked by its reader):
  // what Add of their ids writes, the lists copied in as few pieces as the key blocks allow.
  Status AddEncodedRun(const Key* keys, const uint32_t* counts, size_t m, const uint8_t* body, uint64_t bit);
  Status Commit();
  void Abort();
  uint64_t posts() const { return posts_; }
  uint64_t keys() const { return keys_; }

 private:
  Status FlushBlock();
  Status Drain(bool all);
  Status Spill(std::vector<uint8_t>* buf, std::unique_ptr<lsh::TempFile>* spill, const char* what);
  Status CopySpill(std::vector<uint8_t>* buf, std::unique_ptr<lsh::TempFile>* spill, uint32_t* crc);
  io::AtomicFile out_;
  std::string tmp_dir_;
  std::unique_ptr<lsh::TempFile> dir_spill_, crc_spill_;
  BitWriter bits_;
  std::vector<uint8_t> dir_buf_, crc_buf_;  // directory entries, key block checksums (u32 each)
  uint64_t block_start_ = 0;                // body bit where the open key block's lists start
  std::vector<uint64_t> gaps_, counts_;
  Key block_first_ = 0;
  uint64_t keys_ = 0, posts_ = 0, body_bytes_ = 0;
  uint32_t id_base_ = 0;
  uint64_t universe_ = 0;
  uint32_t body_crc_ = 0, dir_crc_ = 0;
  Key last_key_ = 0;
  bool open_ = false;
};

// A (key, doc) pair of the build: one u64 (key << 32 | doc) for 32-bit keys, a struct for 64-bit keys;
// both order by (key, doc).
template <typename Key>
struct PairOf;
template <>
struct PairOf<uint32_t> {
  using Type = uint64_t;
  static Type Make(uint32_t key, uint32_t doc) { return uint64_t(key) << 32 | doc; }
  static uint32_t KeyOf(Type p) { return uint32_t(p >> 32); }
  static uint32_t DocOf(Type p) { return uint32_t(p); }
};
template <>
struct PairOf<uint64_t> {
  struct Type {
    uint64_t key;
    uint64_t doc;
    bool operator<(const Type& o) const { return key != o.key ? key < o.key : doc < o.doc; }
    bool operator>(const Type& o) const { return o < *this; }
    bool operator==(const Type& o) const { return key == o.key && doc == o.doc; }
  };
  static Type Make(uint64_t key, uint32_t doc) { return Type{key, doc}; }
  static uint64_t KeyOf(const Type& p) { return p.key; }
  static uint32_t DocOf(const Type& p) { return uint32_t(p.doc); }
};

// Builds one segment in bounded memory (Kasprzak et al.'s scheme): each (key, doc) pair goes to one of 256
// buckets by the key's top bits (of key_bits), stored in chunks of 1024 pairs; when the chunks and the sort
// scratch would exceed the budget, every bucket is sorted on its own (a stable radix sort on the key bits
// when documents came in id order, else a comparison sort) and appended to a run file. Finish() merges the
// runs bucket by bucket (merging groups of runs first when their read buffers would not fit the budget) and
// streams the lists into the segment. The bytes written do not depend on the budget or on key_bits.
template <typename Key>
class BasicSegmentBuilder {
 public:
  using Pair = typename PairOf<Key>::Type;
  static constexpr size_t kChunkPairs = 1024;
  // memory_bytes = 0: no cap. tmp_dir: where runs go ("" = the output's folder). key_bits: keys are
  // expected below 2^key_bits (larger keys are allowed; they share the last bucket).
  BasicSegmentBuilder(uint64_t memory_bytes, std::string tmp_dir, unsigned key_bits = 8 * sizeof(Key));
  ~BasicSegmentBuilder();
  Status Add(uint32_t doc, const Key* keys, size_t n);
  Status Finish(const std::string& path, const std::atomic<bool>* stop = nullptr);
  size_t runs() const { return runs_.size(); }
  // The most bytes the build held at once: pair chunks, sort scratch and merge buffers.
  uint64_t peak_bytes() const { return peak_; }
  // Passes that merged groups of runs into longer runs before the final merge.
  size_t merge_passes() const { return merge_passes_; }

 private:
  static constexpr unsigned kBucketBits = 8;
  static constexpr size_t kBuckets = size_t(1) << kBucketBits;
  struct Bucket {
    std::vector<uint32_t> chunks;  // indexes into chunks_
    size_t size = 0;               // pairs
  };
  struct Run {
    size_t file;                   // index into files_
    uint64_t begin;                // pair index in the file
    std::vector<uint64_t> bucket;  // pair index (relative to begin) of each bucket; size 257
  };
  Status Spill();
  // Moves bucket b's pairs into sorted_, sorted by (key, doc) without repeats; frees its chunks.
  void SortBucket(size_t b);
  Status Merge(const std::vector<Run>& group, size_t read_pairs, const std::atomic<bool>* stop,
               const std::function<Status(size_t bucket)>& on_bucket, const std::function<Status(const Pair&)>& emit);
  uint64_t HeldBytes() const;
  uint64_t budget_;
  std::string tmp_;
  unsigned shift_;  // bucket of key k: min(k >> shift_, 255)
  size_t chunk_pairs_;
  std::vector<std::unique_ptr<Pair[]>> chunks_;
  std::vector<uint32_t> free_chunks_;
  std::vector<Bucket> buckets_;
  size_t used_chunks_ = 0, max_bucket_ = 0;
  std::vector<Pair> sorted_, scratch_;
  // Docs of the pairs held came in non-decreasing order: a stable radix sort on the key bits suffices.
  bool docs_in_order_ = true;
  int64_t last_doc_ = -1;
  uint64_t id_begin_ = ~uint64_t(0), id_end_ = 0;  // range of the docs added (with or without keys)
  uint64_t peak_ = 0;
  size_t merge_passes_ = 0;
  std::vector<std::unique_ptr<lsh::TempFile>> files_;
  std::vector<Run> runs_;
};

template <typename Key>
class BasicSegment {
 public:
  using KeyEntry = BasicKeyEntry<Key>;
  // One decoded key block: up to kBlockKeys keys, their counts and the bit offsets of their lists.
  struct Block {
    uint64_t first = 0;  // index of keys[0] in the segment
    size_t n = 0;
    uint64_t lists_begin = 0, keys_end = 0;  // body bits: the block's lists start, its key part ends
    Key keys[kBlockKeys];
    uint32_t counts[kBlockKeys];
    uint64_t offsets[kBlockKeys];
  };

  // Always checked at open: the header, the trailer, the directory (its checksum and entries: first keys
  // ascending, key parts in order) and, for a version 2 file (no key block checksums), the payload checksum.
  // A version 3 key block is checked against its checksum the first time it is read (ReadBlock), and its
  // lists as they are decoded. verify: also check every checksum and decode every key block and list now
  // (reads the whole file).
  Status Open(const std::string& path, bool verify);
  // Reads a segment held in memory (it must outlive this object); `path` names it in errors.
  Status Attach(const uint8_t* data, size_t size, const std::string& path, bool verify);
  uint64_t num_keys() const { return num_keys_; }
  uint64_t num_posts() const { return num_posts_; }
  uint64_t num_blocks() const { return num_blocks_; }
  // The doc ids of the segment lie in [id_base(), id_base() + id_universe()).
  uint32_t id_base() const { return id_base_; }
  uint64_t id_universe() const { return universe_; }

  // Decodes key block b (checking its checksum the first time: version 3).
  Status ReadBlock(uint64_t b, Block* out) const;
  // ReadBlock without the block checksum; BlockCrc: the checksum a decoded block should have (fuzzing).
  Status DecodeBlock(uint64_t b, Block* out) const;
  uint32_t BlockCrc(const Block& blk) const { return BitRangeCrc(body_, blk.lists_begin, blk.keys_end); }
  uint32_t version() const { return version_; }
  // The first block that can hold key (the last whose first key is <= key; 0 when key is below them all).
  uint64_t BlockAtOrBefore(Key key) const {
    const int64_t b = BlockOf(key);
    return b < 0 ? 0 : uint64_t(b);
  }
  // The body bit stream (the lists' bit offsets of Block are into it).
  const uint8_t* body() const { return body_; }
  uint64_t body_bits() const { return body_bits_; }
  // Checks the payload checksum of the header (everything after it: one CRC pass over the file).
  Status CheckPayload() const;
  // Appends the list of block key j (ascending ids) to out.
  Status DecodeList(const Block& block, size_t j, std::vector<uint32_t>* out) const;
  // Index of key in the segment, or -1 when absent.
  Status Find(Key key, int64_t* index) const;
  // Appends the list of key (ascending ids) to out; nothing when the key is absent.
  Status FindList(Key key, std::vector<uint32_t>* out) const;
  Status Entry(uint64_t i, KeyEntry* out) const;

  // Conveniences over the above: Find is -1 when the key is absent or its key block is corrupt, entry()
  // has count 0 when its key block is corrupt.
  int64_t Find(Key key) const;
  KeyEntry entry(uint64_t i) const;
  // Appends the list of entry i (ascending ids) to out.
  Status Decode(uint64_t i, std::vector<uint32_t>* out) const;
  const std::string& path() const { return name_; }

 private:
  int64_t BlockOf(Key key) const;
  Status FindIn(Key key, Block* blk, int64_t* j) const;
  Key DirKey(uint64_t b) const;
  uint64_t DirOffset(uint64_t b) const;
  Status Bad(uint64_t bit, const std::string& what) const;
  io::MappedFile file_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::string name_;
  const uint8_t* body_ = nullptr;
  const uint8_t* dir_ = nullptr;
  const uint8_t* block_crcs_ = nullptr;  // version 3: u32 per key block
  uint32_t version_ = 0;
  // Key blocks whose checksum was checked (bit b of word b / 64); set by any reading thread.
  std::unique_ptr<std::atomic<uint64_t>[]> checked_;
  uint64_t body_bits_ = 0, num_keys_ = 0, num_posts_ = 0, num_blocks_ = 0, universe_ = 0;
  uint32_t id_base_ = 0;
};

// Entries of one segment read in order (or near it): the key block of the last entry is kept decoded, where
// entry() and Decode() decode a whole block of kBlockKeys keys for every entry they read. Not shared between
// threads (one per thread).
template <typename Key>
class BlockCursor {
 public:
  explicit BlockCursor(const BasicSegment<Key>& seg) : seg_(&seg) {}
  // As BasicSegment::entry(): count 0 when the entry's key block is corrupt.
  BasicKeyEntry<Key> entry(uint64_t i) {
    if (!Load(i).ok()) return BasicKeyEntry<Key>{0, 0, 0};
    const size_t j = size_t(i % kBlockKeys);
    return BasicKeyEntry<Key>{blk_.keys[j], blk_.counts[j], blk_.offsets[j]};
  }
  // As BasicSegment::Decode(): appends the list of entry i (ascending ids) to out.
  Status Decode(uint64_t i, std::vector<uint32_t>* out) {
    Status s = Load(i);
    if (!s.ok()) return s;
    return seg_->DecodeList(blk_, size_t(i % kBlockKeys), out);
  }

 private:
  Status Load(uint64_t i) {
    if (i >= seg_->num_keys()) return Status(Code::kInternal, "key index out of range");
    const uint64_t b = i / kBlockKeys;
    if (b != block_) {
      block_ = b;
      status_ = seg_->ReadBlock(b, &blk_);
    }
    return status_;
  }
  const BasicSegment<Key>* seg_;
  typename BasicSegment<Key>::Block blk_;
  uint64_t block_ = ~uint64_t(0);
  Status status_;
};

template <typename Key>
class BasicPostingIndex {
 public:
  using Segment = BasicSegment<Key>;
  // Creates an empty index folder for Key keys (fails if it holds a manifest already).
  static Status Create(const std::string& dir);
  Status Open(const std::string& dir, bool verify);

  // A streaming append: documents are added one at a time (keys in any order, repeats allowed) and get
  // the free ids ascending first, then next_id onwards; they form one new segment, built in bounded memory
  // (BasicSegmentBuilder), which Commit() writes with the new manifest. While an appender is open the
  // index refuses Append, Delete, Merge and another appender; destroying an appender that was not
  // committed discards what it added (the index is unchanged).
  class Appender {
   public:
    ~Appender();
    Status Add(const Key* keys, size_t n, uint32_t* id);
    // commit_data (when given): the index's new commit data, written in the same manifest (see commit_data()).
    Status Commit(const std::atomic<bool>* stop = nullptr, const std::string* commit_data = nullptr);
    uint64_t added() const { return added_; }
    const BasicSegmentBuilder<Key>& builder() const { return builder_; }

   private:
    friend class BasicPostingIndex;
    Appender(BasicPostingIndex* ix, uint64_t memory_bytes, const std::string& tmp_dir, unsigned key_bits)
        : ix_(ix), builder_(memory_bytes, tmp_dir, key_bits) {}
    BasicPostingIndex* ix_;
    BasicSegmentBuilder<Key> builder_;
    uint64_t added_ = 0, reused_ = 0;
    bool done_ = false;
  };
  // key_bits: keys are expected below 2^key_bits (a hint for the build's buckets; any key is allowed).
  Status StartAppend(uint64_t memory_bytes, const std::string& tmp_dir, unsigned key_bits, std::unique_ptr<Appender>* out);

  // Adds documents (docs[i] = its keys) through one appender; their ids are written to ids.
  Status Append(const std::vector<std::vector<Key>>& docs, uint64_t memory_bytes, const std::string& tmp_dir,
                std::vector<uint32_t>* ids, const std::atomic<bool>* stop = nullptr, unsigned key_bits = 8 * sizeof(Key));
  // Marks live ids as deleted (refuses unknown, free or already deleted ids).
  Status Delete(const std::vector<uint32_t>& ids);
  // Rewrites all segments as one, dropping tombstones (their ids become free).
  Status Merge(const std::atomic<bool>* stop = nullptr);
  // Adds the documents of other indexes of the same key width (parts built apart, e.g. on other machines,
  // each by appends only) as one new segment: part p's id i becomes next_id + (ids of the parts before p) + i,
  // so the segment is byte for byte the one a single append of part 0's documents, then part 1's, ... writes.
  // Refused when this index has free ids (an append would give them out first) or a part has deleted
  // documents. Parts without documents add nothing; the parts are not changed.
  Status AppendIndexes(const std::vector<std::string>& part_dirs, const std::atomic<bool>* stop = nullptr,
                       const std::string* commit_data = nullptr);
  // AppendIndexes cut by key range, for a put-together that runs as independent tasks: range r of R of the
  // key space (keys ceil(r 2^W / R) .. ceil((r + 1) 2^W / R) - 1) of the parts' merged lists, their ids
  // numbered from first_id as AppendIndexes numbers them, written as a segment file `out` (ids
  // [first_id, first_id + the parts' documents)). AppendKeyRanges of ranges 0 .. R - 1, in order, onto an
  // index whose next id is first_id appends the segment AppendIndexes of the same parts writes, byte for byte.
  static Status WriteKeyRange(const std::vector<std::string>& part_dirs, uint32_t first_id, uint32_t range, uint32_t ranges,
                              const std::string& out, const std::string& tmp_dir, const std::atomic<bool>* stop,
                              uint64_t* keys, uint64_t* posts);
  // Appends the segment files of WriteKeyRange (all ranges, in key order) as one new segment of `documents`
  // documents: their lists are copied bit for bit, the key blocks re-cut. Each file is checked by its payload
  // checksum and, as it is copied, its key blocks (decoded, back to back, keys ascending); its lists are not
  // decoded.
  Status AppendKeyRanges(const std::vector<std::string>& paths, uint64_t documents, const std::atomic<bool>* stop = nullptr,
                         const std::string* commit_data = nullptr);

  // Live documents holding key (ascending).
  Status Lookup(Key key, std::vector<uint32_t>* out) const;
  // Every key with at least one live document, ascending, and its live list.
  Status ForEach(const std::function<Status(Key key, const std::vector<uint32_t>& docs)>& fn) const;

  uint32_t next_id() const { return next_id_; }
  bool IsLive(uint32_t id) const;
  uint64_t live_docs() const;
  const std::vector<uint32_t>& tombstones() const { return tombstones_; }
  const std::vector<uint32_t>& free_ids() const { return free_; }
  size_t num_segments() const { return segs_.size(); }
  const Segment& segment(size_t i) const { return *segs_[i]; }
  const std::string& dir() const { return dir_; }
  // Bytes the index's user keeps in the manifest, changed only by the calls that take a commit_data (an
  // append's commit, AppendIndexes, AppendKeyRanges): so the manifest's rename is the one commit point of the
  // new segment and of what the user says about it (passage and dupi indexes: docs/FORMAT.md section 11).
  // Delete and Merge keep it. Empty: none (the manifest is then written as version 2).
  const std::string& commit_data() const { return commit_data_; }

 private:
  // commit_data: the new commit data (kept on success), else the current one is written again.
  Status WriteManifest(const std::vector<std::string>& names, const std::string* commit_data = nullptr);
  Status Busy() const;
  // Opens the parts of AppendIndexes / WriteKeyRange: their segments and the id shift of each (ids from first).
  static Status OpenParts(const std::vector<std::string>& part_dirs, uint64_t first, std::vector<BasicPostingIndex>* parts,
                          std::vector<const Segment*>* segs, std::vector<uint32_t>* shift, uint64_t* next);
  // Puts segment file `name` (ids up to next, just written) into the manifest, or removes it.
  Status AddSegment(const std::string& name, std::unique_ptr<Segment> seg, uint64_t next, const std::string* commit_data);
  bool appending_ = false;
  std::string dir_;
  uint64_t generation_ = 0;
  uint32_t next_id_ = 0;
  std::vector<std::string> names_;
  std::vector<std::unique_ptr<Segment>> segs_;
  std::vector<uint32_t> tombstones_, free_;  // ascending
  std::string commit_data_;
};

// The key width (32 or 64) of the index in dir, from its manifest.
Status IndexKeyBits(const std::string& dir, unsigned* bits);

using SegmentWriter = BasicSegmentWriter<uint32_t>;
using SegmentBuilder = BasicSegmentBuilder<uint32_t>;
using Segment = BasicSegment<uint32_t>;
using PostingIndex = BasicPostingIndex<uint32_t>;
using KeyEntry = BasicKeyEntry<uint32_t>;
using SegmentWriter64 = BasicSegmentWriter<uint64_t>;
using SegmentBuilder64 = BasicSegmentBuilder<uint64_t>;
using Segment64 = BasicSegment<uint64_t>;
using PostingIndex64 = BasicPostingIndex<uint64_t>;
using KeyEntry64 = BasicKeyEntry<uint64_t>;

extern template class BasicSegmentWriter<uint32_t>;
extern template class BasicSegmentWriter<uint64_t>;
extern template class BasicSegmentBuilder<uint32_t>;
extern template class BasicSegmentBuilder<uint64_t>;
extern template class BasicSegment<uint32_t>;
extern template class BasicSegment<uint64_t>;
extern template class BasicPostingIndex<uint32_t>;
extern template class BasicPostingIndex<uint64_t>;

}  // namespace postings
}  // namespace neardup
