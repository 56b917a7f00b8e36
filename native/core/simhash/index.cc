#include "simhash/index.h"
#include "util/endian.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "io/header.h"
#include "parallel/pool.h"
#include "simhash/kernels.h"

namespace neardup {
namespace simhash {

// id -> slot, open addressing with linear probing and backward-shift deletion.
class IdMap {
 public:
  size_t size() const { return size_; }
  bool Find(uint64_t id, uint32_t* slot) const {
    if (vals_.empty()) return false;
    for (size_t i = Home(id);; i = (i + 1) & mask_) {
      if (vals_[i] == 0) return false;
      if (keys_[i] == id) {
        *slot = vals_[i] - 1;
        return true;
      }
    }
  }
  void Put(uint64_t id, uint32_t slot) {  // id must be absent
    if ((size_ + 1) * 2 > vals_.size()) Grow();
    size_t i = Home(id);
    while (vals_[i] != 0) i = (i + 1) & mask_;
    keys_[i] = id;
    vals_[i] = slot + 1;
    size_++;
  }
  bool Erase(uint64_t id, uint32_t* slot) {
    if (vals_.empty()) return false;
    size_t i = Home(id);
    while (true) {
      if (vals_[i] == 0) return false;
      if (keys_[i] == id) break;
      i = (i + 1) & mask_;
    }
    *slot = vals_[i] - 1;
    vals_[i] = 0;
    size_--;
    for (size_t j = (i + 1) & mask_; vals_[j] != 0; j = (j + 1) & mask_) {
      const size_t home = Home(keys_[j]);
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        keys_[i] = keys_[j];
        vals_[i] = vals_[j];
        vals_[j] = 0;
        i = j;
      }
    }
    return true;
  }
  void Reserve(size_t n) {
    while (n * 2 > vals_.size()) Grow();
  }

