#include "postings/passages.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "io/file.h"
#include "io/temp_names.h"
#include "parallel/pool.h"
#include "io/spill_sort.h"

namespace neardup {
namespace postings {
using io::RecordStore;
using io::SpillFile;
using io::SpillSorter;

void WindowsOf(Blotter* bl, const uint8_t* text, size_t n, Windows* out) {
  bl->Run(text, n);
  const size_t m = bl->num_blots();
  if (bl->options().bits == 64)
    out->blots = bl->blots64();
  else
    out->blots.assign(bl->blots().begin(), bl->blots().end());
  out->begin.resize(m);
  out->end.resize(m);
  for (size_t j = 0; j < m; j++) {
    out->begin[j] = bl->text_begin(j);
    out->end[j] = bl->text_end(j);
  }
}

namespace {
Status Cancelled() { return Status(Code::kCancelled, "cancelled"); }

template <typename Ix>
Status ForEachCountIn(const Ix& ix, const std::atomic<bool>* stop, const std::function<void(uint64_t, uint32_t)>& fn) {
  if (ix.num_segments() == 1 && ix.tombstones().empty()) {
    const auto& seg = ix.segment(0);
    typename Ix::Segment::Block blk;
    for (uint64_t b = 0; b < seg.num_blocks(); b++) {
      if (stop && stop->load()) return Cancelled();
      Status s = seg.ReadBlock(b, &blk);
      if (!s.ok()) return s;
      for (size_t j = 0; j < blk.n; j++) fn(blk.keys[j], blk.counts[j]);
    }
    return Status::Ok();
  }
  return ix.ForEach([&](auto k, const std::vector<uint32_t>& d) {
    fn(k, uint32_t(d.size()));
    return stop && stop->load() ? Cancelled() : Status::Ok();
  });
}

template <typename Ix>
Status ForEachFrequentIn(const Ix& ix, uint64_t min, const std::atomic<bool>* stop,
                         const std::function<Status(uint64_t, const std::vector<uint32_t>&)>& fn) {
  if (ix.num_segments() == 1 && ix.tombstones().empty()) {
    const auto& seg = ix.segment(0);
    typename Ix::Segment::Block blk;
    std::vector<uint32_t> list;
    for (uint64_t b = 0; b < seg.num_blocks(); b++) {
      if (stop && stop->load()) return Cancelled();
      Status s = seg.ReadBlock(b, &blk);
      if (!s.ok()) return s;
      for (size_t j = 0; j < blk.n; j++) {
        if (blk.counts[j] < min) continue;
        list.clear();
        s = seg.DecodeList(blk, j, &list);
        if (s.ok()) s = fn(blk.keys[j], list);
        if (!s.ok()) return s;
      }
    }
    return Status::Ok();
  }
  return ix.ForEach([&](auto k, const std::vector<uint32_t>& d) {
    if (stop && stop->load()) return Cancelled();
    return d.size() >= min ? fn(k, d) : Status::Ok();
  });
}
}  // namespace

Status BlotIndex::Lookup(uint64_t key, std::vector<uint32_t>* out) const {
  if (ix64_) return ix64_->Lookup(key, out);
  if (key > 0xFFFFFFFFull) {
    out->clear();
    return Status::Ok();
  }
  return ix32_->Lookup(uint32_t(key), out);
}

Status BlotIndex::ForEachCount(const std::atomic<bool>* stop, const std::function<void(uint64_t, uint32_t)>& fn) const {
  return ix64_ ? ForEachCountIn(*ix64_, stop, fn) : ForEachCountIn(*ix32_, stop, fn);
}

Status BlotIndex::ForEachFrequent(uint64_t min, const std::atomic<bool>* stop,
                                  const std::function<Status(uint64_t, const std::vector<uint32_t>&)>& fn) const {
  return ix64_ ? ForEachFrequentIn(*ix64_, min, stop, fn) : ForEachFrequentIn(*ix32_, min, stop, fn);
}

namespace {
void SortedIndex(const uint64_t* y, size_t ny, std::vector<std::pair<uint64_t, uint32_t>>* idx) {
  idx->resize(ny);  // (blot, position) of y, sorted
  for (size_t j = 0; j < ny; j++) (*idx)[j] = {y[j], uint32_t(j)};
  std::sort(idx->begin(), idx->end());
}
}  // namespace

void AlignedRuns(const uint64_t* x, size_t nx, const uint64_t* y, size_t ny, std::vector<Run>* out) {
  std::vector<std::pair<uint64_t, uint32_t>> idx;
  SortedIndex(y, ny, &idx);
  AlignedRunsSorted(x, nx, y, ny, idx.data(), out);
}

void AlignedRunsSorted(const uint64_t* x, size_t nx, const uint64_t* y, size_t ny,
                       const std::pair<uint64_t, uint32_t>* idx, std::vector<Run>* out) {
  out->clear();
  const auto* end = idx + ny;
  for (size_t i = 0; i < nx; i++) {
    auto k = std::lower_bound(idx, end, std::make_pair(x[i], uint32_t(0)));
    for (size_t c = 0; k != end && k->first == x[i] && c < kMaxRepeat; ++k, ++c) {
      const size_t j = k->second;
      if (i > 0 && j > 0 && x[i - 1] == y[j - 1]) continue;  // not the start of its run
      size_t len = 1;
      while (i + len < nx && j + len < ny && x[i + len] == y[j + len]) len++;
      out->push_back(Run{uint32_t(i), uint32_t(j), uint32_t(len)});
    }
  }
}

namespace {

// Length of the union of byte ranges.
uint64_t UnionBytes(std::vector<std::pair<uint32_t, uint32_t>>* r) {
  std::sort(r->begin(), r->end());
  uint64_t total = 0;
  uint32_t lo = 0, hi = 0;
  bool open = false;
  for (const auto& x : *r) {
    if (open && x.first <= hi) {
      hi = std::max(hi, x.second);
      continue;
    }
    if (open) total += hi - lo;
    lo = x.first, hi = x.second, open = true;
  }
  if (open) total += hi - lo;
  return total;
}

uint64_t SeqHash(const uint64_t* b, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ b[i]) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    h ^= b[i] >> 32;  // (0 for 32-bit blots)
  }
  return h;
}

// Blots the documents on the pool: visit(slot, doc, windows) for each, in parallel (one Blotter and one
// Windows per slot). Stops at the first text that cannot be read, or when stop is set.
Status ForEachWindows(const std::vector<uint32_t>& docs, const BlotOptions& bo, const TextFn& text, size_t slots,
                      const std::atomic<bool>* stop,
                      const std::function<void(size_t slot, uint32_t doc, const Windows& w)>& visit) {
  std::vector<std::unique_ptr<Blotter>> blotters(slots);
  std::vector<Windows> wins(slots);
  Status err;
  std::mutex em;
  std::atomic<bool> failed{false};
  parallel::ParallelFor(docs.size(), 16, slots, [&](size_t b, size_t e, size_t slot) {
    if (!blotters[slot]) blotters[slot] = std::make_unique<Blotter>(bo);
    for (size_t di = b; di < e && !failed.load(std::memory_order_relaxed); di++) {
      const uint8_t* t = nullptr;
      size_t n = 0;
      Status s = text(docs[di], &t, &n);
      if (!s.ok()) {
        std::lock_guard<std::mutex> g(em);
        if (err.ok()) err = s;
        failed.store(true);
        return;
      }
      WindowsOf(blotters[slot].get(), t, n, &wins[slot]);
      visit(slot, docs[di], wins[slot]);
    }
  }, stop);
  if (!err.ok()) return err;
  return stop && stop->load() ? Cancelled() : Status::Ok();
}

// The documents from *d0 on that take() accepts, about kBatchBytes of text (texts checked here); *d0
// moves past them.
constexpr uint64_t kBatchBytes = uint64_t(8) << 20;
Status NextBatch(uint32_t nd, const std::function<bool(uint32_t)>& take, const TextFn& text, uint32_t* d0,
                 std::vector<uint32_t>* batch) {
  batch->clear();
  uint64_t bytes = 0;
  uint32_t d = *d0;
  for (; d < nd && bytes < kBatchBytes; d++) {
    if (!take(d)) continue;
    const uint8_t* t = nullptr;
    size_t n = 0;
    Status s = text(d, &t, &n);
    if (!s.ok()) return s;
    batch->push_back(d);
    bytes += n + 64;
  }
  *d0 = d;
  return Status::Ok();
}

}  // namespace

