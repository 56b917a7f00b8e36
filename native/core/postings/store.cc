#include "postings/store.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <queue>
#include <thread>

#include "hash/crc32c.h"
#include "io/header.h"
#include "io/os.h"
#include "minhash/spill.h"
#include "parallel/pool.h"
#include "util/endian.h"

namespace neardup {
namespace postings {

namespace {

constexpr size_t kKeySpillAt = 1 << 20;    // directory bytes kept in memory before spilling
constexpr size_t kReadPairs = 8192;        // per-run read buffer during the merge (64 KiB)

std::string Hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

Status Corrupt(const std::string& file, uint64_t offset, const std::string& what) {
  return Status(Code::kCorrupt, "'" + file + "' is corrupt at offset " + std::to_string(offset) + " (" +
                                    Hex(offset) + "): " + what);
}

template <typename Key>
Key LoadKey(const uint8_t* p);
template <>
uint32_t LoadKey<uint32_t>(const uint8_t* p) {
  return LoadLe32(p);
}
template <>
uint64_t LoadKey<uint64_t>(const uint8_t* p) {
  return LoadLe64(p);
}
void StoreKey(uint8_t* p, uint32_t k) { StoreLe32(p, k); }
void StoreKey(uint8_t* p, uint64_t k) { StoreLe64(p, k); }

// Key width in bits, as recorded in the flags of both file kinds.
template <typename Key>
constexpr uint32_t KeyBits() {
  return uint32_t(sizeof(Key) * 8);
}

// Reads pairs [first, first + n) of a run file into dst.
template <typename Pair>
Status ReadPairs(io::os::Fd fd, const std::string& path, uint64_t first, uint64_t n, Pair* dst) {
  const uint64_t bytes = n * sizeof(Pair);
  uint64_t got = 0;
  while (got < bytes) {
    size_t k = 0;
    Status s = io::os::ReadAt(fd, path, first * sizeof(Pair) + got, reinterpret_cast<char*>(dst) + got,
                              size_t(std::min<uint64_t>(bytes - got, uint64_t(1) << 30)), &k);
    if (!s.ok()) return s;
    if (k == 0) return Status(Code::kIo, "cannot read the temporary file '" + path + "': it ended early");
    got += k;
  }
  return Status::Ok();
}

// Reads pairs of one bucket of one run from the spill file through a small buffer.
template <typename Pair>
struct RunCursor {
  io::os::Fd fd = io::os::kNoFd;
  uint64_t next = 0, end = 0;  // pair indexes in the file
  size_t read_pairs = kReadPairs;
  std::vector<Pair> buf;
  size_t pos = 0;
  Status Fill(const std::string& path) {
    const uint64_t n = std::min<uint64_t>(read_pairs, end - next);
    buf.resize(n);
    Status s = ReadPairs(fd, path, next, n, buf.data());
    if (!s.ok()) return s;
    next += n;
    pos = 0;
    return Status::Ok();
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------- writer

template <typename Key>
BasicSegmentWriter<Key>::BasicSegmentWriter() = default;
template <typename Key>
BasicSegmentWriter<Key>::~BasicSegmentWriter() = default;

template <typename Key>
Status BasicSegmentWriter<Key>::Open(const std::string& path, const std::string& tmp_dir, uint32_t id_begin,
                                     uint64_t id_end) {
  if (id_end < id_begin || id_end > (uint64_t(1) << 32)) return Status(Code::kInternal, "bad segment id range");
  tmp_dir_ = tmp_dir;
  if (tmp_dir_.empty()) {
    const size_t slash = path.rfind('/');
    tmp_dir_ = slash == std::string::npos ? "." : path.substr(0, slash);
  }
  keys_ = posts_ = body_bytes_ = 0;
  body_crc_ = dir_crc_ = 0;
  id_base_ = id_begin;
  universe_ = id_end - id_begin;
  bits_ = BitWriter();
  dir_buf_.clear();
  dir_spill_.reset();
  crc_buf_.clear();
  crc_spill_.reset();
  block_start_ = 0;
  gaps_.clear();
  counts_.clear();
  open_ = true;
  Status s = out_.Open(path);
  if (!s.ok()) return s;
  uint8_t zero[io::kHeaderSize] = {0};
  return out_.Write(zero, sizeof zero);
}

// Moves the whole bytes of the bit stream to the file (all: the last, partial byte too).
template <typename Key>
Status BasicSegmentWriter<Key>::Drain(bool all) {
  if (all) bits_.Finish();
  std::vector<uint8_t>& b = bits_.bytes();
  if (b.empty()) return Status::Ok();
  body_crc_ = Crc32c(b.data(), b.size(), body_crc_);
  body_bytes_ += b.size();
  Status s = out_.Write(b.data(), b.size());
  b.clear();
  return s;
}

// A key block: the Rice codes of the key gaps (key - previous key - 1) and of the counts - 1, each with
// the parameter that makes the block shortest; its directory entry points at them.
template <typename Key>
Status BasicSegmentWriter<Key>::FlushBlock() {
  if (counts_.empty()) return Status::Ok();
  const unsigned kg = BestRiceK(gaps_.data(), gaps_.size(), 64);
  const unsigned kc = BestRiceK(counts_.data(), counts_.size(), 32);
  constexpr size_t kEntry = DirEntrySize<Key>();
  uint8_t e[kEntry];
  StoreKey(e, block_first_);
  StoreLe64(e + sizeof(Key), bits_.bits());
  e[sizeof(Key) + 8] = uint8_t(kg);
  e[sizeof(Key) + 9] = uint8_t(kc);
  for (size_t i = 0; i < counts_.size(); i++) {
    if (i > 0) bits_.Rice(gaps_[i - 1], kg);
    bits_.Rice(counts_[i], kc);
  }
  gaps_.clear();
  counts_.clear();
  // the block's checksum: its lists and key part (every byte of it is still in bits_, Drain runs only here)
  uint8_t c[4];
  StoreLe32(c, bits_.RangeCrc(block_start_));
  block_start_ = bits_.bits();
  crc_buf_.insert(crc_buf_.end(), c, c + 4);
  dir_buf_.insert(dir_buf_.end(), e, e + kEntry);
  Status s = Spill(&dir_buf_, &dir_spill_, "pst-dir");
  if (s.ok()) s = Spill(&crc_buf_, &crc_spill_, "pst-crc");
  if (s.ok() && bits_.bytes().size() >= (1 << 16)) s = Drain(false);
  return s;
}

template <typename Key>
Status BasicSegmentWriter<Key>::Spill(std::vector<uint8_t>* buf, std::unique_ptr<lsh::TempFile>* spill, const char* what) {
  if (buf->size() < kKeySpillAt) return Status::Ok();
  if (!*spill) {
    *spill = std::make_unique<lsh::TempFile>();
    Status s = (*spill)->Create(tmp_dir_, what);
    if (!s.ok()) return s;
  }
  Status s = (*spill)->Append(buf->data(), buf->size());
  buf->clear();
  return s;
}

// Writes what was spilled, then what is held, to the output, adding it to crc.
template <typename Key>
Status BasicSegmentWriter<Key>::CopySpill(std::vector<uint8_t>* buf, std::unique_ptr<lsh::TempFile>* spill, uint32_t* crc) {
  // *crc: the payload's; dir_crc_: the directory's and the block checksums' 
  Status s;
  if (*spill) {
    s = (*spill)->Finish();
    if (!s.ok()) return s;
    io::os::Fd fd = io::os::kNoFd;
    s = io::os::OpenRead((*spill)->path(), &fd);
    if (!s.ok()) return s;
    std::vector<uint8_t> b(1 << 16);
    for (;;) {
      size_t k = 0;
      s = io::os::Read(fd, (*spill)->path(), b.data(), b.size(), &k);
      if (!s.ok() || k == 0) break;
      *crc = Crc32c(b.data(), k, *crc);
      dir_crc_ = Crc32c(b.data(), k, dir_crc_);
      s = out_.Write(b.data(), k);
      if (!s.ok()) break;
    }
    io::os::CloseQuietly(fd);
    if (!s.ok()) return s;
    spill->reset();
  }
  *crc = Crc32c(buf->data(), buf->size(), *crc);
  dir_crc_ = Crc32c(buf->data(), buf->size(), dir_crc_);
  s = out_.Write(buf->data(), buf->size());
  buf->clear();
  return s;
}

template <typename Key>
Status BasicSegmentWriter<Key>::Add(Key key, const uint32_t* ids, size_t n) {
  if (!open_) return Status(Code::kInternal, "segment writer not open");
  if (n == 0 || (keys_ > 0 && key <= last_key_)) return Status(Code::kInternal, "segment lists out of order");
  if (n > universe_) return Status(Code::kInternal, "segment list longer than its id range");
  for (size_t i = 0; i < n; i++) {
    if ((i > 0 && ids[i] <= ids[i - 1]) || ids[i] < id_base_ || ids[i] - id_base_ >= universe_)
      return Status(Code::kInternal, "segment list not ascending or outside its id range");
  }
  if (counts_.size() == kBlockKeys) {
    Status s = FlushBlock();
    if (!s.ok()) return s;
  }
  if (counts_.empty())
    block_first_ = key;
  else
    gaps_.push_back(uint64_t(key - last_key_ - 1));
  counts_.push_back(n - 1);
  last_key_ = key;
  PutEliasFano(&bits_, ids, n, id_base_, universe_);
  keys_++;
  posts_ += n;
  return Status::Ok();
}

template <typename Key>
Status BasicSegmentWriter<Key>::AddEncodedRun(const Key* keys, const uint32_t* counts, size_t m, const uint8_t* body, uint64_t bit) {
  if (!open_) return Status(Code::kInternal, "segment writer not open");
  for (size_t j = 0; j < m;) {
    if (counts_.size() == kBlockKeys) {
      Status s = FlushBlock();
      if (!s.ok()) return s;
    }
    // the keys that still fit in this key block: their lists are one piece of bits
    const size_t take = std::min(m - j, kBlockKeys - counts_.size());
    uint64_t bits = 0;
    for (size_t i = j; i < j + take; i++) {
      if (counts[i] == 0 || (keys_ > 0 && keys[i] <= last_key_)) return Status(Code::kInternal, "segment lists out of order");
      if (counts[i] > universe_) return Status(Code::kInternal, "segment list longer than its id range");
      if (counts_.empty())
        block_first_ = keys[i];
      else
        gaps_.push_back(uint64_t(keys[i] - last_key_ - 1));
      counts_.push_back(counts[i] - 1);
      last_key_ = keys[i];
      keys_++;
      posts_ += counts[i];
      bits += EfBits(counts[i], universe_);
    }
    bits_.Copy(body, bit, bits);
    bit += bits;
    j += take;
  }
  return Status::Ok();
}

template <typename Key>
Status BasicSegmentWriter<Key>::Commit() {
  // payload = body | directory | trailer
  Status s = FlushBlock();
  if (s.ok()) s = Drain(true);
  if (!s.ok()) return s;
  const uint64_t body_bits = bits_.bits();
  uint32_t crc = body_crc_;
  // directory, then the key block checksums: the trailer's directory CRC covers both
  dir_crc_ = 0;
  s = CopySpill(&dir_buf_, &dir_spill_, &crc);
  if (s.ok()) s = CopySpill(&crc_buf_, &crc_spill_, &crc);
  if (!s.ok()) return s;
  uint8_t t[kTrailerSize];
  StoreLe64(t, keys_);
  StoreLe64(t + 8, posts_);
  StoreLe64(t + 16, body_bits);
  StoreLe64(t + 24, id_base_);
  StoreLe64(t + 32, universe_);
  StoreLe32(t + 40, body_crc_);
  StoreLe32(t + 44, dir_crc_);
  crc = Crc32c(t, kTrailerSize, crc);
  s = out_.Write(t, kTrailerSize);
  if (!s.ok()) return s;
  io::FileHeader h;
  std::memcpy(h.kind, kSegmentKind, 4);
  h.version = kSegmentVersion;
  h.flags = KeyBits<Key>();
  h.payload_size = out_.written() - io::kHeaderSize;
  h.payload_crc = crc;
  h.params[0] = keys_;
  h.params[1] = posts_;
  uint8_t hb[io::kHeaderSize];
  io::EncodeHeader(h, hb);
  s = out_.WriteAt(0, hb, sizeof hb);
  if (!s.ok()) return s;
  open_ = false;
  return out_.Commit();
}

template <typename Key>
void BasicSegmentWriter<Key>::Abort() {
  out_.Abort();
  dir_spill_.reset();
  crc_spill_.reset();
  open_ = false;
}

// --------------------------------------------------------------------------------------------- builder

template <typename Key>
BasicSegmentBuilder<Key>::BasicSegmentBuilder(uint64_t memory_bytes, std::string tmp_dir, unsigned key_bits)
    : budget_(memory_bytes), tmp_(std::move(tmp_dir)), buckets_(kBuckets) {
  key_bits = std::max(kBucketBits, std::min<unsigned>(key_bits, KeyBits<Key>()));
  shift_ = key_bits - kBucketBits;
  // Small budgets get smaller chunks, so that a partly filled chunk per bucket stays a small share.
  chunk_pairs_ = kChunkPairs;
  while (budget_ && chunk_pairs_ > 16 && uint64_t(chunk_pairs_) * sizeof(Pair) * kBuckets * 4 > budget_) chunk_pairs_ /= 2;
}

template <typename Key>
BasicSegmentBuilder<Key>::~BasicSegmentBuilder() = default;

template <typename Key>
uint64_t BasicSegmentBuilder<Key>::HeldBytes() const {
  return (uint64_t(chunks_.size()) * chunk_pairs_ + sorted_.capacity() + scratch_.capacity()) * sizeof(Pair);
}

template <typename Key>
Status BasicSegmentBuilder<Key>::Add(uint32_t doc, const Key* keys, size_t n) {
  if (int64_t(doc) < last_doc_) docs_in_order_ = false;
  last_doc_ = doc;
  id_begin_ = std::min<uint64_t>(id_begin_, doc);
  id_end_ = std::max<uint64_t>(id_end_, uint64_t(doc) + 1);
  for (size_t i = 0; i < n; i++) {
    const Key k = keys[i];
    Bucket& bk = buckets_[std::min<uint64_t>(uint64_t(k) >> shift_, kBuckets - 1)];
    if (bk.size == bk.chunks.size() * chunk_pairs_) {
      // A new chunk. Within the budget: the chunks held and the sort scratch of the largest bucket (twice
      // its chunks' capacity); buckets grow only chunk by chunk, so this check bounds the build.
      if (budget_) {
        const uint64_t chunks = std::max<uint64_t>(chunks_.size(), used_chunks_ + 1);
        const uint64_t biggest = std::max<uint64_t>(max_bucket_, bk.chunks.size() + 1);
        if ((chunks + 2 * biggest) * chunk_pairs_ * sizeof(Pair) > budget_ && used_chunks_ > 0) {
          Status s = Spill();
          if (!s.ok()) return s;
        }
      }
      if (free_chunks_.empty()) {
        free_chunks_.push_back(uint32_t(chunks_.size()));
        chunks_.emplace_back(new Pair[chunk_pairs_]);
      }
      bk.chunks.push_back(free_chunks_.back());
      free_chunks_.pop_back();
      used_chunks_++;
      max_bucket_ = std::max(max_bucket_, bk.chunks.size());
      peak_ = std::max(peak_, HeldBytes() + 2 * max_bucket_ * chunk_pairs_ * sizeof(Pair));
    }
    chunks_[bk.chunks.back()][bk.size % chunk_pairs_] = PairOf<Key>::Make(k, doc);
    bk.size++;
  }
  return Status::Ok();
}

// Sorts bucket b by (key, doc) into sorted_ and drops repeats. When the docs came in order, a stable LSD
// radix sort on the key bits that differ within the bucket (11 per pass) gives the same order as a full
// sort, in a few linear passes.
template <typename Key>
void BasicSegmentBuilder<Key>::SortBucket(size_t b) {
  using P = PairOf<Key>;
  Bucket& bk = buckets_[b];
  sorted_.resize(bk.size);
  Key lo = ~Key(0), hi = 0;
  for (size_t c = 0; c < bk.chunks.size(); c++) {
    const size_t n = std::min<size_t>(chunk_pairs_, bk.size - c * chunk_pairs_);
    const Pair* src = chunks_[bk.chunks[c]].get();
    std::copy(src, src + n, sorted_.begin() + c * chunk_pairs_);
    free_chunks_.push_back(bk.chunks[c]);
  }
  used_chunks_ -= bk.chunks.size();
  bk.chunks.clear();
  bk.size = 0;
  if (!docs_in_order_ || sorted_.size() < 256) {
    std::sort(sorted_.begin(), sorted_.end());
  } else {
    for (const Pair& v : sorted_) {
      lo = std::min(lo, P::KeyOf(v));
      hi = std::max(hi, P::KeyOf(v));
    }
    const unsigned bits = BitWidth(uint64_t(lo ^ hi));
    scratch_.resize(sorted_.size());
    size_t count[1 << 11];
    for (unsigned shift = 0; shift < bits; shift += 11) {
      std::fill(count, count + (1 << 11), 0);
      for (const Pair& v : sorted_) count[(P::KeyOf(v) >> shift) & 2047]++;
      size_t at = 0;
      for (auto& c : count) {
        const size_t k = c;
        c = at;
        at += k;
      }
      for (const Pair& v : sorted_) scratch_[count[(P::KeyOf(v) >> shift) & 2047]++] = v;
      sorted_.swap(scratch_);
    }
  }
  sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
}

template <typename Key>
Status BasicSegmentBuilder<Key>::Spill() {
  if (files_.empty()) {
    files_.push_back(std::make_unique<lsh::TempFile>());
    Status s = files_.back()->Create(tmp_.empty() ? "." : tmp_, "pst-run");
    if (!s.ok()) return s;
  }
  lsh::TempFile& f = *files_.back();
  Run run{files_.size() - 1, f.size() / sizeof(Pair), std::vector<uint64_t>(kBuckets + 1)};
  uint64_t at = 0;
  sorted_.reserve(max_bucket_ * chunk_pairs_);
  scratch_.reserve(max_bucket_ * chunk_pairs_);
  for (size_t b = 0; b < kBuckets; b++) {
    run.bucket[b] = at;
    if (buckets_[b].size == 0) continue;
    SortBucket(b);
    Status s = f.Append(sorted_.data(), sorted_.size() * sizeof(Pair));
    if (!s.ok()) return s;
    at += sorted_.size();
  }
  run.bucket[kBuckets] = at;
  runs_.push_back(std::move(run));
  std::vector<Pair>().swap(sorted_);
  std::vector<Pair>().swap(scratch_);
  docs_in_order_ = true;
  last_doc_ = -1;
  max_bucket_ = 0;
  return Status::Ok();
}

// k-way merge of a group of runs, bucket by bucket: on_bucket(b) before bucket b's pairs, emit() once per
// distinct pair, ascending. A bucket whose pairs from all the runs fit in the budget twice over (the usual
// case: a bucket is 1/256 of the key space) is read whole, run slice after run slice, and its sorted slices
// merged pairwise in memory (sequential passes, no heap); a larger bucket is merged through a heap over the
// runs, each read through a buffer of read_pairs pairs.
template <typename Key>
Status BasicSegmentBuilder<Key>::Merge(const std::vector<Run>& group, size_t read_pairs, const std::atomic<bool>* stop,
                                       const std::function<Status(size_t)>& on_bucket,
                                       const std::function<Status(const Pair&)>& emit) {
  std::vector<io::os::Fd> fds(files_.size(), io::os::kNoFd);
  auto close_all = [&] {
    for (auto fd : fds)
      if (fd != io::os::kNoFd) io::os::CloseQuietly(fd);
  };
  Status s;
  std::vector<RunCursor<Pair>> cur(group.size());
  for (size_t r = 0; r < group.size() && s.ok(); r++) {
    const size_t f = group[r].file;
    if (fds[f] == io::os::kNoFd) {
      s = files_[f]->Finish();
      if (s.ok()) s = io::os::OpenRead(files_[f]->path(), &fds[f]);
    }
    cur[r].fd = fds[f];
    cur[r].read_pairs = read_pairs;
  }
  peak_ = std::max(peak_, uint64_t(group.size()) * read_pairs * sizeof(Pair));
  using Item = std::pair<Pair, size_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
  std::vector<Pair> whole, scratch;    // a bucket read whole, and the merge's other half
  std::vector<size_t> bounds, bounds2;  // its sorted slices: [bounds[i], bounds[i + 1])
  Pair last{};
  bool have_last = false;
  auto emit_distinct = [&](const Pair& p) -> Status {
    if (have_last && p == last) return Status::Ok();
    last = p;
    have_last = true;
    return emit(p);
  };
  for (size_t b = 0; b < kBuckets && s.ok(); b++) {
    if (stop && stop->load()) {
      s = Status(Code::kCancelled, "cancelled");
      break;
    }
    s = on_bucket(b);
    uint64_t total = 0;
    for (const Run& run : group) total += run.bucket[b + 1] - run.bucket[b];
    if (s.ok() && (!budget_ || 2 * total * sizeof(Pair) <= budget_)) {
      whole.resize(total);
      bounds.assign(1, 0);
      for (size_t r = 0; r < group.size() && s.ok(); r++) {
        const uint64_t n = group[r].bucket[b + 1] - group[r].bucket[b];
        if (n == 0) continue;
        s = ReadPairs(cur[r].fd, files_[group[r].file]->path(), group[r].begin + group[r].bucket[b], n,
                      whole.data() + bounds.back());
        bounds.push_back(bounds.back() + n);
      }
      if (!s.ok()) break;
      peak_ = std::max(peak_, 2 * total * sizeof(Pair));
      // pairwise merges of neighbouring slices until one is left
      scratch.resize(total);
      while (bounds.size() > 2) {
        bounds2.assign(1, 0);
        for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
          const size_t lo = bounds[i], mid = bounds[i + 1], hi = i + 2 < bounds.size() ? bounds[i + 2] : mid;
          std::merge(whole.begin() + long(lo), whole.begin() + long(mid), whole.begin() + long(mid), whole.begin() + long(hi),
                     scratch.begin() + long(lo));
          bounds2.push_back(hi);
        }
        whole.swap(scratch);
        bounds.swap(bounds2);
      }
      for (size_t i = 0; i < total && s.ok(); i++) s = emit_distinct(whole[i]);
      continue;
    }
    for (size_t r = 0; r < group.size() && s.ok(); r++) {
      cur[r].next = group[r].begin + group[r].bucket[b];
      cur[r].end = group[r].begin + group[r].bucket[b + 1];
      cur[r].buf.clear();
      cur[r].pos = 0;
      if (cur[r].next < cur[r].end) {
        s = cur[r].Fill(files_[group[r].file]->path());
        if (s.ok()) heap.push({cur[r].buf[0], r});
      }
    }
    while (!heap.empty() && s.ok()) {
      const Item it = heap.top();
      heap.pop();
      RunCursor<Pair>& c = cur[it.second];
      if (++c.pos == c.buf.size() && c.next < c.end) s = c.Fill(files_[group[it.second].file]->path());
      if (c.pos < c.buf.size()) heap.push({c.buf[c.pos], it.second});
      if (s.ok()) s = emit_distinct(it.first);
    }
  }
  close_all();
  return s;
}

template <typename Key>
Status BasicSegmentBuilder<Key>::Finish(const std::string& path, const std::atomic<bool>* stop) {
  using P = PairOf<Key>;
  BasicSegmentWriter<Key> w;
  Status s = id_end_ == 0 ? w.Open(path, tmp_, 0, 0) : w.Open(path, tmp_, uint32_t(id_begin_), id_end_);
  if (!s.ok()) return s;
  std::vector<uint32_t> ids;
  bool have = false;
  Key key = 0;
  auto emit = [&](const Pair& p) -> Status {
    const Key k = P::KeyOf(p);
    if (have && k != key) {
      Status st = w.Add(key, ids.data(), ids.size());
      ids.clear();
      if (!st.ok()) return st;
    }
    have = true;
    key = k;
    ids.push_back(P::DocOf(p));
    return Status::Ok();
  };
  if (runs_.empty()) {
    sorted_.reserve(max_bucket_ * chunk_pairs_);
    scratch_.reserve(max_bucket_ * chunk_pairs_);
    for (size_t b = 0; b < kBuckets && s.ok(); b++) {
      if (stop && stop->load()) s = Status(Code::kCancelled, "cancelled");
      if (!s.ok() || buckets_[b].size == 0) continue;
      SortBucket(b);
      for (const Pair& p : sorted_) {
        s = emit(p);
        if (!s.ok()) break;
      }
    }
  } else {
    if (used_chunks_ > 0) s = Spill();
    chunks_.clear();
    free_chunks_.clear();
    // Fan-in: every run of the final merge gets a read buffer of at least kMinRead pairs within the
    // budget; more runs than that are first merged in groups into longer runs (in a new run file).
    constexpr size_t kMinRead = 512;
    const uint64_t fan_in = budget_ ? std::max<uint64_t>(2, budget_ / (kMinRead * sizeof(Pair))) : ~uint64_t(0);
    while (s.ok() && runs_.size() > fan_in) {
      auto out = std::make_unique<lsh::TempFile>();
      s = out->Create(tmp_.empty() ? "." : tmp_, "pst-run");
      std::vector<Run> merged;
      std::vector<Pair> buf;
      for (size_t g = 0; g < runs_.size() && s.ok(); g += fan_in) {
        std::vector<Run> group(runs_.begin() + g, runs_.begin() + std::min<size_t>(runs_.size(), g + fan_in));
        Run run{files_.size(), out->size() / sizeof(Pair), std::vector<uint64_t>(kBuckets + 1)};
        uint64_t at = 0;
        s = Merge(group, kMinRead, stop, [&](size_t b) { run.bucket[b] = at; return Status::Ok(); },
                  [&](const Pair& p) {
                    buf.push_back(p);
                    at++;
                    if (buf.size() < 8192) return Status::Ok();
                    Status st = out->Append(buf.data(), buf.size() * sizeof(Pair));
                    buf.clear();
                    return st;
                  });
        if (s.ok()) s = out->Append(buf.data(), buf.size() * sizeof(Pair));
        buf.clear();
        run.bucket[kBuckets] = at;
        merged.push_back(std::move(run));
      }
      if (!s.ok()) break;
      // the new file takes the place of the old ones (removed)
      files_.clear();
      files_.push_back(std::move(out));
      for (auto& r : merged) r.file = 0;
      runs_ = std::move(merged);
      merge_passes_++;
    }
    if (s.ok()) {
      const size_t read_pairs = budget_ ? size_t(std::min<uint64_t>(
                                              kReadPairs, std::max<uint64_t>(kMinRead, budget_ / (runs_.size() * sizeof(Pair)))))
                                        : kReadPairs;
      s = Merge(runs_, read_pairs, stop, [](size_t) { return Status::Ok(); }, emit);
    }
  }
  if (s.ok() && have) s = w.Add(key, ids.data(), ids.size());
  files_.clear();
  runs_.clear();
  chunks_.clear();
  free_chunks_.clear();
  std::vector<Pair>().swap(sorted_);
  std::vector<Pair>().swap(scratch_);
  if (!s.ok()) return s;
  return w.Commit();
}

// --------------------------------------------------------------------------------------------- reader

template <typename Key>
Status BasicSegment<Key>::Open(const std::string& path, bool verify) {
  Status s = file_.Open(path);
  if (!s.ok()) return s;
  return Attach(file_.data(), file_.size(), path, verify);
}

template <typename Key>
Status BasicSegment<Key>::Attach(const uint8_t* data, size_t size, const std::string& path, bool verify) {
  constexpr size_t kEntry = DirEntrySize<Key>();
  data_ = data;
  size_ = size;
  name_ = path;
  num_keys_ = num_posts_ = num_blocks_ = body_bits_ = universe_ = 0;
  block_crcs_ = nullptr;
  checked_.reset();
  io::FileHeader h;
  // version 2 has no key block checksums: its payload checksum is checked now, whatever verify says
  Status s = io::DecodeHeaderOnly(data_, size_, size_, kSegmentKind, kSegmentVersion, path, &h);
  if (!s.ok()) return s;
  version_ = h.version;
  if (version_ < 2) return Status(Code::kUnsupported, "'" + path + "': posting segment version " + std::to_string(version_) + " is no longer read (rebuild the index)");
  s = io::DecodeHeader(data_, size_, kSegmentKind, kSegmentVersion, verify || version_ < 3, path, &h);
  if (!s.ok()) return s;
  if (h.flags != KeyBits<Key>()) {
    if (h.flags == 32 || h.flags == 64)
      return Status(Code::kInvalidArgument, "'" + path + "' holds " + std::to_string(h.flags) + "-bit keys, not " +
                                                std::to_string(KeyBits<Key>()) + "-bit keys");
    return Corrupt(path, 36, "unknown key width " + std::to_string(h.flags));
  }
  if (h.payload_size < kTrailerSize) return Corrupt(path, io::kHeaderSize, "payload shorter than its trailer");
  const uint8_t* t = data_ + size_ - kTrailerSize;
  const uint64_t trailer_at = size_ - kTrailerSize;
  const uint64_t keys = LoadLe64(t), posts = LoadLe64(t + 8), body_bits = LoadLe64(t + 16);
  const uint64_t base = LoadLe64(t + 24), universe = LoadLe64(t + 32);
  if (keys != h.params[0] || posts != h.params[1]) return Corrupt(path, trailer_at, "trailer counts differ from the header");
  if (base >= (uint64_t(1) << 32) || universe > (uint64_t(1) << 32) - base)
    return Corrupt(path, trailer_at + 24, "doc id range beyond 2^32");
  const uint64_t blocks = keys / kBlockKeys + (keys % kBlockKeys != 0);
  const uint64_t body_bytes = body_bits / 8 + (body_bits % 8 != 0);
  const uint64_t room = h.payload_size - kTrailerSize;
  const size_t per_block = kEntry + (version_ >= 3 ? 4 : 0);
  if (body_bytes > room || blocks > (room - body_bytes) / per_block || (room - body_bytes) != blocks * per_block)
    return Corrupt(path, trailer_at, "section lengths do not add up to the file size");
  if (posts < keys || (keys == 0) != (posts == 0) || (keys > 0 && (universe == 0 || posts / keys > universe)) ||
      body_bits < posts)
    return Corrupt(path, trailer_at, "post count does not fit the keys, the id range or the body");
  num_keys_ = keys;
  num_posts_ = posts;
  num_blocks_ = blocks;
  body_bits_ = body_bits;
  id_base_ = uint32_t(base);
  universe_ = universe;
  body_ = data_ + io::kHeaderSize;
  dir_ = body_ + body_bytes;
  if (version_ >= 3) {
    block_crcs_ = dir_ + blocks * kEntry;
    checked_ = std::make_unique<std::atomic<uint64_t>[]>(size_t(blocks / 64 + 1));
  }
  // The directory, always (a lookup's binary search trusts it): its checksum (version 3: with the key block
  // checksums), first keys strictly ascending, key parts in order inside the body, k values in range.
  if (Crc32c(dir_, blocks * per_block) != LoadLe32(t + 44))
    return Corrupt(path, io::kHeaderSize + body_bytes, "directory checksum");
  for (uint64_t b = 0; b < blocks; b++) {
    const uint8_t* e = dir_ + b * kEntry;
    const uint64_t limit = b + 1 < blocks ? DirOffset(b + 1) : body_bits;
    if (e[sizeof(Key) + 8] > KeyBits<Key>() || e[sizeof(Key) + 9] > 32 || DirOffset(b) >= limit ||
        (b > 0 && DirKey(b) <= DirKey(b - 1)))
      return Corrupt(path, uint64_t(e - data_), "bad directory entry of key block " + std::to_string(b));
  }
  if (verify) {
    if (Crc32c(body_, body_bytes) != LoadLe32(t + 40)) return Corrupt(path, io::kHeaderSize, "body checksum");
    // Structure: blocks back to back (each block's lists start where the previous key block ended, the last
    // ends the body), keys ascending, every list decodes to its count.
    Block blk;
    std::vector<uint32_t> tmp;
    uint64_t end = 0;
    for (uint64_t b = 0; b < blocks; b++) {
      s = ReadBlock(b, &blk);
      if (!s.ok()) return s;
      if (blk.lists_begin != end) return Bad(blk.lists_begin, "key block " + std::to_string(b) + " does not follow the previous one");
      end = blk.keys_end;
      for (size_t j = 0; j < blk.n; j++) {
        tmp.clear();
        s = DecodeList(blk, j, &tmp);
        if (!s.ok()) return s;
      }
    }
    if (end != body_bits) return Bad(end, "bits after the last key block");
  }
  return Status::Ok();
}

template <typename Key>
Status BasicSegment<Key>::CheckPayload() const {
  io::FileHeader h;
  return io::DecodeHeader(data_, size_, kSegmentKind, kSegmentVersion, true, name_, &h);
}

template <typename Key>
Status BasicSegment<Key>::Bad(uint64_t bit, const std::string& what) const {
  return Corrupt(name_, io::kHeaderSize + bit / 8, what);
}

template <typename Key>
Key BasicSegment<Key>::DirKey(uint64_t b) const {
  return LoadKey<Key>(dir_ + b * DirEntrySize<Key>());
}

template <typename Key>
uint64_t BasicSegment<Key>::DirOffset(uint64_t b) const {
  return LoadLe64(dir_ + b * DirEntrySize<Key>() + sizeof(Key));
}

template <typename Key>
Status BasicSegment<Key>::ReadBlock(uint64_t b, Block* out) const {
  Status s = DecodeBlock(b, out);
  if (!s.ok() || !block_crcs_) return s;
  std::atomic<uint64_t>& w = checked_[size_t(b / 64)];
  const uint64_t bit = uint64_t(1) << (b % 64);
  if (w.load(std::memory_order_relaxed) & bit) return s;
  if (BlockCrc(*out) != LoadLe32(block_crcs_ + 4 * b))
    return Corrupt(name_, io::kHeaderSize + out->lists_begin / 8, "checksum of key block " + std::to_string(b));
  w.fetch_or(bit, std::memory_order_relaxed);
  return s;
}

template <typename Key>
Status BasicSegment<Key>::DecodeBlock(uint64_t b, Block* out) const {
  if (b >= num_blocks_) return Status(Code::kInternal, "key block index out of range");
  const uint8_t* e = dir_ + b * DirEntrySize<Key>();
  const uint64_t entry_at = uint64_t(e - data_);
  const uint64_t kp = DirOffset(b);
  const unsigned kg = e[sizeof(Key) + 8], kc = e[sizeof(Key) + 9];
  const uint64_t limit = b + 1 < num_blocks_ ? DirOffset(b + 1) : body_bits_;
  if (kg > KeyBits<Key>() || kc > 32 || kp >= limit || limit > body_bits_)
    return Corrupt(name_, entry_at, "bad directory entry of key block " + std::to_string(b));
  const BitReader r(body_, body_bits_);
  const size_t n = size_t(std::min<uint64_t>(kBlockKeys, num_keys_ - b * kBlockKeys));
  const uint64_t universe = universe_;
  uint64_t pos = kp, v = 0, lists = 0;
  Key key = DirKey(b);
  const char* bad = nullptr;
  // Rice codes: the fast path (the code inside one 64-bit load, well before limit) inline, with pos in a
  // register; the rest through BitReader::Rice.
  const uint64_t mask_g = kg >= 64 ? ~uint64_t(0) : (uint64_t(1) << kg) - 1, mask_c = (uint64_t(1) << kc) - 1;
  const uint8_t* body = body_;
  const uint64_t fast_end = limit >= 64 ? limit - 64 : 0;
  auto rice = [&](unsigned k, uint64_t mask) __attribute__((always_inline)) -> bool {
    if (k <= 56 && pos <= fast_end) {
      const uint64_t w = Load64(body + (pos >> 3)) >> (pos & 7);
      const uint64_t rest = w >> k;
      if (rest != 0) {
        const unsigned q = unsigned(__builtin_ctzll(rest));
        v = uint64_t(q) << k | (w & mask);
        pos += k + q + 1;
        return true;
      }
    }
    return r.Rice(&pos, limit, k, &v);
  };
  for (size_t i = 0; i < n; i++) {
    if (i > 0) {
      if (!rice(kg, mask_g)) {
        bad = "bad key gap";
        break;
      }
      if (v >= Key(~Key(0) - key)) {
        bad = "key overflow";
        break;
      }
      key = Key(key + v + 1);
    }
    if (!rice(kc, mask_c)) {
      bad = "bad count";
      break;
    }
    if (v >= universe) {
      bad = "count above the id range";
      break;
    }
    out->keys[i] = key;
    out->counts[i] = uint32_t(v + 1);
    out->offsets[i] = lists;  // relative for now
    lists += EfBits(v + 1, universe);
  }
  if (bad) return Bad(pos, std::string(bad) + " in key block " + std::to_string(b));
  if (b + 1 < num_blocks_ && DirKey(b + 1) <= key)
    return Corrupt(name_, entry_at + DirEntrySize<Key>(), "keys not ascending after key block " + std::to_string(b));
  if (lists > kp || (b == 0 && lists != kp) || (b > 0 && kp - lists <= DirOffset(b - 1)))
    return Corrupt(name_, entry_at, "the lists of key block " + std::to_string(b) + " do not fit before it");
  out->first = b * kBlockKeys;
  out->n = n;
  out->lists_begin = kp - lists;
  out->keys_end = pos;
  for (size_t i = 0; i < n; i++) out->offsets[i] += out->lists_begin;
  return Status::Ok();
}

template <typename Key>
Status BasicSegment<Key>::DecodeList(const Block& block, size_t j, std::vector<uint32_t>* out) const {
  const size_t n = block.counts[j];
  const size_t at = out->size();
  out->resize(at + n);
  if (!BitReader(body_, body_bits_).EliasFano(block.offsets[j], n, universe_, id_base_, out->data() + at)) {
    out->resize(at);
    return Bad(block.offsets[j], "bad list of key " + Hex(block.keys[j]));
  }
  return Status::Ok();
}

template <typename Key>
int64_t BasicSegment<Key>::BlockOf(Key key) const {
  if (num_blocks_ == 0 || key < DirKey(0)) return -1;
  uint64_t lo = 0, hi = num_blocks_;  // the last block whose first key is <= key: DirKey(lo) <= key < DirKey(hi)
  if (num_blocks_ > 64) {
    // Keys are hashes, spread evenly: interpolation lands within about sqrt(span) blocks of the answer, so a
    // window of that width around the guess (two probes) shrinks the span to its square root; two rounds,
    // then bisection (which alone takes ~log2(blocks) probes into a directory far larger than the caches).
    // Uneven keys only cost the probes: each probe still narrows [lo, hi).
    if (DirKey(num_blocks_ - 1) <= key) return int64_t(num_blocks_ - 1);
    hi = num_blocks_ - 1;
    for (int round = 0; round < 2 && hi - lo > 64; round++) {
      const Key kl = DirKey(lo), kh = DirKey(hi);
      const uint64_t span = hi - lo;
      const double f = double(key - kl) / double(kh - kl);
      const uint64_t g = lo + std::min(span - 1, uint64_t(f * double(span)));
      const uint64_t w = uint64_t(std::sqrt(double(span))) + 2;
      const uint64_t a = g > lo + w ? g - w : lo + 1;
      if (DirKey(a) > key) {
        hi = a;
        continue;
      }
      lo = a;
      const uint64_t b = g + w < hi ? g + w : hi - 1;
      if (b <= lo) continue;
      if (DirKey(b) > key)
        hi = b;
      else
        lo = b;
    }
  }
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (DirKey(mid) <= key)
      lo = mid;
    else
      hi = mid;
  }
  return int64_t(lo);
}

template <typename Key>
Status BasicSegment<Key>::FindIn(Key key, Block* blk, int64_t* j) const {
  *j = -1;
  const int64_t b = BlockOf(key);
  if (b < 0) return Status::Ok();
  Status s = ReadBlock(uint64_t(b), blk);
  if (!s.ok()) return s;
  const Key* k = std::lower_bound(blk->keys, blk->keys + blk->n, key);
  if (k != blk->keys + blk->n && *k == key) *j = k - blk->keys;
  return Status::Ok();
}

template <typename Key>
Status BasicSegment<Key>::Find(Key key, int64_t* index) const {
  Block blk;
  int64_t j = -1;
  Status s = FindIn(key, &blk, &j);
  *index = j < 0 ? -1 : int64_t(blk.first) + j;
  return s;
}

template <typename Key>
Status BasicSegment<Key>::FindList(Key key, std::vector<uint32_t>* out) const {
  Block blk;
  int64_t j = -1;
  Status s = FindIn(key, &blk, &j);
  if (!s.ok() || j < 0) return s;
  return DecodeList(blk, size_t(j), out);
}

template <typename Key>
Status BasicSegment<Key>::Entry(uint64_t i, KeyEntry* out) const {
  if (i >= num_keys_) return Status(Code::kInternal, "key index out of range");
  Block blk;
  Status s = ReadBlock(i / kBlockKeys, &blk);
  if (!s.ok()) return s;
  const size_t j = size_t(i % kBlockKeys);
  *out = KeyEntry{blk.keys[j], blk.counts[j], blk.offsets[j]};
  return Status::Ok();
}

template <typename Key>
int64_t BasicSegment<Key>::Find(Key key) const {
  int64_t i = -1;
  return Find(key, &i).ok() ? i : -1;
}

template <typename Key>
BasicKeyEntry<Key> BasicSegment<Key>::entry(uint64_t i) const {
  KeyEntry e{0, 0, 0};
  if (!Entry(i, &e).ok()) return KeyEntry{0, 0, 0};
  return e;
}

template <typename Key>
Status BasicSegment<Key>::Decode(uint64_t i, std::vector<uint32_t>* out) const {
  if (i >= num_keys_) return Status(Code::kInternal, "key index out of range");
  Block blk;
  Status s = ReadBlock(i / kBlockKeys, &blk);
  if (!s.ok()) return s;
  return DecodeList(blk, size_t(i % kBlockKeys), out);
}

// ---------------------------------------------------------------------------------------------- index

namespace {

std::string ManifestPath(const std::string& dir) { return dir + "/MANIFEST"; }

bool Contains(const std::vector<uint32_t>& v, uint32_t x) { return std::binary_search(v.begin(), v.end(), x); }

}  // namespace

template <typename Key>
Status BasicPostingIndex<Key>::Create(const std::string& dir) {
  Status made = io::os::MakeDir(dir);
  if (!made.ok()) return made;
  io::os::PathInfo manifest;
  made = io::os::StatPath(ManifestPath(dir), &manifest);
  if (!made.ok()) return made;
  if (manifest.exists) return Status(Code::kInvalidArgument, "'" + dir + "' already holds an index");
  BasicPostingIndex x;
  x.dir_ = dir;
  return x.WriteManifest({});
}

template <typename Key>
Status BasicPostingIndex<Key>::WriteManifest(const std::vector<std::string>& names, const std::string* commit_data) {
  const std::string& data = commit_data ? *commit_data : commit_data_;
  std::vector<uint8_t> p(24);
  StoreLe64(p.data(), generation_);
  StoreLe32(p.data() + 8, next_id_);
  StoreLe32(p.data() + 12, uint32_t(names.size()));
  StoreLe32(p.data() + 16, uint32_t(tombstones_.size()));
  StoreLe32(p.data() + 20, uint32_t(free_.size()));
  auto put32 = [&](uint32_t v) {
    uint8_t b[4];
    StoreLe32(b, v);
    p.insert(p.end(), b, b + 4);
  };
  for (const auto& n : names) {
    put32(uint32_t(n.size()));
    p.insert(p.end(), n.begin(), n.end());
  }
  for (uint32_t v : tombstones_) put32(v);
  for (uint32_t v : free_) put32(v);
  if (!data.empty()) {
    if (data.size() > 0xFFFFFFFFull) return Status(Code::kInvalidArgument, "commit data larger than 4 GiB");
    put32(uint32_t(data.size()));
    p.insert(p.end(), data.begin(), data.end());
  }
  io::FileHeader h;
  std::memcpy(h.kind, kManifestKind, 4);
  h.version = data.empty() ? 2 : 3;
  h.flags = KeyBits<Key>();
  h.payload_size = p.size();
  h.payload_crc = Crc32c(p.data(), p.size());
  h.params[0] = generation_;
  h.params[1] = names.size();
  uint8_t hb[io::kHeaderSize];
  io::EncodeHeader(h, hb);
  io::AtomicFile f;
  Status s = f.Open(ManifestPath(dir_));
  if (s.ok()) s = f.Write(hb, sizeof hb);
  if (s.ok()) s = f.Write(p.data(), p.size());
  if (s.ok()) s = f.Commit();
  if (s.ok() && commit_data) commit_data_ = *commit_data;
  return s;
}

template <typename Key>
Status BasicPostingIndex<Key>::Open(const std::string& dir, bool verify) {
  dir_ = dir;
  const std::string mp = ManifestPath(dir);
  std::string m;
  Status s = io::ReadFile(mp, &m);
  if (!s.ok()) return s;
  const uint8_t* d = reinterpret_cast<const uint8_t*>(m.data());
  io::FileHeader h;
  s = io::DecodeHeader(d, m.size(), kManifestKind, kManifestVersion, true, mp, &h);
  if (!s.ok()) return s;
  if (h.flags != KeyBits<Key>()) {
    if (h.flags == 32 || h.flags == 64)
      return Status(Code::kInvalidArgument, "'" + dir + "' holds an index of " + std::to_string(h.flags) +
                                                "-bit keys, not " + std::to_string(KeyBits<Key>()) + "-bit keys");
    return Corrupt(mp, 36, "unknown key width " + std::to_string(h.flags));
  }
  const uint8_t* p = d + io::kHeaderSize;
  const uint8_t* end = d + m.size();  // version 3: moved back to the end of the id lists below
  if (end - p < 24) return Corrupt(mp, io::kHeaderSize, "manifest shorter than its counts");
  generation_ = LoadLe64(p);
  next_id_ = LoadLe32(p + 8);
  const uint32_t nseg = LoadLe32(p + 12), ntomb = LoadLe32(p + 16), nfree = LoadLe32(p + 20);
  p += 24;
  names_.clear();
  segs_.clear();
  for (uint32_t i = 0; i < nseg; i++) {
    if (end - p < 4) return Corrupt(mp, p - d, "truncated segment name");
    const uint32_t len = LoadLe32(p);
    p += 4;
    if (uint64_t(end - p) < len || len == 0 || len > 255) return Corrupt(mp, p - d, "bad segment name length");
    std::string name(reinterpret_cast<const char*>(p), len);
    if (name.find('/') != std::string::npos || name[0] == '.') return Corrupt(mp, p - d, "bad segment name");
    p += len;
    names_.push_back(name);
  }
  const uint64_t id_bytes = 4ull * (uint64_t(ntomb) + nfree);
  commit_data_.clear();
  if (h.version >= 3) {
    // version 3: u32 length, then the commit data, after the id lists
    if (uint64_t(end - p) < id_bytes + 4) return Corrupt(mp, p - d, "manifest shorter than its id lists and commit data");
    const uint32_t len = LoadLe32(p + id_bytes);
    if (uint64_t(end - p) != id_bytes + 4 + len) return Corrupt(mp, p + id_bytes - d, "commit data length does not fill the manifest");
    commit_data_.assign(reinterpret_cast<const char*>(p + id_bytes + 4), len);
    end = p + id_bytes;
  }
  if (uint64_t(end - p) != id_bytes) return Corrupt(mp, p - d, "id lists do not fill the manifest");
  tombstones_.resize(ntomb);
  free_.resize(nfree);
  for (auto& v : tombstones_) v = LoadLe32(p), p += 4;
  for (auto& v : free_) v = LoadLe32(p), p += 4;
  auto check = [&](const std::vector<uint32_t>& v) {
    for (size_t i = 0; i < v.size(); i++)
      if (v[i] >= next_id_ || (i > 0 && v[i] <= v[i - 1])) return false;
    return true;
  };
  if (!check(tombstones_) || !check(free_)) return Corrupt(mp, io::kHeaderSize, "id lists not ascending or out of range");
  for (const auto& n : names_) {
    auto seg = std::make_unique<Segment>();
    s = seg->Open(dir + "/" + n, verify);
    if (!s.ok()) return s;
    segs_.push_back(std::move(seg));
  }
  return Status::Ok();
}

template <typename Key>
bool BasicPostingIndex<Key>::IsLive(uint32_t id) const {
  return id < next_id_ && !Contains(tombstones_, id) && !Contains(free_, id);
}

template <typename Key>
uint64_t BasicPostingIndex<Key>::live_docs() const { return next_id_ - tombstones_.size() - free_.size(); }

template <typename Key>
Status BasicPostingIndex<Key>::Busy() const {
  if (appending_) return Status(Code::kInvalidArgument, "'" + dir_ + "': an append is in progress");
  return Status::Ok();
}

template <typename Key>
Status BasicPostingIndex<Key>::StartAppend(uint64_t memory_bytes, const std::string& tmp_dir, unsigned key_bits,
                                           std::unique_ptr<Appender>* out) {
  Status s = Busy();
  if (!s.ok()) return s;
  // spill runs go to tmp_dir, else into the index folder (never the working directory)
  out->reset(new Appender(this, memory_bytes, tmp_dir.empty() ? dir_ : tmp_dir, key_bits));
  appending_ = true;
  return Status::Ok();
}

template <typename Key>
BasicPostingIndex<Key>::Appender::~Appender() {
  if (!done_) ix_->appending_ = false;
}

template <typename Key>
Status BasicPostingIndex<Key>::Appender::Add(const Key* keys, size_t n, uint32_t* id) {
  if (done_) return Status(Code::kInternal, "appender already committed");
  const auto& fr = ix_->free_;
  if (reused_ == fr.size() && uint64_t(ix_->next_id_) + (added_ - reused_) >= 0xffffffffull)
    return Status(Code::kInvalidArgument, "an index holds at most 2^32 - 1 documents");
  *id = reused_ < fr.size() ? fr[reused_++] : uint32_t(ix_->next_id_ + (added_ - reused_));
  added_++;
  return builder_.Add(*id, keys, n);
}

template <typename Key>
Status BasicPostingIndex<Key>::Appender::Commit(const std::atomic<bool>* stop, const std::string* commit_data) {
  if (done_) return Status(Code::kInternal, "appender already committed");
  BasicPostingIndex& x = *ix_;
  const std::string name = "seg-" + std::to_string(x.generation_ + 1) + ".pst";
  const std::string path = x.dir_ + "/" + name;
  Status s = builder_.Finish(path, stop);
  if (!s.ok()) return s;
  auto seg = std::make_unique<Segment>();
  s = seg->Open(path, false);
  if (!s.ok()) {
    io::os::RemoveFile(path);
    return s;
  }
  const uint64_t old_gen = x.generation_;
  const uint32_t old_next = x.next_id_;
  const std::vector<uint32_t> old_free = x.free_;
  x.generation_++;
  x.next_id_ = uint32_t(x.next_id_ + (added_ - reused_));
  x.free_.erase(x.free_.begin(), x.free_.begin() + reused_);
  std::vector<std::string> names = x.names_;
  names.push_back(name);
  s = x.WriteManifest(names, commit_data);
  if (!s.ok()) {
    x.generation_ = old_gen;
    x.next_id_ = old_next;
    x.free_ = old_free;
    io::os::RemoveFile(path);
    return s;
  }
  x.names_ = std::move(names);
  x.segs_.push_back(std::move(seg));
  done_ = true;
  x.appending_ = false;
  return Status::Ok();
}

template <typename Key>
Status BasicPostingIndex<Key>::Append(const std::vector<std::vector<Key>>& docs, uint64_t memory_bytes,
                                      const std::string& tmp_dir, std::vector<uint32_t>* ids,
                                      const std::atomic<bool>* stop, unsigned key_bits) {
  ids->clear();
  std::unique_ptr<Appender> a;
  Status s = StartAppend(memory_bytes, tmp_dir, key_bits, &a);
  for (size_t i = 0; i < docs.size() && s.ok(); i++) {
    uint32_t id = 0;
    s = a->Add(docs[i].data(), docs[i].size(), &id);
    ids->push_back(id);
  }
  if (s.ok()) s = a->Commit(stop);
  if (!s.ok()) ids->clear();
  return s;
}

template <typename Key>
Status BasicPostingIndex<Key>::Delete(const std::vector<uint32_t>& ids) {
  Status busy = Busy();
  if (!busy.ok()) return busy;
  std::vector<uint32_t> add(ids);
  std::sort(add.begin(), add.end());
  for (size_t i = 0; i < add.size(); i++) {
    if (!IsLive(add[i]) || (i > 0 && add[i] == add[i - 1]))
      return Status(Code::kInvalidArgument, "document " + std::to_string(add[i]) + " is not in the index");
  }
  const std::vector<uint32_t> old = tombstones_;
  std::vector<uint32_t> merged;
  std::merge(old.begin(), old.end(), add.begin(), add.end(), std::back_inserter(merged));
  tombstones_ = std::move(merged);
  Status s = WriteManifest(names_);
  if (!s.ok()) tombstones_ = old;
  return s;
}

namespace {

// Every key of the segments in [lo, last], ascending, with the union of its lists (ascending ids): a k-way
// merge of the segments' keys, one decoded key block per segment. Segment i's ids are shifted up by shift[i]
// (documents of other indexes taking the ids after this one's; 0 within one index).
template <typename Key, typename Fn>
Status MergeKeys(const std::vector<const BasicSegment<Key>*>& segs, const std::vector<uint32_t>& shift, Fn&& fn,
                 Key lo = 0, Key last = ~Key(0)) {
  struct Cursor {
    typename BasicSegment<Key>::Block blk;
    uint64_t b = 0;
    size_t j = 0;
    bool done = false;
  };
  std::vector<Cursor> cur(segs.size());
  auto load = [&](size_t i) -> Status {
    Cursor& c = cur[i];
    c.j = 0;
    if (c.b >= segs[i]->num_blocks()) {
      c.done = true;
      return Status::Ok();
    }
    return segs[i]->ReadBlock(c.b++, &c.blk);
  };
  for (size_t i = 0; i < segs.size(); i++) {
    Cursor& c = cur[i];
    c.b = lo == 0 ? 0 : segs[i]->BlockAtOrBefore(lo);
    Status s = load(i);
    while (s.ok() && !c.done && c.blk.keys[c.j] < lo)  // only the first block read holds keys below lo
      if (++c.j == c.blk.n) s = load(i);
    if (!s.ok()) return s;
  }
  std::vector<uint32_t> docs;
  for (;;) {
    bool any = false;
    Key key = 0;
    for (Cursor& c : cur) {
      if (c.done) continue;
      const Key k = c.blk.keys[c.j];
      if (k > last) {
        c.done = true;
        continue;
      }
      if (!any || k < key) key = k;
      any = true;
    }
    if (!any) return Status::Ok();
    docs.clear();
    bool sorted = true;  // the lists one after another are ascending (always so for parts, in part order)
    for (size_t i = 0; i < segs.size(); i++) {
      Cursor& c = cur[i];
      if (c.done || c.blk.keys[c.j] != key) continue;
      const size_t from = docs.size();
      Status s = segs[i]->DecodeList(c.blk, c.j, &docs);
      if (s.ok() && shift[i] != 0)
        for (size_t x = from; x < docs.size(); x++) docs[x] += shift[i];
      if (s.ok() && from > 0 && from < docs.size() && docs[from - 1] >= docs[from]) sorted = false;
      if (s.ok() && ++c.j == c.blk.n) s = load(i);
      if (!s.ok()) return s;
    }
    if (!sorted) std::sort(docs.begin(), docs.end());
    Status s = fn(key, docs);
    if (!s.ok()) return s;
  }
}

// Writes every key of the segments with its merged list (ids shifted as in MergeKeys; tombstoned ids dropped,
// keys left without ids skipped) into w. With more than one thread allowed, the merge (decoding) runs on a
// thread of its own and hands batches of lists to this thread, which encodes them (two batches in flight):
// the two halves of the work overlap. Otherwise one after the other.
template <typename Key>
Status WriteMerged(const std::vector<const BasicSegment<Key>*>& segs, const std::vector<uint32_t>& shift,
                   const std::vector<uint32_t>& tombstones, BasicSegmentWriter<Key>* w, const std::atomic<bool>* stop,
                   Key lo = 0, Key last = ~Key(0)) {
  std::vector<uint32_t> live;
  auto keep = [&](std::vector<uint32_t>& docs) -> std::vector<uint32_t>& {
    if (tombstones.empty()) return docs;
    live.clear();
    for (uint32_t d : docs)
      if (!std::binary_search(tombstones.begin(), tombstones.end(), d)) live.push_back(d);
    return live;
  };
  if (parallel::Concurrency() < 2) {
    return MergeKeys<Key>(segs, shift, [&](Key key, std::vector<uint32_t>& docs) -> Status {
      if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
      std::vector<uint32_t>& d = keep(docs);
      return d.empty() ? Status::Ok() : w->Add(key, d.data(), d.size());
    }, lo, last);
  }
  struct Batch {
    std::vector<Key> keys;
    std::vector<uint32_t> counts, ids;
  };
  constexpr size_t kBatchIds = size_t(1) << 18, kBatchKeys = size_t(1) << 16;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::unique_ptr<Batch>> full, spare;
  bool done = false, abort = false;
  Status produced;
  for (int i = 0; i < 3; i++) spare.push_back(std::make_unique<Batch>());
  std::thread producer([&] {
    std::unique_ptr<Batch> b;
    auto take = [&]() -> bool {  // a spare batch, or false when the writer gave up
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return abort || !spare.empty(); });
      if (abort) return false;
      b = std::move(spare.back());
      spare.pop_back();
      b->keys.clear();
      b->counts.clear();
      b->ids.clear();
      return true;
    };
    auto give = [&] {
      std::lock_guard<std::mutex> lk(mu);
      full.push_back(std::move(b));
      cv.notify_all();
    };
    Status st = take() ? Status::Ok() : Status(Code::kCancelled, "cancelled");
    if (st.ok()) {
      st = MergeKeys<Key>(segs, shift, [&](Key key, std::vector<uint32_t>& docs) -> Status {
        std::vector<uint32_t>& d = keep(docs);
        if (d.empty()) return Status::Ok();
        b->keys.push_back(key);
        b->counts.push_back(uint32_t(d.size()));
        b->ids.insert(b->ids.end(), d.begin(), d.end());
        if (b->ids.size() < kBatchIds && b->keys.size() < kBatchKeys) return Status::Ok();
        if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
        give();
        return take() ? Status::Ok() : Status(Code::kCancelled, "cancelled");
      }, lo, last);
    }
    std::lock_guard<std::mutex> lk(mu);
    if (st.ok() && b) full.push_back(std::move(b));
    produced = st;
    done = true;
    cv.notify_all();
  });
  Status s;
  for (size_t next = 0;;) {
    std::unique_ptr<Batch> b;
    {
      std::unique_lock<std::mutex> lk(mu);
      cv.wait(lk, [&] { return next < full.size() || done; });
      if (next >= full.size()) break;
      b = std::move(full[next++]);
    }
    size_t at = 0;
    for (size_t k = 0; k < b->keys.size() && s.ok(); k++) {
      s = w->Add(b->keys[k], b->ids.data() + at, b->counts[k]);
      at += b->counts[k];
    }
    std::lock_guard<std::mutex> lk(mu);
    spare.push_back(std::move(b));
    if (!s.ok()) abort = true;
    cv.notify_all();
    if (!s.ok()) break;
  }
  producer.join();
  if (!s.ok()) return s;
  return produced;
}

// Writes the merged lists of segs (WriteMerged) as the segment file `path` holding ids [lo, hi), and opens it.
template <typename Key>
Status WriteMergedSegment(const std::string& path, const std::string& tmp_dir, uint64_t lo, uint64_t hi,
                          const std::vector<const BasicSegment<Key>*>& segs, const std::vector<uint32_t>& shift,
                          const std::vector<uint32_t>& tombstones, const std::atomic<bool>* stop,
                          std::unique_ptr<BasicSegment<Key>>* out) {
  BasicSegmentWriter<Key> w;
  Status s = w.Open(path, tmp_dir, uint32_t(lo), hi);
  if (s.ok()) s = WriteMerged<Key>(segs, shift, tombstones, &w, stop);
  if (s.ok()) s = w.Commit();
  if (!s.ok()) return s;
  auto seg = std::make_unique<BasicSegment<Key>>();
  s = seg->Open(path, false);
  if (!s.ok()) {
    io::os::RemoveFile(path);
    return s;
  }
  *out = std::move(seg);
  return Status::Ok();
}

}  // namespace

template <typename Key>
Status BasicPostingIndex<Key>::ForEach(const std::function<Status(Key, const std::vector<uint32_t>&)>& fn) const {
  std::vector<const Segment*> segs;
  for (const auto& seg : segs_) segs.push_back(seg.get());
  std::vector<uint32_t> live;
  return MergeKeys<Key>(segs, std::vector<uint32_t>(segs.size(), 0), [&](Key key, std::vector<uint32_t>& docs) -> Status {
    if (tombstones_.empty()) return fn(key, docs);
    live.clear();
    for (uint32_t d : docs)
      if (!Contains(tombstones_, d)) live.push_back(d);
    return live.empty() ? Status::Ok() : fn(key, live);
  });
}

template <typename Key>
Status BasicPostingIndex<Key>::OpenParts(const std::vector<std::string>& part_dirs, uint64_t first, std::vector<BasicPostingIndex>* parts,
                                         std::vector<const Segment*>* segs, std::vector<uint32_t>* shift, uint64_t* next) {
  *parts = std::vector<BasicPostingIndex>(part_dirs.size());
  *next = first;
  for (size_t p = 0; p < part_dirs.size(); p++) {
    BasicPostingIndex& part = (*parts)[p];
    Status s = part.Open(part_dirs[p], false);
    if (!s.ok()) return s;
    if (!part.tombstones_.empty() || !part.free_.empty())
      return Status(Code::kInvalidArgument, "'" + part_dirs[p] + "' has deleted documents: only an index built by appends can be appended to another");
    for (const auto& seg : part.segs_) {
      segs->push_back(seg.get());
      shift->push_back(uint32_t(*next));
    }
    *next += part.next_id_;
    if (*next > 0xFFFFFFFFull)
      return Status(Code::kInvalidArgument, "appending '" + part_dirs[p] + "' would give ids beyond 2^32 - 1");
  }
  return Status::Ok();
}

template <typename Key>
Status BasicPostingIndex<Key>::AddSegment(const std::string& name, std::unique_ptr<Segment> seg, uint64_t next,
                                          const std::string* commit_data) {
  const std::string path = dir_ + "/" + name;
  const uint32_t old_next = next_id_;
  generation_++;
  next_id_ = uint32_t(next);
  std::vector<std::string> names = names_;
  names.push_back(name);
  Status s = WriteManifest(names, commit_data);
  if (!s.ok()) {
    generation_--;
    next_id_ = old_next;
    seg.reset();
    io::os::RemoveFile(path);
    return s;
  }
  names_ = std::move(names);
  segs_.push_back(std::move(seg));
  return Status::Ok();
}

template <typename Key>
Status BasicPostingIndex<Key>::AppendIndexes(const std::vector<std::string>& part_dirs, const std::atomic<bool>* stop,
                                             const std::string* commit_data) {
  Status s = Busy();
  if (!s.ok()) return s;
  if (!free_.empty())
    return Status(Code::kInvalidArgument, "'" + dir_ + "' has free ids (documents deleted and merged): other indexes cannot be appended to it");
  std::vector<BasicPostingIndex> parts;
  std::vector<const Segment*> segs;
  std::vector<uint32_t> shift;
  uint64_t next = 0;
  s = OpenParts(part_dirs, next_id_, &parts, &segs, &shift, &next);
  if (!s.ok()) return s;
  // no documents: no segment, as an append of none
  if (next == next_id_) return commit_data ? WriteManifest(names_, commit_data) : Status::Ok();
  // the segment an append of the parts' documents, in order, writes: ids [next_id_, next)
  const std::string name = "seg-" + std::to_string(generation_ + 1) + ".pst";
  std::unique_ptr<Segment> seg;
  s = WriteMergedSegment<Key>(dir_ + "/" + name, dir_, next_id_, next, segs, shift, {}, stop, &seg);
  if (!s.ok()) return s;
  return AddSegment(name, std::move(seg), next, commit_data);
}

template <typename Key>
Status BasicPostingIndex<Key>::WriteKeyRange(const std::vector<std::string>& part_dirs, uint32_t first_id, uint32_t range,
                                             uint32_t ranges, const std::string& out, const std::string& tmp_dir,
                                             const std::atomic<bool>* stop, uint64_t* keys, uint64_t* posts) {
  if (ranges == 0 || range >= ranges) return Status(Code::kInvalidArgument, "key range " + std::to_string(range) + " of " + std::to_string(ranges) + " does not exist");
  std::vector<BasicPostingIndex> parts;
  std::vector<const Segment*> segs;
  std::vector<uint32_t> shift;
  uint64_t next = 0;
  Status s = OpenParts(part_dirs, first_id, &parts, &segs, &shift, &next);
  if (!s.ok()) return s;
  // keys ceil(r 2^W / R) .. ceil((r + 1) 2^W / R) - 1: with 2^W = q R + m, r 2^W = r q R + r m (r m < R^2 < 2^64)
  const unsigned w = KeyBits<Key>();
  uint64_t q = 0, m = 0;
  if (w == 64) {
    q = ~uint64_t(0) / ranges;
    m = ~uint64_t(0) % ranges + 1;
    if (m == ranges) q++, m = 0;
  } else {
    q = (uint64_t(1) << w) / ranges;
    m = (uint64_t(1) << w) % ranges;
  }
  auto bound = [&](uint64_t r) -> uint64_t { return r * q + (r * m) / ranges + ((r * m) % ranges != 0); };
  const Key lo = Key(bound(range)), last = range + 1 == ranges ? ~Key(0) : Key(bound(uint64_t(range) + 1) - 1);
  BasicSegmentWriter<Key> wr;
  s = wr.Open(out, tmp_dir, first_id, next);
  if (s.ok()) s = WriteMerged<Key>(segs, shift, {}, &wr, stop, lo, last);
  if (s.ok()) {
    *keys = wr.keys();
    *posts = wr.posts();
    s = wr.Commit();
  }
  if (!s.ok()) wr.Abort();
  return s;
}

template <typename Key>
Status BasicPostingIndex<Key>::AppendKeyRanges(const std::vector<std::string>& paths, uint64_t documents, const std::atomic<bool>* stop,
                                               const std::string* commit_data) {
  Status s = Busy();
  if (!s.ok()) return s;
  if (!free_.empty())
    return Status(Code::kInvalidArgument, "'" + dir_ + "' has free ids (documents deleted and merged): other indexes cannot be appended to it");
  const uint64_t next = uint64_t(next_id_) + documents;
  if (next > 0xFFFFFFFFull) return Status(Code::kInvalidArgument, "'" + dir_ + "': appending " + std::to_string(documents) + " documents would give ids beyond 2^32 - 1");
  std::vector<std::unique_ptr<Segment>> ranges;
  for (const std::string& p : paths) {
    auto r = std::make_unique<Segment>();
    s = r->Open(p, false);
    if (s.ok()) s = r->CheckPayload();
    if (!s.ok()) return s;
    if (r->id_base() != next_id_ || r->id_universe() != documents)
      return Status(Code::kInvalidArgument, "'" + p + "' holds the lists of documents " + std::to_string(r->id_base()) + " .. " +
                                                std::to_string(uint64_t(r->id_base()) + r->id_universe()) + ", not " + std::to_string(next_id_) +
                                                " .. " + std::to_string(next) + ": it belongs to another put-together");
    ranges.push_back(std::move(r));
  }
  if (documents == 0) return commit_data ? WriteManifest(names_, commit_data) : Status::Ok();  // as AppendIndexes of none
  const std::string name = "seg-" + std::to_string(generation_ + 1) + ".pst";
  const std::string path = dir_ + "/" + name;
  BasicSegmentWriter<Key> w;
  s = w.Open(path, dir_, next_id_, next);
  bool any = false;
  Key last = 0;
  auto blk = std::make_unique<typename Segment::Block>();
  for (size_t r = 0; r < ranges.size() && s.ok(); r++) {
    const Segment& seg = *ranges[r];
    uint64_t end = 0;  // the key blocks back to back, the last one ending the body (as Open's verify checks)
    for (uint64_t b = 0; b < seg.num_blocks() && s.ok(); b++) {
      if (stop && stop->load()) {
        s = Status(Code::kCancelled, "cancelled");
        break;
      }
      s = seg.ReadBlock(b, blk.get());
      if (s.ok() && blk->lists_begin != end)
        s = Corrupt(seg.path(), io::kHeaderSize + blk->lists_begin / 8, "key block " + std::to_string(b) + " does not follow the previous one");
      end = blk->keys_end;
      if (s.ok() && b + 1 == seg.num_blocks() && end != seg.body_bits())
        s = Corrupt(seg.path(), io::kHeaderSize + end / 8, "bits after the last key block");
      if (s.ok() && any && blk->keys[0] <= last)
        s = Status(Code::kInvalidArgument, "'" + seg.path() + "': its keys do not come after those of the key range before it (ranges out of order or of another put-together)");
      if (s.ok()) s = w.AddEncodedRun(blk->keys, blk->counts, blk->n, seg.body(), blk->lists_begin);
      if (s.ok() && blk->n > 0) {
        any = true;
        last = blk->keys[blk->n - 1];
      }
    }
  }
  if (s.ok()) s = w.Commit();
  if (!s.ok()) {
    w.Abort();
    return s;
  }
  auto seg = std::make_unique<Segment>();
  s = seg->Open(path, false);
  if (!s.ok()) {
    io::os::RemoveFile(path);
    return s;
  }
  return AddSegment(name, std::move(seg), next, commit_data);
}

template <typename Key>
Status BasicPostingIndex<Key>::Lookup(Key key, std::vector<uint32_t>* out) const {
  out->clear();
  std::vector<uint32_t> docs;
  for (const auto& seg : segs_) {
    Status s = seg->FindList(key, &docs);
    if (!s.ok()) return s;
  }
  if (segs_.size() > 1) std::sort(docs.begin(), docs.end());
  for (uint32_t d : docs)
    if (!Contains(tombstones_, d)) out->push_back(d);
  return Status::Ok();
}

template <typename Key>
Status BasicPostingIndex<Key>::Merge(const std::atomic<bool>* stop) {
  Status busy = Busy();
  if (!busy.ok()) return busy;
  const std::string name = "seg-" + std::to_string(generation_ + 1) + ".pst";
  const std::string path = dir_ + "/" + name;
  // The id range of the live documents: what a fresh build of them would record.
  uint64_t lo = 0, hi = next_id_;
  while (lo < hi && !IsLive(uint32_t(lo))) lo++;
  while (hi > lo && !IsLive(uint32_t(hi - 1))) hi--;
  if (lo == hi) lo = hi = 0;
  std::vector<const Segment*> segs;
  for (const auto& sg : segs_) segs.push_back(sg.get());
  std::unique_ptr<Segment> seg;
  Status s = WriteMergedSegment<Key>(path, dir_, lo, hi, segs, std::vector<uint32_t>(segs.size(), 0), tombstones_, stop, &seg);
  if (!s.ok()) return s;
  const auto old_t = tombstones_, old_f = free_;
  std::vector<uint32_t> fr;
  std::merge(free_.begin(), free_.end(), tombstones_.begin(), tombstones_.end(), std::back_inserter(fr));
  free_ = std::move(fr);
  tombstones_.clear();
  generation_++;
  s = WriteManifest({name});
  if (!s.ok()) {
    generation_--;
    tombstones_ = old_t;
    free_ = old_f;
    io::os::RemoveFile(path);
    return s;
  }
  for (const auto& n : names_) io::os::RemoveFile((dir_ + "/" + n));
  names_ = {name};
  segs_.clear();
  segs_.push_back(std::move(seg));
  return Status::Ok();
}

Status IndexKeyBits(const std::string& dir, unsigned* bits) {
  const std::string mp = ManifestPath(dir);
  std::string m;
  Status s = io::ReadFile(mp, &m);
  if (!s.ok()) return s;
  io::FileHeader h;
  s = io::DecodeHeader(reinterpret_cast<const uint8_t*>(m.data()), m.size(), kManifestKind, kManifestVersion, true, mp, &h);
  if (!s.ok()) return s;
  if (h.flags != 32 && h.flags != 64) return Corrupt(mp, 36, "unknown key width " + std::to_string(h.flags));
  *bits = h.flags;
  return Status::Ok();
}

template class BasicSegmentWriter<uint32_t>;
template class BasicSegmentWriter<uint64_t>;
template class BasicSegmentBuilder<uint32_t>;
template class BasicSegmentBuilder<uint64_t>;
template class BasicSegment<uint32_t>;
template class BasicSegment<uint64_t>;
template class BasicPostingIndex<uint32_t>;
template class BasicPostingIndex<uint64_t>;

}  // namespace postings
}  // namespace neardup