 private:
  size_t Home(uint64_t id) const { return static_cast<size_t>(fast64::Mix64(id)) & mask_; }
  void Grow() {
    std::vector<uint64_t> keys;
    std::vector<uint32_t> vals;
    keys.swap(keys_);
    vals.swap(vals_);
    const size_t cap = vals.empty() ? 64 : vals.size() * 2;
    keys_.assign(cap, 0);
    vals_.assign(cap, 0);
    mask_ = cap - 1;
    size_ = 0;
    for (size_t i = 0; i < vals.size(); i++)
      if (vals[i] != 0) Put(keys[i], vals[i] - 1);
  }
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> vals_;
  size_t mask_ = 0, size_ = 0;
};

namespace {

uint32_t SlotBits(uint64_t cnt) { return cnt <= 1 ? 0 : 64 - static_cast<uint32_t>(__builtin_clzll(cnt - 1)); }

// Directory bits for a table of cnt entries with a p-bit prefix: at most cnt/8 buckets (8..16 entries each,
// one or two cache lines; the directory, 0.25..0.5 bytes per key, stays in the L2 cache while a run is built).
uint32_t DirBits(uint64_t cnt, uint32_t p) {
  if (cnt < 16) return 0;
  const uint32_t lg = 63 - static_cast<uint32_t>(__builtin_clzll(cnt));
  return std::min<uint32_t>({p, lg - 3, 30});
}

void InsertionSort(uint32_t* a, size_t n) {
  for (size_t i = 1; i < n; i++) {
    const uint32_t x = a[i];
    size_t j = i;
    while (j > 0 && a[j - 1] > x) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

}  // namespace

Index::Index(uint32_t m, uint32_t k) : layout_(m, k) {}
Index::~Index() = default;

Status Index::Create(uint32_t m, uint32_t k, std::unique_ptr<Index>* out) {
  Status s = ValidateParams(m, k);
  if (!s.ok()) return s;
  out->reset(new Index(m, k));
  return Status::Ok();
}

void Index::Materialize() {
  if (!mapped_) return;
  fps_.assign(map_fps_, map_fps_ + count_);
  ids_.assign(map_ids_, map_ids_ + count_);
  mapped_ = false;
}

void Index::Undense() {
  if (!dense_) return;
  ids_.resize(count_);
  for (size_t i = 0; i < count_; i++) ids_[i] = i;
  dense_ = false;
}

void Index::EnsureIdMap() {
  if (idmap_) return;
  Undense();
  idmap_ = std::make_unique<IdMap>();
  idmap_->Reserve(count_ - dead_);
  const uint64_t* ids = Ids();
  for (size_t i = 0; i < count_; i++)
    if (Alive(i)) idmap_->Put(ids[i], static_cast<uint32_t>(i));
}

bool Index::Contains(uint64_t id) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (dense_) return id < count_ && Alive(static_cast<size_t>(id));
  EnsureIdMap();
  uint32_t slot;
  return idmap_->Find(id, &slot);
}

void Index::BuildRun(uint32_t lo, uint32_t hi, size_t slots, Run* run) const {
  Run r;
  r.lo = lo;
  r.hi = hi;
  const uint64_t cnt = hi - lo;
  if (cnt == 0) {
    *run = std::move(r);
    return;
  }
  r.s = SlotBits(cnt);
  const size_t T = layout_.tables();
  std::vector<uint64_t> off(T + 1, 0);
  std::vector<uint32_t> dbits(T);
  for (size_t t = 0; t < T; t++) {
    dbits[t] = DirBits(cnt, layout_.table(t).prefix_bits);
    off[t + 1] = off[t] + (uint64_t{1} << dbits[t]) + 1 + cnt;
  }
  r.storage.Allocate(off[T]);
  r.bytes = off[T] * sizeof(uint32_t);
  r.t.resize(T);
  const uint64_t* f = Fps();
  const uint32_t s = r.s, kw = 32 - s;
  parallel::ParallelFor(T, 1, std::max<size_t>(1, slots), [&](size_t b, size_t e, size_t) {
    for (size_t t = b; t < e; t++) {
      const Table& tb = layout_.table(t);
      const uint32_t d = dbits[t];
      uint32_t* dir = r.storage.data() + off[t];
      uint32_t* ent = dir + (uint64_t{1} << d) + 1;
      const size_t nb = size_t{1} << d;
      std::memset(dir, 0, (nb + 1) * sizeof(uint32_t));
      if (d > 0) {
        for (uint64_t i = lo; i < hi; i++) dir[(tb.PermutePrefix(f[i]) >> (64 - d)) + 1]++;
      } else {
        dir[1] = static_cast<uint32_t>(cnt);
      }
      for (size_t i = 1; i <= nb; i++) dir[i] += dir[i - 1];
      for (uint64_t i = lo; i < hi; i++) {
        const uint64_t perm = tb.Permute(f[i]);
        const size_t bucket = d > 0 ? static_cast<size_t>(perm >> (64 - d)) : 0;
        const uint64_t kb = kw > 0 ? (perm << d) >> (64 - kw) : 0;
        ent[dir[bucket]++] = static_cast<uint32_t>((kb << s) | (i - lo));
      }
      for (size_t i = nb; i >= 1; i--) dir[i] = dir[i - 1];
      dir[0] = 0;
      for (size_t i = 0; i < nb; i++) {
        const size_t len = dir[i + 1] - dir[i];
        if (len < 2) continue;
        if (len <= 32) InsertionSort(ent + dir[i], len);
        else std::sort(ent + dir[i], ent + dir[i + 1]);
      }
      r.t[t] = RunTable{d, dir, ent};
    }
  });
  *run = std::move(r);
}

void Index::CompactLocked(size_t slots) {
  Materialize();
  if (dead_ > 0 && dead_ == count_) {  // nothing left: back to the empty, dense state
    fps_.clear();
    ids_.clear();
    fps_.shrink_to_fit();
    ids_.shrink_to_fit();
    count_ = dead_ = 0;
    dense_ = true;
    idmap_.reset();
  }
  if (dead_ > 0) {
    Undense();  // compaction moves slots: ids are no longer the slots
    size_t w = 0;
    for (size_t i = 0; i < count_; i++) {
      if (!Alive(i)) continue;
      fps_[w] = fps_[i];
      ids_[w] = ids_[i];
      w++;
    }
    count_ = w;
    fps_.resize(w);
    ids_.resize(w);
    dead_ = 0;
    idmap_.reset();  // rebuilt on demand
  }
  alive_.assign((count_ + 63) / 64, ~uint64_t{0});
  RebuildMain(slots);
}

void Index::RebuildMain(size_t slots) {
  BuildRun(0, static_cast<uint32_t>(count_), slots, &main_);
  delta_ = Run();
  delta_.lo = delta_.hi = static_cast<uint32_t>(count_);
  map_.reset();  // every caller materialized first: nothing points into the file any more
}

void Index::Compact(size_t slots) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  CompactLocked(slots);
}

void Index::MergePolicy(size_t slots) {
  const size_t pending = count_ - main_.hi;
  if (pending > kBufferMax && pending * 8 > main_.hi) {
    RebuildMain(slots);
  } else if (count_ - delta_.hi > kBufferMax) {
    BuildRun(main_.hi, static_cast<uint32_t>(count_), slots, &delta_);
  }
}

Status Index::Insert(const uint64_t* ids, const uint64_t* fps, size_t n, size_t slots) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (n == 0) return Status::Ok();
  if (count_ + n >= UINT32_MAX)
    return Status(Code::kInvalidArgument, "an index holds at most 4294967294 entries (slots)");
  bool dense = dense_ && !mapped_;
  for (size_t i = 0; dense && i < n; i++) dense = ids[i] == count_ + i;
  if (dense) {  // ids are the next slots: nothing to look up, nothing to store
    fps_.insert(fps_.end(), fps, fps + n);
    const size_t old = count_;
    count_ += n;
    alive_.resize((count_ + 63) / 64, 0);
    for (size_t i = old; i < count_; i++) alive_[i >> 6] |= uint64_t{1} << (i & 63);
    MergePolicy(slots);
    return Status::Ok();
  }
  EnsureIdMap();
  idmap_->Reserve(idmap_->size() + n);
  for (size_t i = 0; i < n; i++) {
    uint32_t slot;
    if (idmap_->Find(ids[i], &slot)) {
      for (size_t j = 0; j < i; j++) idmap_->Erase(ids[j], &slot);
      const bool in_batch = slot >= count_;
      return Status(Code::kInvalidArgument, "id " + std::to_string(ids[i]) +
                                                (in_batch ? " appears twice in the batch" : " is already in the index") +
                                                " (remove it first to replace its fingerprint)");
    }
    idmap_->Put(ids[i], static_cast<uint32_t>(count_ + i));
  }
  Materialize();
  fps_.insert(fps_.end(), fps, fps + n);
  ids_.insert(ids_.end(), ids, ids + n);
  const size_t old = count_;
  count_ += n;
  alive_.resize((count_ + 63) / 64, 0);
  for (size_t i = old; i < count_; i++) alive_[i >> 6] |= uint64_t{1} << (i & 63);
  MergePolicy(slots);
  return Status::Ok();
}