uint64_t CoveredBytes(const std::vector<Run>& runs, bool side_a, const Windows& w) {
  std::vector<std::pair<uint32_t, uint32_t>> r;
  r.reserve(runs.size());
  for (const Run& x : runs) {
    const uint32_t s = side_a ? x.a : x.b;
    r.push_back({w.begin[s], w.end[s + x.len - 1]});
  }
  return UnionBytes(&r);
}

// ------------------------------------------------------------------------------------------ extract

namespace {

uint64_t ListHash(const uint32_t* b, size_t n) {  // a hash of a document list
  uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (size_t i = 0; i < n; i++) {
    h = (h ^ b[i]) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  }
  return h;
}

uint64_t SeqHash2(const uint32_t* b, size_t n) {  // a second, independent hash of a document list
  uint64_t h = 0xC2B2AE3D27D4EB4Full + n;
  for (size_t i = 0; i < n; i++) {
    h = (h + b[i]) * 0x94D049BB133111EBull;
    h ^= h >> 29;
  }
  return h;
}

// A chosen key and the 128-bit hash of its list: sorted by hash, keys with equal lists are adjacent.
struct HashedKey {
  uint64_t h1, h2, key;
};
struct HashedKeyLess {
  bool operator()(const HashedKey& x, const HashedKey& y) const {
    if (x.h1 != y.h1) return x.h1 < y.h1;
    if (x.h2 != y.h2) return x.h2 < y.h2;
    return x.key < y.key;
  }
};

// One run of windows with one set in one document (its first occurrence there).
struct RunRec {
  uint32_t set, len;
  uint64_t hash, first_blot;
  uint32_t doc, begin, end, pad;
  bool SameRun(const RunRec& o) const { return set == o.set && len == o.len && hash == o.hash && first_blot == o.first_blot; }
};
struct RunRecLess {
  bool operator()(const RunRec& x, const RunRec& y) const {
    if (x.set != y.set) return x.set < y.set;
    if (x.len != y.len) return x.len < y.len;
    if (x.hash != y.hash) return x.hash < y.hash;
    if (x.first_blot != y.first_blot) return x.first_blot < y.first_blot;
    if (x.doc != y.doc) return x.doc < y.doc;
    return x.begin < y.begin;
  }
};

// A passage in output order; its occurrences are [at, at + count) of the occurrence store.
struct Head {
  uint32_t count, windows;
  uint64_t first_blot;
  uint32_t first_doc, first_begin;
  uint64_t at;
};
struct HeadLess {
  bool operator()(const Head& x, const Head& y) const {
    if (x.count != y.count) return x.count > y.count;
    if (x.windows != y.windows) return x.windows > y.windows;
    if (x.first_blot != y.first_blot) return x.first_blot < y.first_blot;
    if (x.first_doc != y.first_doc) return x.first_doc < y.first_doc;
    return x.first_begin < y.first_begin;
  }
};

// key -> set, open addressing (a set is numbered in the order of the list hashes; set + 1 is stored, 0
// marks an empty slot).
class KeySetTable {
 public:
  struct Slot {
    uint64_t key;
    uint32_t set1, pad;
  };
  static uint64_t CapacityFor(uint64_t n) {
    uint64_t c = 16;
    while (c < 2 * n) c <<= 1;
    return c;
  }
  void Reset(uint64_t n) {
    const uint64_t cap = CapacityFor(n);
    bits_ = 0;
    while ((uint64_t(1) << bits_) < cap) bits_++;
    slots_.assign(cap, Slot{0, 0, 0});
  }
  void Clear() { std::vector<Slot>().swap(slots_); }
  void Put(uint64_t key, uint32_t set) {
    for (uint64_t i = Home(key);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i].set1 == 0 || slots_[i].key == key) {
        slots_[i] = Slot{key, set + 1, 0};
        return;
      }
    }
  }
  // The set of key, or false.
  bool Get(uint64_t key, uint32_t* set) const {
    for (uint64_t i = Home(key);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& v = slots_[i];
      if (v.set1 == 0) return false;
      if (v.key == key) {
        *set = v.set1 - 1;
        return true;
      }
    }
  }
  uint64_t bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  uint64_t Home(uint64_t key) const { return ((key ^ (key >> 32)) * 0x9E3779B97F4A7C15ull) >> (64 - bits_); }
  std::vector<Slot> slots_;
  unsigned bits_ = 4;
};

uint32_t PartitionOf(uint32_t set, size_t parts) {
  return parts == 1 ? 0 : uint32_t(((uint64_t(set) * 0xD6E8FEB86659FD93ull) >> 32) % parts);
}

}  // namespace