Status Index::Remove(const uint64_t* ids, size_t n, size_t slots, size_t* removed) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (!dense_) EnsureIdMap();
  size_t r = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t slot;
    if (dense_) {
      if (ids[i] >= count_ || !Alive(static_cast<size_t>(ids[i]))) continue;
      slot = static_cast<uint32_t>(ids[i]);
    } else if (!idmap_->Erase(ids[i], &slot)) {
      continue;
    }
    alive_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
    dead_++;
    r++;
  }
  if (removed) *removed = r;
  if (dead_ > 0 && dead_ * 4 > count_) CompactLocked(slots);
  return Status::Ok();
}

void Index::ProbeStart(const Run& run, uint64_t q, Probe* p) const {
  const size_t T = layout_.tables();
  for (size_t t = 0; t < T; t++) {
    const RunTable& rt = run.t[t];
    const uint64_t perm = layout_.table(t).PermutePrefix(q);
    const uint32_t bucket = rt.d > 0 ? static_cast<uint32_t>(perm >> (64 - rt.d)) : 0;
    p[t].perm = perm;
    p[t].beg = bucket;
    __builtin_prefetch(rt.dir + bucket);
  }
}

void Index::ProbeRanges(const Run& run, Probe* p) const {
  const size_t T = layout_.tables();
  for (size_t t = 0; t < T; t++) {
    const RunTable& rt = run.t[t];
    const uint32_t bucket = p[t].beg;
    p[t].beg = rt.dir[bucket];
    p[t].end = rt.dir[bucket + 1];
    if (p[t].beg != p[t].end) {
      __builtin_prefetch(rt.ent + p[t].beg);
      __builtin_prefetch(rt.ent + p[t].end - 1);  // a bucket may span two lines
    }
  }
}

// Scans table t of run for entries within the distance of q, from its bucket's range [beg, end).
template <bool kAll>
NEARDUP_INLINE bool Index::ScanTable(const Run& run, size_t t, uint64_t q, uint64_t perm, size_t beg, size_t end,
                                     uint64_t* first, std::vector<uint32_t>* all) const {
  if (beg == end) return false;
  const uint64_t* f = Fps();
  const uint32_t k = layout_.distance();
  const uint32_t s = run.s, kw = 32 - s;
  const uint32_t smask = s == 32 ? 0xffffffffu : ((1u << s) - 1);
  const Table& tb = layout_.table(t);
  const RunTable& rt = run.t[t];
  const uint32_t pk = std::min(tb.prefix_bits - rt.d, kw);
  uint64_t lowkey = 0, highkey = uint64_t{1} << 32;
  if (pk > 0) {
    const uint64_t q32 = ((perm << rt.d) >> (64 - kw)) << s;
    const uint64_t span = uint64_t{1} << (32 - pk);
    lowkey = q32 & ~(span - 1);
    highkey = lowkey + span;
    const uint32_t lk = static_cast<uint32_t>(lowkey);
    if (end - beg > 64) {
      beg = static_cast<size_t>(std::lower_bound(rt.ent + beg, rt.ent + end, lk) - rt.ent);
    } else {  // a bucket's few entries: counted without branches (where the scan starts is unpredictable)
      size_t below = 0;
      for (size_t i = beg; i < end; i++) below += rt.ent[i] < lk;
      beg += below;
    }
  }
  for (size_t i = beg; i < end; i++) {
    const uint32_t x = rt.ent[i];
    if (x < lowkey) continue;
    if (x >= highkey) break;
    const size_t slot = run.lo + (x & smask);
    const uint64_t diff = f[slot] ^ q;
    if ((diff & tb.prefix_mask) != 0 || Pop(diff) > k || !Alive(slot)) continue;
    if (!kAll) {
      *first = IdAt(slot);
      return true;
    }
    if (layout_.IsCanonical(t, diff)) all->push_back(static_cast<uint32_t>(slot));
  }
  return false;
}