Status ExtractCutOff(const BlotIndex& ix, double sigma, uint64_t min_docs, const std::atomic<bool>* stop, CutOff* out) {
  *out = CutOff();
  double sum = 0;
  uint64_t n = 0;
  Status s = ix.ForEachCount(stop, [&](uint64_t, uint32_t c) {
    sum += c;
    n++;
  });
  if (!s.ok()) return s;
  const double mean = n ? sum / double(n) : 0;
  double sos = 0;
  if (n) s = ix.ForEachCount(stop, [&](uint64_t, uint32_t c) { sos += (c - mean) * (c - mean); });
  if (!s.ok()) return s;
  out->keys = n;
  out->posts = uint64_t(sum);
  out->mean = mean;
  out->sd = n ? std::sqrt(sos / double(n)) : 0;
  const double x = mean + sigma * out->sd;  // Math.round: halves up (x >= 0 here matters only)
  const double r = x < 1 ? 1 : std::round(x);
  uint64_t t = std::max<uint64_t>(min_docs, 1);
  if (r > double(t)) t = r >= 18446744073709551615.0 ? ~uint64_t(0) : uint64_t(r);
  out->threshold = t;
  return Status::Ok();
}

// What the extractor and the pair finder share: the peak of the memory they hold, and their spill folder,
// created when first needed and removed (with what is left in it) after their own members are gone.
struct SpillingWork {
  uint64_t peak = 0;
  io::SpillDir spill;
  std::string dir;  // the spill folder once created

  void Held(uint64_t b) { peak = std::max(peak, b); }
  Status Dir(const std::string& parent) {
    if (!dir.empty()) return Status::Ok();
    Status s = spill.Create(parent);
    if (s.ok()) dir = spill.path();
    return s;
  }
};

struct PassageExtractor::Impl : SpillingWork {
  ExtractCounters counters;
  std::unique_ptr<RecordStore<Occurrence>> occ_store;  // in memory, or in a file (then mapped)
  const Occurrence* occ = nullptr;
  std::unique_ptr<SpillSorter<Head, HeadLess>> heads;
  bool started = false;

  Status Run(const BlotIndex& ix, const std::function<Status(const std::function<Status(uint64_t, const std::vector<uint32_t>&)>&)>& chosen,
             const BlotOptions& bo, const TextFn& text, const ExtractOptions& o, const std::atomic<bool>* stop);
};

PassageExtractor::PassageExtractor() : impl_(new Impl) {}
PassageExtractor::~PassageExtractor() = default;
const ExtractCounters& PassageExtractor::counters() const { return impl_->counters; }
uint64_t PassageExtractor::peak_bytes() const { return impl_->peak; }

Status PassageExtractor::Start(const BlotIndex& ix, uint64_t threshold, const BlotOptions& bo, const TextFn& text,
                               const ExtractOptions& o, const std::atomic<bool>* stop) {
  return impl_->Run(ix, [&](const std::function<Status(uint64_t, const std::vector<uint32_t>&)>& fn) {
    return ix.ForEachFrequent(threshold, stop, fn);
  }, bo, text, o, stop);
}