template <bool kAll, bool kFast>
NEARDUP_INLINE bool Index::Query(uint64_t q, const Probe* pre, uint64_t* first, std::vector<uint32_t>* all) const {
  const uint64_t* f = Fps();
  const uint32_t k = layout_.distance();
  const size_t T = layout_.tables();
  const Run* runs[2] = {&main_, &delta_};
  for (const Run* run : runs) {
    if (run->hi == run->lo) continue;
    if (pre != nullptr && run == &main_) {  // the batch pipeline has read the ranges already
      for (size_t t = 0; t < T; t++)
        if (ScanTable<kAll>(*run, t, q, pre[t].perm, pre[t].beg, pre[t].end, first, all)) return true;
      continue;
    }
    // Tables in chunks of kChunk: compute every bucket and prefetch its directory words, then read the
    // ranges and prefetch the entries, then scan. The cache misses of a chunk overlap instead of queueing.
    constexpr size_t kChunk = 16;
    for (size_t t0 = 0; t0 < T; t0 += kChunk) {
      const size_t t1 = std::min(T, t0 + kChunk);
      Probe p[kChunk];
      for (size_t t = t0; t < t1; t++) {
        const RunTable& rt = run->t[t];
        const uint64_t perm = layout_.table(t).PermutePrefix(q);
        const uint32_t bucket = rt.d > 0 ? static_cast<uint32_t>(perm >> (64 - rt.d)) : 0;
        p[t - t0].perm = perm;
        p[t - t0].beg = bucket;
        __builtin_prefetch(rt.dir + bucket);
      }
      for (size_t t = t0; t < t1; t++) {
        const RunTable& rt = run->t[t];
        const uint32_t bucket = p[t - t0].beg;
        p[t - t0].beg = rt.dir[bucket];
        p[t - t0].end = rt.dir[bucket + 1];
        if (p[t - t0].beg != p[t - t0].end) {
          __builtin_prefetch(rt.ent + p[t - t0].beg);
          __builtin_prefetch(rt.ent + p[t - t0].end - 1);
        }
      }
      for (size_t t = t0; t < t1; t++)
        if (ScanTable<kAll>(*run, t, q, p[t - t0].perm, p[t - t0].beg, p[t - t0].end, first, all)) return true;
    }
  }
  // The buffer: newest entries, scanned directly.
  const size_t b = delta_.hi;
  bool hit = false;
  auto on = [&](size_t i) {
    const size_t slot = b + i;
    if (hit || !Alive(slot)) return;
    if (!kAll) {
      *first = IdAt(slot);
      hit = true;
    } else {
      all->push_back(static_cast<uint32_t>(slot));
    }
  };
#if NEARDUP_X86_DISPATCH
  if (kFast) ScanWithinAvx2(f + b, count_ - b, q, k, on);
  else
#endif
    ScanWithinPortable(f + b, count_ - b, q, k, on);
  return hit || (kAll && !all->empty());
}

NEARDUP_SIMHASH_FAST bool Index::QueryFast(bool all, uint64_t q, const Probe* pre, uint64_t* first,
                                           std::vector<uint32_t>* out) const {
  return all ? Query<true, true>(q, pre, first, out) : Query<false, true>(q, pre, first, out);
}

bool Index::QueryDispatch(bool all, uint64_t q, const Probe* pre, uint64_t* first, std::vector<uint32_t>* out) const {
  if (UseFast()) return QueryFast(all, q, pre, first, out);
  return all ? Query<true, false>(q, pre, first, out) : Query<false, false>(q, pre, first, out);
}

// Queries [b, e) of q through a software pipeline over the main run: query i + 2D has its buckets computed
// and directory words prefetched, query i + D its ranges read and entries prefetched, query i is scanned.
// The misses of several queries overlap (one query's tables alone cannot keep enough of them in flight).
template <typename Fn>
void Index::Pipelined(const uint64_t* q, size_t b, size_t e, std::vector<Probe>* ring, Fn&& fn) const {
  constexpr size_t D = kPipelineDistance, R = 4 * D;  // R: a power of two > 2D
  const size_t T = layout_.tables();
  if (main_.hi == main_.lo) {
    for (size_t i = b; i < e; i++) fn(i, nullptr);
    return;
  }
  ring->resize(R * T);
  Probe* base = ring->data();
  for (size_t j = b; j < e + 2 * D; j++) {
    if (j < e) ProbeStart(main_, q[j], base + (j % R) * T);
    if (j >= b + D && j - D < e) ProbeRanges(main_, base + ((j - D) % R) * T);
    if (j >= b + 2 * D) fn(j - 2 * D, base + ((j - 2 * D) % R) * T);
  }
}

bool Index::FindFirst(uint64_t q, uint64_t* id) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return QueryDispatch(false, q, nullptr, id, nullptr);
}

void Index::FindAll(uint64_t q, std::vector<uint64_t>* ids) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<uint32_t> slots;
  ids->clear();
  QueryDispatch(true, q, nullptr, nullptr, &slots);
  for (uint32_t s : slots) ids->push_back(IdAt(s));
  std::sort(ids->begin(), ids->end());
}

Status Index::FindFirstBatch(const uint64_t* q, size_t n, size_t slots, const std::atomic<bool>* stop,
                             std::vector<uint64_t>* ids, std::vector<uint8_t>* found) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  ids->assign(n, 0);
  found->assign(n, 0);
  parallel::ParallelFor(
      n, 4096, std::max<size_t>(1, slots),
      [&](size_t b, size_t e, size_t) {
        std::vector<Probe> ring;
        Pipelined(q, b, e, &ring, [&](size_t i, const Probe* pre) {
          (*found)[i] = QueryDispatch(false, q[i], pre, &(*ids)[i], nullptr) ? 1 : 0;
        });
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  return Status::Ok();
}

Status Index::FindAllBatch(const uint64_t* q, size_t n, size_t slots, const std::atomic<bool>* stop,
                           std::vector<uint32_t>* offsets, std::vector<uint64_t>* ids) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  const size_t grain = 4096;
  const size_t chunks = (n + grain - 1) / grain;
  std::vector<std::vector<uint64_t>> parts(chunks);
  offsets->assign(n + 1, 0);
  parallel::ParallelFor(
      n, grain, std::max<size_t>(1, slots),
      [&](size_t b, size_t e, size_t) {
        std::vector<uint32_t> found;
        std::vector<Probe> ring;
        std::vector<uint64_t>& out = parts[b / grain];
        Pipelined(q, b, e, &ring, [&](size_t i, const Probe* pre) {
          found.clear();
          QueryDispatch(true, q[i], pre, nullptr, &found);
          const size_t at = out.size();
          for (uint32_t s : found) out.push_back(IdAt(s));
          std::sort(out.begin() + at, out.end());
          (*offsets)[i + 1] = static_cast<uint32_t>(found.size());
        });
      },
      stop);
  if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
  size_t total = 0;
  for (auto& p : parts) total += p.size();
  if (total > UINT32_MAX) return Status(Code::kInvalidArgument, "more than 2^32-1 results: split the batch");
  for (size_t i = 0; i < n; i++) (*offsets)[i + 1] += (*offsets)[i];
  ids->clear();
  ids->reserve(total);
  for (auto& p : parts) ids->insert(ids->end(), p.begin(), p.end());
  return Status::Ok();
}

IndexStats Index::Stats() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  IndexStats s;
  s.size = count_ - dead_;
  s.slots = count_;
  s.tombstones = dead_;
  s.buffered = count_ - delta_.hi;
  s.table_bytes = main_.bytes + delta_.bytes;
  s.entry_bytes = count_ * (dense_ ? 8 : 16);
  s.tables = static_cast<uint32_t>(layout_.tables());
  s.mapped = mapped_;
  return s;
}

// ---- Persistence (docs/FORMAT.md section 7) ----

namespace {

constexpr char kKind[4] = {'S', 'I', 'M', 'H'};
constexpr uint32_t kVersion = 1;

// The file stores the arrays as they are in memory: little-endian hosts only.
constexpr bool kLittleEndianHost = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// Writes the payload, keeping its CRC. The header is 64 bytes, so payload offsets and file offsets have
// the same alignment.
struct CrcWriter {
  io::AtomicFile* f;
  uint32_t crc = 0;
  Status Write(const void* p, size_t n) {
    if (n == 0) return Status::Ok();
    crc = Crc32c(p, n, crc);
    return f->Write(p, n);
  }
  Status Pad8() {
    static const uint8_t zeros[8] = {0};
    return Write(zeros, (8 - f->written() % 8) % 8);
  }
};

}  // namespace