Status PassageExtractor::StartKeys(const BlotIndex& ix, const std::vector<uint64_t>& keys, const BlotOptions& bo,
                                   const TextFn& text, const ExtractOptions& o, const std::atomic<bool>* stop) {
  return impl_->Run(ix, [&](const std::function<Status(uint64_t, const std::vector<uint32_t>&)>& fn) {
    std::vector<uint32_t> list;
    for (uint64_t k : keys) {
      if (stop && stop->load()) return Cancelled();
      Status s = ix.Lookup(k, &list);
      if (s.ok() && !list.empty()) s = fn(k, list);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }, bo, text, o, stop);
}

Status PassageExtractor::Impl::Run(
    const BlotIndex& ix, const std::function<Status(const std::function<Status(uint64_t, const std::vector<uint32_t>&)>&)>& chosen,
    const BlotOptions& bo, const TextFn& text, const ExtractOptions& o, const std::atomic<bool>* stop) {
  if (started) return Status(Code::kInternal, "the extractor was started already");
  started = true;
  const uint64_t m = o.memory;
  const std::string parent = o.tmp_dir;
  // A cap gets a spill folder (removed with the extractor; it holds files only when the records outgrow it).
  auto need_dir = [&]() { return m ? Dir(parent) : Status::Ok(); };

  // (1) the chosen keys by list hash; the documents holding them.
  std::vector<uint64_t> docmap((uint64_t(ix.next_id()) + 63) / 64, 0);
  Status s = need_dir();
  if (!s.ok()) return s;
  SpillSorter<HashedKey, HashedKeyLess> by_hash(m / 2, dir, "extract-keys");
  s = chosen([&](uint64_t key, const std::vector<uint32_t>& list) {
    for (uint32_t d : list)
      if (d < ix.next_id()) docmap[d / 64] |= uint64_t(1) << (d % 64);
    counters.chosen_keys++;
    Held(by_hash.held_bytes());
    return by_hash.Add(HashedKey{ListHash(list.data(), list.size()), SeqHash2(list.data(), list.size()), key});
  });
  if (s.ok()) s = by_hash.Seal(stop);
  if (!s.ok()) return s;
  for (uint64_t w : docmap) counters.docs += uint64_t(__builtin_popcountll(w));
  if (counters.chosen_keys == 0) {
    heads = std::make_unique<SpillSorter<Head, HeadLess>>(0, dir, "extract-heads");
    return heads->Seal(stop);
  }

  // (2) key -> set (the smallest key of equal lists), in partitions of sets that fit half the cap.
  size_t parts = 1;
  const uint64_t table_cap = std::max<uint64_t>(m / 2, 1024);  // a floor: not one pass per key under a tiny cap
  if (m)
    while (KeySetTable::CapacityFor((counters.chosen_keys + parts - 1) / parts) * sizeof(uint64_t) > table_cap) parts++;
  counters.partitions = parts;
  KeySetTable table;
  std::unique_ptr<SpillFile> pairs;  // (key, set) pairs (KeySetTable slots) when there are several partitions
  if (parts == 1) {
    table.Reset(counters.chosen_keys);
  } else {
    pairs = std::make_unique<SpillFile>();
    s = pairs->Create(dir, "extract-sets");
    if (!s.ok()) return s;
  }
  {
    HashedKey x{}, first{};
    bool more = true;
    for (bool any = false;;) {
      s = by_hash.Next(&x, &more);
      if (!s.ok()) return s;
      if (!more) break;
      if (!any || x.h1 != first.h1 || x.h2 != first.h2) {
        first = x;
        any = true;
        counters.sets++;
      }
      Held(by_hash.held_bytes() + table.bytes());
      const uint32_t set = uint32_t(counters.sets - 1);
      if (parts == 1) {
        table.Put(x.key, set);
      } else {
        const KeySetTable::Slot ks{x.key, set, 0};  // (the file holds the set itself, not set + 1)
        s = pairs->Write(&ks, sizeof ks);
        if (!s.ok()) return s;
      }
    }
  }
  if (pairs) {
    counters.spilled_bytes += pairs->size();
    s = pairs->Flush();
    if (!s.ok()) return s;
  }

  // (3) the runs of each document holding chosen keys, one pass per partition.
  SpillSorter<RunRec, RunRecLess> runs(m / 2, dir, "extract-runs");
  const size_t slots = std::max<size_t>(1, o.slots);
  std::vector<std::vector<RunRec>> part(slots);
  std::vector<uint32_t> batch;
  for (size_t p = 0; p < parts; p++) {
    if (parts > 1) {
      table.Reset((counters.chosen_keys + parts - 1) / parts);
      s = pairs->Rewind();
      std::vector<KeySetTable::Slot> ks(4096);
      for (size_t got = 0; s.ok();) {
        s = pairs->Read(ks.data(), ks.size() * sizeof(KeySetTable::Slot), &got);
        if (!s.ok() || got == 0) break;
        for (size_t i = 0; i < got / sizeof(KeySetTable::Slot); i++)
          if (PartitionOf(ks[i].set1, parts) == p) table.Put(ks[i].key, ks[i].set1);
      }
      if (!s.ok()) return s;
    }
    for (uint32_t d0 = 0; d0 < ix.next_id();) {
      s = NextBatch(ix.next_id(), [&](uint32_t d) { return docmap[d / 64] >> (d % 64) & 1; }, text, &d0, &batch);
      if (!s.ok()) return s;
      s = ForEachWindows(batch, bo, text, slots, stop, [&](size_t slot, uint32_t doc, const Windows& w) {
        std::vector<RunRec>& out = part[slot];
        const size_t first = out.size();
        for (size_t i = 0; i < w.size();) {
          uint32_t set = 0, next = 0;
          if (!table.Get(w.blots[i], &set)) {
            i++;
            continue;
          }
          size_t j = i + 1;
          while (j < w.size() && table.Get(w.blots[j], &next) && next == set) j++;
          out.push_back(RunRec{set, uint32_t(j - i), SeqHash(&w.blots[i], j - i), w.blots[i], doc, w.begin[i], w.end[j - 1], 0});
          i = j;
        }
        // first occurrence of each run in this document
        auto beg = out.begin() + long(first);
        std::sort(beg, out.end(), RunRecLess());
        out.erase(std::unique(beg, out.end(), [](const RunRec& x, const RunRec& y) { return x.SameRun(y); }), out.end());
      });
      if (!s.ok()) return s;
      uint64_t scratch = 0;
      for (auto& v : part) {
        scratch += v.capacity() * sizeof(RunRec);
        for (const RunRec& r : v) {
          s = runs.Add(r);
          if (!s.ok()) return s;
        }
        v.clear();
      }
      Held(runs.held_bytes() + table.bytes() + scratch);
    }
  }
  table.Clear();
  pairs.reset();
  for (auto& v : part) std::vector<RunRec>().swap(v);
  counters.records = runs.added();
  s = runs.Seal(stop);
  if (!s.ok()) return s;

  // (4) passages: occurrences to the store, headers to the output sort.
  heads = std::make_unique<SpillSorter<Head, HeadLess>>(m / 4, dir, "extract-heads");
  occ_store = std::make_unique<RecordStore<Occurrence>>(m ? std::max<uint64_t>(1, m / 4 / sizeof(Occurrence)) : 0, dir,
                                                         "extract-occurrences");
  RunRec r{}, first{};
  bool more = true, open = false;
  Head h{};
  auto flush = [&]() -> Status {
    if (!open) return Status::Ok();
    counters.passages++;
    return heads->Add(h);
  };
  auto put = [&](const Occurrence& x) -> Status {
    counters.occurrences++;
    return occ_store->Put(&x, 1);
  };
  for (;;) {
    s = runs.Next(&r, &more);
    if (!s.ok()) return s;
    if (!more) break;
    if (!open || !r.SameRun(first)) {
      s = flush();
      if (!s.ok()) return s;
      first = r;
      open = true;
      h = Head{0, r.len, r.first_blot, r.doc, r.begin, counters.occurrences};
      Held(runs.held_bytes() + heads->held_bytes() + occ_store->held_bytes());
    }
    h.count++;
    s = put(Occurrence{r.doc, r.begin, r.end});
    if (!s.ok()) return s;
  }
  s = flush();
  if (s.ok()) s = heads->Seal(stop);
  if (!s.ok()) return s;
  counters.spilled_bytes += runs.spilled_bytes() + by_hash.spilled_bytes() + heads->spilled_bytes();
  counters.spilled_bytes += occ_store->file_bytes();
  s = occ_store->Seal();
  if (!s.ok()) return s;
  occ = occ_store->data();
  return Status::Ok();
}

Status PassageExtractor::Next(size_t max_occurrences, std::vector<Passage>* out, bool* done) {
  Impl& im = *impl_;
  *done = false;
  if (!im.heads) return Status(Code::kInternal, "the extractor was not started");
  size_t got = 0;
  do {
    Head h;
    bool more = true;
    Status s = im.heads->Next(&h, &more);
    if (!s.ok()) return s;
    if (!more) {
      *done = true;
      return Status::Ok();
    }
    Passage p;
    p.windows = h.windows;
    p.first_blot = h.first_blot;
    p.docs.assign(im.occ + h.at, im.occ + h.at + h.count);
    got += h.count;
    out->push_back(std::move(p));
  } while (got < max_occurrences);
  return Status::Ok();
}

Status ExtractPassages(const BlotIndex& ix, const std::vector<uint64_t>& keys, const BlotOptions& bo,
                       const TextFn& text, size_t slots, const std::atomic<bool>* stop, std::vector<Passage>* out) {
  out->clear();
  PassageExtractor x;
  ExtractOptions o;
  o.slots = slots;
  Status s = x.StartKeys(ix, keys, bo, text, o, stop);
  for (bool done = false; s.ok() && !done;) s = x.Next(size_t(1) << 20, out, &done);
  return s;
}

// -------------------------------------------------------------------------------------------- query

Status WindowsCache::Get(uint32_t d, const TextFn& text, Blotter* bl, std::shared_ptr<const Entry>* out) {
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(d);
    if (it != map_.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  const uint8_t* t = nullptr;
  size_t n = 0;
  Status s = text(d, &t, &n);
  if (!s.ok()) return s;
  auto e = std::make_shared<Entry>();
  WindowsOf(bl, t, n, &e->w);
  SortedIndex(e->w.blots.data(), e->w.size(), &e->idx);
  const size_t bytes = e->w.size() * 28 + 64;
  *out = e;
  std::lock_guard<std::mutex> g(mu_);
  if (bytes_ + bytes <= cap_ && map_.emplace(d, e).second) bytes_ += bytes;
  return Status::Ok();
}

Status QueryPassages(const BlotIndex& ix, const Windows& q, const BlotOptions& bo, const TextFn& text,
                     uint32_t min_passages, uint32_t max_docs, std::vector<QueryMatch>* out, WindowsCache* cache,
                     Blotter* blotter) {
  out->clear();
  std::vector<uint32_t> cands, list;
  {
    std::vector<uint64_t> blots(q.blots);  // freed before the documents are blotted
    std::sort(blots.begin(), blots.end());
    blots.erase(std::unique(blots.begin(), blots.end()), blots.end());
    for (uint64_t k : blots) {
      Status s = ix.Lookup(k, &list);
      if (!s.ok()) return s;
      if (list.size() <= max_docs) cands.insert(cands.end(), list.begin(), list.end());
    }
  }
  std::sort(cands.begin(), cands.end());
  cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
  std::unique_ptr<Blotter> own;
  if (!blotter) own = std::make_unique<Blotter>(bo);
  Blotter& bl = blotter ? *blotter : *own;
  WindowsCache local(0);  // keeps nothing: each document blotted for this query only
  WindowsCache* wc = cache ? cache : &local;
  std::shared_ptr<const WindowsCache::Entry> e;
  std::vector<Run> runs;
  std::vector<uint8_t> seen(q.size());
  for (uint32_t d : cands) {
    Status s = wc->Get(d, text, &bl, &e);
    if (!s.ok()) return s;
    const Windows& w = e->w;
    AlignedRunsSorted(q.blots.data(), q.size(), w.blots.data(), w.size(), e->idx.data(), &runs);
    if (runs.empty() || runs.size() < min_passages) continue;
    std::fill(seen.begin(), seen.end(), 0);
    QueryMatch m;
    m.doc = d;
    m.spans.reserve(runs.size());
    for (const Run& r : runs) {
      for (uint32_t i = r.a; i < r.a + r.len; i++) m.windows += seen[i] ? 0 : (seen[i] = 1);
      m.spans.push_back(QuerySpan{r.len, q.begin[r.a], q.end[r.a + r.len - 1], w.begin[r.b], w.end[r.b + r.len - 1]});
    }
    out->push_back(std::move(m));
  }
  std::sort(out->begin(), out->end(), [](const QueryMatch& a, const QueryMatch& b) {
    if (a.windows != b.windows) return a.windows > b.windows;
    if (a.spans.size() != b.spans.size()) return a.spans.size() > b.spans.size();
    return a.doc < b.doc;
  });
  return Status::Ok();
}

// -------------------------------------------------------------------------------------------- pairs

namespace {

// Keys added in ascending order, with a directory on their top bits (of the index's key width): a
// membership test reads one directory entry and a few keys (2 to 4 per entry on average). 8 bytes a key
// plus the directory (4 bytes an entry).
class SortedKeySet {
 public:
  static unsigned BitsFor(uint64_t n) {
    unsigned b = 1;
    while (b < 24 && (uint64_t(4) << b) < n) b++;
    return b;
  }
  // Bytes held for n keys (at most 10 n + 8).
  static uint64_t BytesFor(uint64_t n) { return 8 * n + 4 * ((uint64_t(1) << BitsFor(n)) + 1); }
  void Reset(unsigned key_bits) {
    keys_.clear();
    dir_.clear();
    key_bits_ = key_bits;
  }
  void Reserve(uint64_t n) { keys_.reserve(n); }
  void Add(uint64_t k) { keys_.push_back(k); }
  void Seal() {
    bits_ = BitsFor(keys_.size());
    const size_t nb = size_t(1) << bits_;
    dir_.assign(nb + 1, 0);
    for (uint64_t k : keys_) dir_[(k >> (key_bits_ - bits_)) + 1]++;
    for (size_t b = 0; b < nb; b++) dir_[b + 1] += dir_[b];
  }
  bool Contains(uint64_t k) const {
    const uint64_t b = k >> (key_bits_ - bits_);
    if (b + 1 >= dir_.size()) return false;  // beyond the key width
    for (uint32_t i = dir_[b], e = dir_[b + 1]; i < e; i++)
      if (keys_[i] >= k) return keys_[i] == k;
    return false;
  }
  size_t size() const { return keys_.size(); }
  uint64_t bytes() const { return keys_.capacity() * sizeof(uint64_t) + dir_.capacity() * sizeof(uint32_t); }
  void Free() {
    std::vector<uint64_t>().swap(keys_);
    std::vector<uint32_t>().swap(dir_);
  }

 private:
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> dir_;
  unsigned bits_ = 1, key_bits_ = 32;
};

// A document's first occurrence of an eligible key: its window and the window's byte range.
struct PairOcc {
  uint64_t key;
  uint32_t pos, begin, end, pad;
};
// The same in a block of documents (sorted by key, then document).
struct BlockOcc {
  uint64_t key;
  uint32_t doc, pos, begin, end;
};
// A match of window pos_a of document a (block occurrence ea) with occurrence rb of document b; sorted by
// (hi, pos_a), hi = a << 32 | (pos_a - pos_b + 2^31) (windows < 2^31: texts are below 4 GiB).
struct PairMatch {
  uint64_t hi;
  uint32_t pos_a, ea, rb, pad;
};
struct PairMatchLess {
  bool operator()(const PairMatch& x, const PairMatch& y) const { return x.hi != y.hi ? x.hi < y.hi : x.pos_a < y.pos_a; }
};
struct PairOrder {  // output order: most passages, then most windows, then (a, b)
  bool operator()(const PairSummary& x, const PairSummary& y) const {
    if (x.passages != y.passages) return x.passages > y.passages;
    if (x.windows != y.windows) return x.windows > y.windows;
    return x.a != y.a ? x.a < y.a : x.b < y.b;
  }
};

// Buffered sequential reads of PairOcc records from a spill file.
class OccReader {
 public:
  explicit OccReader(SpillFile* f) : f_(f), buf_(16384) {}
  Status Start() { return f_->Rewind(); }
  Status Read(size_t k, std::vector<PairOcc>* out) {
    while (k > 0) {
      if (pos_ == n_) {
        size_t got = 0;
        Status s = f_->Read(buf_.data(), buf_.size() * sizeof(PairOcc), &got);
        if (!s.ok()) return s;
        if (got == 0 || got % sizeof(PairOcc)) return Status(Code::kIo, "the temporary file '" + f_->path() + "' was cut short");
        n_ = got / sizeof(PairOcc);
        pos_ = 0;
      }
      const size_t t = std::min(k, n_ - pos_);
      out->insert(out->end(), buf_.begin() + long(pos_), buf_.begin() + long(pos_ + t));
      pos_ += t;
      k -= t;
    }
    return Status::Ok();
  }

 private:
  SpillFile* f_;
  std::vector<PairOcc> buf_;
  size_t pos_ = 0, n_ = 0;
};

}  // namespace

struct PassagePairFinder::Impl : SpillingWork {
  PairsCounters counters;
  // The occurrences, documents in id order: document d's are [doc_off[d], doc_off[d + 1]).
  std::vector<uint64_t> doc_off;
  std::unique_ptr<RecordStore<PairOcc>> store;  // in memory, or in a file (then mapped)
  const PairOcc* occ = nullptr;
  std::unique_ptr<SpillSorter<PairSummary, PairOrder>> out;
  bool started = false;

  // The join's state: one block of documents [lo, hi), its occurrences sorted by key and a directory on
  // the keys' top bits.
  std::vector<BlockOcc> blk;
  std::vector<uint32_t> blk_dir, blk_cur;
  unsigned blk_bits = 1, key_bits = 32;
  uint32_t blk_lo = 0, blk_hi = 0;
  uint32_t min_passages = 1;
  uint64_t match_cap = 0;  // matches a slot holds before it splits the block (0: no cap)
  struct Scratch {
    std::vector<PairMatch> m;
    std::vector<std::pair<uint32_t, uint32_t>> ra, rb;
    std::vector<PairSummary> res;
    uint64_t matches = 0;
  };

  Status Run(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t max_docs, const PairsOptions& o,
             const std::atomic<bool>* stop);
  Status Occurrences(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t max_docs, const PairsOptions& o,
                     const std::atomic<bool>* stop);
  Status Join(const PairsOptions& o, const std::atomic<bool>* stop);
  void BuildBlock(uint32_t lo, uint32_t hi, size_t slots, const std::atomic<bool>* stop);
  // First block occurrence of key (blk.size() when none).
  size_t First(uint64_t key) const {
    const uint64_t b = key >> (key_bits - blk_bits);
    uint32_t i = blk_dir[b];
    const uint32_t e = blk_dir[b + 1];
    while (i < e && blk[i].key < key) i++;
    return i < e && blk[i].key == key ? i : blk.size();
  }
  // The pairs (a, b) for the block's documents a in [alo, ahi), a < b.
  void MatchDoc(uint32_t b, uint32_t alo, uint32_t ahi, Scratch* sc) const;
};

PassagePairFinder::PassagePairFinder() : impl_(new Impl) {}
PassagePairFinder::~PassagePairFinder() = default;
const PairsCounters& PassagePairFinder::counters() const { return impl_->counters; }
uint64_t PassagePairFinder::peak_bytes() const { return impl_->peak; }

Status PassagePairFinder::Start(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t min_passages,
                                uint32_t max_docs, const PairsOptions& o, const std::atomic<bool>* stop) {
  if (impl_->started) return Status(Code::kInternal, "the pair finder was started already");
  impl_->started = true;
  impl_->min_passages = std::max<uint32_t>(1, min_passages);
  return impl_->Run(ix, bo, text, max_docs, o, stop);
}

Status PassagePairFinder::Impl::Run(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t max_docs,
                                    const PairsOptions& o, const std::atomic<bool>* stop) {
  if (o.memory) {
    Status s = Dir(o.tmp_dir);
    if (!s.ok()) return s;
  }
  out = std::make_unique<SpillSorter<PairSummary, PairOrder>>(o.memory / 8, dir, "pairs-out");
  Status s = Occurrences(ix, bo, text, max_docs, o, stop);
  if (s.ok()) s = Join(o, stop);
  if (s.ok()) s = out->Seal(stop);
  if (!s.ok()) return s;
  counters.spilled_bytes += out->spilled_bytes();
  return Status::Ok();
}

// (1) and (2): the eligible keys' first occurrences in each live document, documents in id order.
Status PassagePairFinder::Impl::Occurrences(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t max_docs,
                                            const PairsOptions& o, const std::atomic<bool>* stop) {
  const uint64_t m = o.memory;
  auto eligible = [&](uint32_t c) { return c >= 2 && c <= max_docs; };
  key_bits = ix.key_bits();
  Status s = ix.ForEachCount(stop, [&](uint64_t, uint32_t c) { counters.eligible_keys += eligible(c); });
  if (!s.ok()) return s;
  const uint64_t n = counters.eligible_keys;
  // keys per partition: the set within half the cap (a floor: not one pass per key under a tiny cap)
  uint64_t per = n ? n : 1;
  if (m) {
    const uint64_t budget = std::max<uint64_t>(m / 2, 1024);
    while (per > 1 && SortedKeySet::BytesFor(per) > budget) per = (per + 1) / 2;
  }
  per = std::min<uint64_t>(per, uint64_t(1) << 31);
  const size_t parts = size_t(n ? (n + per - 1) / per : 1);
  counters.partitions = parts;

  const uint32_t nd = ix.next_id();
  doc_off.assign(uint64_t(nd) + 1, 0);
  const uint64_t mem_cap = m ? std::max<uint64_t>(1, m / 8 / sizeof(PairOcc)) : 0;  // occurrences kept in memory
  // Where a part's occurrences go: the store (one partition), or a file per partition (merged below).
  std::vector<std::unique_ptr<SpillFile>> part_files;
  std::vector<std::vector<uint32_t>> part_counts;
  store = std::make_unique<RecordStore<PairOcc>>(mem_cap, dir, "pairs-occurrences");
  auto put = [&](const PairOcc* p, size_t k) -> Status {
    counters.occurrences += k;
    return store->Put(p, k);
  };

  SortedKeySet set;
  const size_t slots = std::max<size_t>(1, o.slots);
  std::vector<std::vector<PairOcc>> recs(slots);
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> firsts(slots);
  struct Where {
    uint32_t slot = 0;
    size_t at = 0, n = 0;
  };
  std::vector<Where> where;
  std::vector<uint32_t> batch;
  for (size_t p = 0; p < parts; p++) {
    set.Reset(key_bits);
    set.Reserve(std::min(per, n));
    uint64_t idx = 0;
    const uint64_t first = p * per, last = first + per;
    s = ix.ForEachCount(stop, [&](uint64_t key, uint32_t c) {
      if (!eligible(c)) return;
      if (idx >= first && idx < last) set.Add(key);
      idx++;
    });
    if (!s.ok()) return s;
    set.Seal();
    SpillFile* pf = nullptr;
    if (parts > 1) {
      part_files.push_back(std::make_unique<SpillFile>());
      pf = part_files.back().get();
      s = pf->Create(dir, "pairs-part");
      if (!s.ok()) return s;
      part_counts.emplace_back(nd, 0);
    }
    for (uint32_t d0 = 0; d0 < nd;) {
      s = NextBatch(nd, [&](uint32_t d) { return ix.IsLive(d); }, text, &d0, &batch);
      if (!s.ok()) return s;
      where.assign(batch.size(), Where());
      s = ForEachWindows(batch, bo, text, slots, stop, [&](size_t slot, uint32_t doc, const Windows& w) {
        auto& f = firsts[slot];
        f.clear();
        for (size_t i = 0; i < w.size(); i++)
          if (set.Contains(w.blots[i])) f.push_back({w.blots[i], uint32_t(i)});
        std::sort(f.begin(), f.end());
        std::vector<PairOcc>& r = recs[slot];
        Where& x = where[size_t(std::lower_bound(batch.begin(), batch.end(), doc) - batch.begin())];
        x.slot = uint32_t(slot);
        x.at = r.size();
        for (size_t k = 0; k < f.size(); k++) {
          if (k > 0 && f[k].first == f[k - 1].first) continue;  // the key's first window only
          const uint32_t i = f[k].second;
          r.push_back(PairOcc{f[k].first, i, w.begin[i], w.end[i], 0});
        }
        x.n = r.size() - x.at;
      });
      if (!s.ok()) return s;
      uint64_t scratch = 0;
      for (const auto& r : recs) scratch += r.capacity() * sizeof(PairOcc);
      Held(set.bytes() + store->held_bytes() + doc_off.capacity() * 8 + scratch);
      for (size_t i = 0; i < batch.size(); i++) {
        const Where& x = where[i];
        const PairOcc* p0 = recs[x.slot].data() + x.at;
        if (parts == 1) {
          doc_off[batch[i] + 1] = x.n;
          s = put(p0, x.n);
        } else {
          part_counts[p][batch[i]] = uint32_t(x.n);
          counters.spilled_bytes += x.n * sizeof(PairOcc);
          s = pf->Write(p0, x.n * sizeof(PairOcc));
        }
        if (!s.ok()) return s;
      }
      for (auto& r : recs) r.clear();
    }
  }
  set.Free();
  for (auto& r : recs) std::vector<PairOcc>().swap(r);
  if (parts > 1) {  // the partitions' files merged document by document into the store
    std::vector<OccReader> readers;
    for (auto& f : part_files) readers.emplace_back(f.get());
    for (auto& r : readers) {
      s = r.Start();
      if (!s.ok()) return s;
    }
    std::vector<PairOcc> one;
    for (uint32_t d = 0; d < nd; d++) {
      if (stop && stop->load()) return Cancelled();
      one.clear();
      for (size_t p = 0; p < parts; p++) {
        s = readers[p].Read(part_counts[p][d], &one);
        if (!s.ok()) return s;
      }
      doc_off[d + 1] = one.size();
      s = put(one.data(), one.size());
      if (!s.ok()) return s;
    }
    readers.clear();
    part_files.clear();
  }
  for (uint32_t d = 0; d < nd; d++) doc_off[d + 1] += doc_off[d];
  if (doc_off[nd] != counters.occurrences) return Status(Code::kInternal, "pairs: occurrences lost");
  counters.spilled_bytes += store->file_bytes();
  s = store->Seal();
  if (!s.ok()) return s;
  occ = store->data();
  return Status::Ok();
}

// The block's occurrences sorted by key (then document: a counting sort on the keys' top bits keeps the
// document order, each bucket then sorted on the pool) and the directory.
void PassagePairFinder::Impl::BuildBlock(uint32_t lo, uint32_t hi, size_t slots, const std::atomic<bool>* stop) {
  blk_lo = lo, blk_hi = hi;
  const uint64_t n = doc_off[hi] - doc_off[lo];
  blk_bits = SortedKeySet::BitsFor(n);
  const size_t nb = size_t(1) << blk_bits;
  const unsigned sh = key_bits - blk_bits;
  blk_dir.assign(nb + 1, 0);
  for (uint64_t i = doc_off[lo]; i < doc_off[hi]; i++) blk_dir[(occ[i].key >> sh) + 1]++;
  for (size_t b = 0; b < nb; b++) blk_dir[b + 1] += blk_dir[b];
  blk_cur.assign(blk_dir.begin(), blk_dir.end() - 1);
  if (n > blk.capacity()) {  // exactly n: a resize would double past the cap
    std::vector<BlockOcc>().swap(blk);
    blk.reserve(n);
  }
  blk.resize(n);
  for (uint32_t d = lo; d < hi; d++)
    for (uint64_t i = doc_off[d]; i < doc_off[d + 1]; i++) {
      const PairOcc& x = occ[i];
      blk[blk_cur[x.key >> sh]++] = BlockOcc{x.key, d, x.pos, x.begin, x.end};
    }
  std::vector<uint32_t>().swap(blk_cur);
  parallel::ParallelFor(nb, 4096, slots, [&](size_t b0, size_t e0, size_t) {
    for (size_t b = b0; b < e0; b++)
      if (blk_dir[b + 1] - blk_dir[b] > 1)
        std::stable_sort(blk.begin() + blk_dir[b], blk.begin() + blk_dir[b + 1],
                         [](const BlockOcc& x, const BlockOcc& y) { return x.key < y.key; });
  }, stop);
}

void PassagePairFinder::Impl::MatchDoc(uint32_t b, uint32_t alo, uint32_t ahi, Scratch* sc) const {
  const PairOcc* r = occ + doc_off[b];
  const size_t nr = size_t(doc_off[b + 1] - doc_off[b]);
  std::vector<PairMatch>& m = sc->m;
  m.clear();
  if (match_cap && m.capacity() < match_cap) m.reserve(match_cap + 1024);  // not doubled past the cap
  for (size_t j = 0; j < nr; j++) {
    for (size_t i = First(r[j].key); i < blk.size() && blk[i].key == r[j].key; i++) {
      const BlockOcc& e = blk[i];
      if (e.doc >= ahi) break;
      if (e.doc < alo) continue;
      m.push_back(PairMatch{uint64_t(e.doc) << 32 | (uint64_t(e.pos) + 0x80000000u - r[j].pos), e.pos, uint32_t(i), uint32_t(j), 0});
    }
    if (match_cap && m.size() > match_cap && ahi - alo > 1) {  // too many: the two halves of the range apart
      const uint32_t mid = alo + (ahi - alo) / 2;
      MatchDoc(b, alo, mid, sc);
      MatchDoc(b, mid, ahi, sc);
      return;
    }
  }
  sc->matches += m.size();
  std::sort(m.begin(), m.end(), PairMatchLess());
  for (size_t k = 0; k < m.size();) {
    PairSummary p;
    p.a = uint32_t(m[k].hi >> 32);
    p.b = b;
    sc->ra.clear();
    sc->rb.clear();
    size_t l = k;
    while (l < m.size() && uint32_t(m[l].hi >> 32) == p.a) {
      // one passage: consecutive windows on one diagonal
      size_t e = l + 1;
      while (e < m.size() && m[e].hi == m[l].hi && m[e].pos_a == m[e - 1].pos_a + 1) e++;
      p.passages++;
      p.windows += uint32_t(e - l);
      sc->ra.push_back({blk[m[l].ea].begin, blk[m[e - 1].ea].end});
      sc->rb.push_back({r[m[l].rb].begin, r[m[e - 1].rb].end});
      l = e;
    }
    if (p.passages >= min_passages) {
      p.bytes_a = UnionBytes(&sc->ra);
      p.bytes_b = UnionBytes(&sc->rb);
      sc->res.push_back(p);
    }
    k = l;
  }
}

// (3): blocks of documents, each joined with itself and every later document.
Status PassagePairFinder::Impl::Join(const PairsOptions& o, const std::atomic<bool>* stop) {
  const uint64_t m = o.memory;
  const uint32_t nd = uint32_t(doc_off.size() - 1);
  const size_t slots = std::max<size_t>(1, o.slots);
  // a block within half the cap: 24 bytes an occurrence, the directory (at most 2 bytes an occurrence)
  // and the counting sort's cursors (as much)
  const uint64_t blk_cap = m ? std::max<uint64_t>(1, m / 2 / (sizeof(BlockOcc) + 4)) : ~uint64_t(0);
  match_cap = m ? std::max<uint64_t>(4096, m / 8 / slots / sizeof(PairMatch)) : 0;
  const uint64_t chunk = m ? std::min<uint64_t>(uint64_t(1) << 20, std::max<uint64_t>(1024, m / 1024)) : uint64_t(1) << 20;
  std::vector<Scratch> sc(slots);
  Status err;
  for (uint32_t lo = 0; lo < nd;) {
    uint32_t hi = lo + 1;
    while (hi < nd && doc_off[hi + 1] - doc_off[lo] <= blk_cap) hi++;
    if (doc_off[hi] == doc_off[lo]) {
      lo = hi;
      continue;
    }
    if (stop && stop->load()) return Cancelled();
    counters.blocks++;
    BuildBlock(lo, hi, slots, stop);
    if (stop && stop->load()) return Cancelled();
    // the documents after lo, in chunks of occurrences (the pairs found, about as many, are drained
    // between them: about a 1/32 of the cap at most)
    for (uint32_t c0 = lo + 1; c0 < nd;) {
      uint32_t c1 = c0 + 1;
      while (c1 < nd && doc_off[c1] - doc_off[c0] < chunk) c1++;
      parallel::ParallelFor(c1 - c0, 8, slots, [&](size_t b0, size_t e0, size_t slot) {
        for (size_t i = b0; i < e0; i++) {
          const uint32_t b = c0 + uint32_t(i);
          if (doc_off[b + 1] > doc_off[b]) MatchDoc(b, lo, std::min(hi, b), &sc[slot]);
        }
      }, stop);
      if (stop && stop->load()) return Cancelled();
      uint64_t scratch = 0;
      for (Scratch& x : sc) {
        scratch += x.m.capacity() * sizeof(PairMatch) + x.res.capacity() * sizeof(PairSummary);
        for (const PairSummary& p : x.res) {
          Status s = out->Add(p);
          if (!s.ok()) return s;
        }
        counters.pairs += x.res.size();
        x.res.clear();
      }
      Held(blk.capacity() * sizeof(BlockOcc) + blk_dir.capacity() * 4 + store->held_bytes() +
           doc_off.capacity() * 8 + out->held_bytes() + scratch);
      c0 = c1;
    }
    lo = hi;
  }
  for (Scratch& x : sc) counters.matches += x.matches;
  std::vector<BlockOcc>().swap(blk);
  std::vector<uint32_t>().swap(blk_dir);
  return Status::Ok();
}

Status PassagePairFinder::Next(size_t max_pairs, std::vector<PairSummary>* res, bool* done) {
  Impl& im = *impl_;
  *done = false;
  if (!im.out) return Status(Code::kInternal, "the pair finder was not started");
  PairSummary p;
  for (size_t k = 0; k < max_pairs; k++) {
    bool more = true;
    Status s = im.out->Next(&p, &more);
    if (!s.ok()) return s;
    if (!more) {
      *done = true;
      return Status::Ok();
    }
    res->push_back(p);
  }
  return Status::Ok();
}

Status PassagePairs(const BlotIndex& ix, const BlotOptions& bo, const TextFn& text, uint32_t min_passages,
                    uint32_t max_docs, size_t slots, const std::atomic<bool>* stop, std::vector<PairSummary>* out) {
  out->clear();
  PassagePairFinder f;
  PairsOptions o;
  o.slots = slots;
  Status s = f.Start(ix, bo, text, min_passages, max_docs, o, stop);
  for (bool done = false; s.ok() && !done;) s = f.Next(size_t(1) << 20, out, &done);
  return s;
}

}  // namespace postings
}  // namespace neardup