Status Index::Save(const std::string& path, size_t slots) {
  std::unique_lock<std::shared_mutex> lock(mu_);
  if (!kLittleEndianHost) return Status(Code::kUnsupported, "saving a simhash index needs a little-endian host");
  if (dead_ > 0 || main_.hi != count_) CompactLocked(slots);
  io::AtomicFile file;
  Status st = file.Open(path);
  if (!st.ok()) return st;
  uint8_t header[io::kHeaderSize] = {0};
  if (!(st = file.Write(header, sizeof header)).ok()) return st;
  CrcWriter w{&file};
  uint8_t head[32] = {0};
  StoreLe64(head, count_);
  StoreLe32(head + 8, layout_.blocks());
  StoreLe32(head + 12, layout_.distance());
  StoreLe32(head + 16, static_cast<uint32_t>(layout_.tables()));
  StoreLe32(head + 20, main_.s);
  if (!(st = w.Write(head, sizeof head)).ok()) return st;
  if (!(st = w.Write(Fps(), count_ * 8)).ok()) return st;
  if (dense_) {  // the ids are the slots: written in blocks
    uint64_t block[4096];
    for (size_t at = 0; at < count_; at += 4096) {
      const size_t len = std::min<size_t>(4096, count_ - at);
      for (size_t i = 0; i < len; i++) StoreLe64(reinterpret_cast<uint8_t*>(block + i), at + i);
      if (!(st = w.Write(block, len * 8)).ok()) return st;
    }
  } else if (!(st = w.Write(Ids(), count_ * 8)).ok()) {
    return st;
  }
  for (size_t t = 0; t < layout_.tables(); t++) {
    const uint32_t d = count_ > 0 ? main_.t[t].d : 0;
    uint8_t th[8] = {0};
    StoreLe32(th, d);
    if (!(st = w.Write(th, 8)).ok()) return st;
    const size_t nb = (size_t{1} << d) + 1;
    if (count_ > 0) {
      if (!(st = w.Write(main_.t[t].dir, nb * 4)).ok()) return st;
    } else {
      const uint32_t zeros[2] = {0, 0};
      if (!(st = w.Write(zeros, nb * 4)).ok()) return st;
    }
    if (!(st = w.Pad8()).ok()) return st;
    if (count_ > 0 && !(st = w.Write(main_.t[t].ent, count_ * 4)).ok()) return st;
    if (!(st = w.Pad8()).ok()) return st;
  }
  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = file.written() - io::kHeaderSize;
  h.payload_crc = w.crc;
  h.params[0] = layout_.blocks();
  h.params[1] = layout_.distance();
  io::EncodeHeader(h, header);
  if (!(st = file.WriteAt(0, header, sizeof header)).ok()) return st;
  return file.Commit();
}

Status Index::Open(const std::string& path, bool verify, std::unique_ptr<Index>* out) {
  if (!kLittleEndianHost) return Status(Code::kUnsupported, "opening a simhash index needs a little-endian host");
  auto map = std::make_unique<io::MappedFile>();
  Status st = map->Open(path);
  if (!st.ok()) return st;
  st = OpenBytes(map->data(), map->size(), path, verify, out);
  if (st.ok()) (*out)->map_ = std::move(map);
  return st;
}

Status Index::OpenBytes(const uint8_t* data, size_t size, const std::string& path, bool verify,
                        std::unique_ptr<Index>* out) {
  if (!kLittleEndianHost) return Status(Code::kUnsupported, "opening a simhash index needs a little-endian host");
  io::FileHeader h;
  Status st = io::DecodeHeader(data, size, kKind, kVersion, verify, path, &h);
  if (!st.ok()) return st;
  const uint64_t base = size - h.payload_size;
  const uint64_t end = size;
  auto corrupt = [&](uint64_t offset, const std::string& why) {
    return Status(Code::kCorrupt, "'" + path + "': " + why + " (offset " + std::to_string(offset) + ")");
  };
  auto need = [&](uint64_t at, uint64_t bytes, const char* what) -> Status {
    if (at > end || bytes > end - at)
      return corrupt(at, std::string("truncated: ") + what + " needs " + std::to_string(bytes) + " bytes, " +
                             std::to_string(at > end ? 0 : end - at) + " remain");
    return Status::Ok();
  };
  if (base % 8 != 0) return corrupt(20, "header size must be a multiple of 8");
  if (!(st = need(base, 32, "the index head")).ok()) return st;
  const uint64_t count = LoadLe64(data + base);
  const uint32_t m = LoadLe32(data + base + 8), k = LoadLe32(data + base + 12);
  const uint32_t tables = LoadLe32(data + base + 16), s = LoadLe32(data + base + 20);
  if (h.flags != 0) return corrupt(36, "unknown header flags " + std::to_string(h.flags));
  if (LoadLe64(data + base + 24) != 0) return corrupt(base + 24, "reserved field is not 0");
  if (m != h.params[0] || k != h.params[1]) return corrupt(base + 8, "blocks/distance disagree with the header");
  st = ValidateParams(m, k);
  if (!st.ok()) return corrupt(base + 8, st.message());
  if (count >= UINT32_MAX) return corrupt(base, "entry count " + std::to_string(count) + " is too large");
  std::unique_ptr<Index> ix(new Index(m, k));
  if (tables != ix->layout_.tables()) return corrupt(base + 16, "table count disagrees with blocks/distance");
  if (s != SlotBits(count)) return corrupt(base + 20, "slot bits disagree with the entry count");
  uint64_t at = base + 32;
  if (!(st = need(at, count * 16, "the fingerprint and id arrays")).ok()) return st;
  ix->map_fps_ = reinterpret_cast<const uint64_t*>(data + at);
  ix->map_ids_ = reinterpret_cast<const uint64_t*>(data + at + count * 8);
  at += count * 16;
  Run& run = ix->main_;
  run.lo = 0;
  run.hi = static_cast<uint32_t>(count);
  run.s = s;
  run.t.resize(tables);
  const uint32_t smask = s == 32 ? 0xffffffffu : ((1u << s) - 1);
  for (uint32_t t = 0; t < tables; t++) {
    if (!(st = need(at, 8, "a table head")).ok()) return st;
    const uint32_t d = LoadLe32(data + at);
    if (d > 30 || d > ix->layout_.table(t).prefix_bits || (count == 0 && d != 0))
      return corrupt(at, "table " + std::to_string(t) + ": bad directory bits " + std::to_string(d));
    if (LoadLe32(data + at + 4) != 0) return corrupt(at + 4, "table " + std::to_string(t) + ": reserved field is not 0");
    at += 8;
    const uint64_t nb = (uint64_t{1} << d) + 1;
    if (!(st = need(at, nb * 4, "a table directory")).ok()) return st;
    const uint32_t* dir = reinterpret_cast<const uint32_t*>(data + at);
    if (dir[0] != 0 || dir[nb - 1] != count)
      return corrupt(at, "table " + std::to_string(t) + ": directory does not span the entries");
    for (uint64_t i = 1; i < nb; i++)
      if (dir[i] < dir[i - 1])
        return corrupt(at + i * 4, "table " + std::to_string(t) + ": directory is not sorted");
    at += (nb * 4 + 7) / 8 * 8;
    if (!(st = need(at, count * 4, "table entries")).ok()) return st;
    const uint32_t* ent = reinterpret_cast<const uint32_t*>(data + at);
    for (uint64_t i = 0; i < count; i++)
      if ((ent[i] & smask) >= count)
        return corrupt(at + i * 4, "table " + std::to_string(t) + ": entry refers to slot " +
                                       std::to_string(ent[i] & smask) + " of " + std::to_string(count));
    run.t[t] = RunTable{d, dir, ent};
    run.bytes += (nb + count) * 4;
    at += (count * 4 + 7) / 8 * 8;
  }
  if (at != end) return corrupt(at, std::to_string(end - at) + " unexpected bytes after the last table");
  ix->count_ = count;
  ix->mapped_ = true;
  ix->dense_ = false;
  ix->alive_.assign((count + 63) / 64, ~uint64_t{0});
  ix->delta_.lo = ix->delta_.hi = static_cast<uint32_t>(count);
  *out = std::move(ix);
  return Status::Ok();
}

}  // namespace simhash
}  // namespace neardup
