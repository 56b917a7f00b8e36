#include "exact/exact_dedup.h"

#include <algorithm>
#include <cstring>

#include "exact/exact_index.h"
#include "hash/murmur3.h"
#include "io/spill_sort.h"
#include "parallel/pool.h"

namespace neardup {
namespace exact {

Hash128 HashText(const ExactOptions& o, const uint8_t* data, size_t len, Shingler* shingler) {
  uint64_t out[2];
  if (o.normalize) {
    shingler->Reset(data, len);
    const std::string_view t = shingler->text();
    Murmur3_x64_128(t.data(), t.size(), 0, out);
  } else {
    Murmur3_x64_128(data, len, 0, out);
  }
  return Hash128{out[0], out[1]};
}

namespace {

struct Rec {
  uint64_t hi, lo;
  uint32_t doc, pad;
};
struct RecLess {
  bool operator()(const Rec& a, const Rec& b) const {
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.doc < b.doc;
  }
};

constexpr size_t kSlotBytes = sizeof(Hash128) + sizeof(uint32_t);

}  // namespace

// Open addressing, linear probing, power-of-two capacity; the all-zero hash marks an empty slot (a document
// whose hash is zero is kept aside in `zero_doc`).
struct ExactDedup::Table {
  std::vector<Hash128> keys;
  std::vector<uint32_t> docs;
  size_t mask = 0, size = 0;
  bool has_zero = false;
  uint32_t zero_doc = 0;

  explicit Table(size_t cap) : keys(cap), docs(cap), mask(cap - 1) {}
  size_t capacity() const { return keys.size(); }
  uint64_t bytes() const { return capacity() * kSlotBytes; }
  // The first document with hash h, or inserts doc as it.
  uint32_t FindOrInsert(const Hash128& h, uint32_t doc) {
    if (h.hi == 0 && h.lo == 0) {
      if (!has_zero) {
        has_zero = true;
        zero_doc = doc;
      }
      return zero_doc;
    }
    for (size_t i = (h.lo ^ (h.hi >> 29)) & mask;; i = (i + 1) & mask) {
      Hash128& k = keys[i];
      if (k.hi == 0 && k.lo == 0) {
        k = h;
        docs[i] = doc;
        size++;
        return doc;
      }
      if (k == h) return docs[i];
    }
  }
  void Rehash(size_t cap) {
    Table t(cap);
    for (size_t i = 0; i < keys.size(); i++)
      if (keys[i].hi != 0 || keys[i].lo != 0) t.FindOrInsert(keys[i], docs[i]);
    t.has_zero = has_zero;
    t.zero_doc = zero_doc;
    *this = std::move(t);
  }
};

struct ExactDedup::Spill {
  io::SpillDir dir;
  std::unique_ptr<io::SpillSorter<Rec, RecLess>> sorter;
};

ExactDedup::ExactDedup(const ExactOptions& o) : o_(o), table_(new Table(size_t(1) << 8)) {
  stats_.table_bytes = table_->bytes();
}

ExactDedup::~ExactDedup() = default;

Status ExactDedup::StartSpill() {
  spill_.reset(new Spill);
  Status s = spill_->dir.Create(o_.tmp_dir);
  if (!s.ok()) return s;
  // the records' budget: what the table was allowed (at least 1024 records: SpillSorter's floor)
  spill_->sorter.reset(new io::SpillSorter<Rec, RecLess>(o_.memory_bytes, spill_->dir.path(), "exact"));
  const Table& t = *table_;
  for (size_t i = 0; i < t.capacity() && s.ok(); i++)
    if (t.keys[i].hi != 0 || t.keys[i].lo != 0) s = spill_->sorter->Add(Rec{t.keys[i].hi, t.keys[i].lo, t.docs[i], 0});
  if (s.ok() && t.has_zero) s = spill_->sorter->Add(Rec{0, 0, t.zero_doc, 0});
  table_.reset();
  return s;
}

Status ExactDedup::Insert(const Hash128& h, uint32_t doc, uint32_t* rep) {
  if (spill_) {
    *rep = kPending;
    return spill_->sorter->Add(Rec{h.hi, h.lo, doc, 0});
  }
  Table& t = *table_;
  if ((t.size + 1) * 4 > t.capacity() * 3) {
    const uint64_t grown = 2 * t.bytes();
    // growing holds the old table and the new one at once
    if (o_.memory_bytes > 0 && grown + t.bytes() > o_.memory_bytes) {
      Status s = StartSpill();
      if (!s.ok()) return s;
      return Insert(h, doc, rep);
    }
    t.Rehash(2 * t.capacity());
    stats_.table_bytes = std::max(stats_.table_bytes, t.bytes());
  }
  *rep = t.FindOrInsert(h, doc);
  return Status::Ok();
}

Status ExactDedup::AddHashes(const Hash128* h, size_t n, const uint8_t* valid, uint32_t* rep_out) {
  if (stats_.documents + n > kMaxDocuments)
    return Status(Code::kInvalidArgument, "exact dedup numbers documents with 32 bits: more than 4294967294 documents in one run");
  for (size_t i = 0; i < n; i++) {
    const uint32_t doc = static_cast<uint32_t>(stats_.documents + i);
    uint32_t r = doc;
    uint64_t entry;
    if (valid && !valid[i]) {
      // a bad line: its own representative
    } else if (index_ && index_->Find(h[i], &entry)) {
      r = kIndexMatch;
      matches_.emplace_back(doc, entry);
      stats_.index_matched++;
    } else {
      Status s = Insert(h[i], doc, &r);
      if (!s.ok()) return s;
    }
    rep_.push_back(r);
    if (rep_out) rep_out[i] = r;
    if (r != doc && r != kPending) stats_.duplicates++;
  }
  stats_.documents += n;
  return Status::Ok();
}

Status HashDocuments(const ExactOptions& o, const Docs& docs, Hash128* out, std::vector<std::unique_ptr<Shingler>>* shinglers,
                     const std::atomic<bool>* stop) {
  const size_t slots = parallel::MaxSlots();
  if (o.normalize && shinglers->size() < slots) shinglers->resize(slots);
  parallel::ParallelFor(docs.n, 256, slots, [&](size_t b, size_t e, size_t slot) {
    Shingler* sh = nullptr;
    if (o.normalize) {
      if (!(*shinglers)[slot]) (*shinglers)[slot].reset(new Shingler(o.text));
      sh = (*shinglers)[slot].get();
    }
    for (size_t i = b; i < e; i++) out[i] = HashText(o, docs.ptr[i], docs.len[i], sh);
  }, stop);
  return stop && stop->load() ? Status(Code::kCancelled, "cancelled") : Status::Ok();
}

Status ExactDedup::Add(const Docs& docs, const uint8_t* valid, const std::atomic<bool>* stop, uint32_t* rep_out) {
  scratch_.resize(docs.n);
  Status s = HashDocuments(o_, docs, scratch_.data(), &shinglers_, stop);
  if (!s.ok()) return s;
  return AddHashes(scratch_.data(), docs.n, valid, rep_out);
}

Status ExactDedup::Finish(std::vector<uint32_t>* rep, const std::atomic<bool>* stop) {
  if (spill_) {
    io::SpillSorter<Rec, RecLess>& so = *spill_->sorter;
    Status s = so.Seal(stop);
    Rec r{}, first{};
    bool more = true, any = false;
    if (keep_for_index_)
      kept_.reset(new io::RecordStore<NewEntry>(std::max<uint64_t>(1, o_.memory_bytes / 2 / sizeof(NewEntry)), spill_->dir.path(), "exact-kept"));
    // duplicates found before the spill are counted; the table's entries are the first of their groups
    while (s.ok()) {
      s = so.Next(&r, &more);
      if (!s.ok() || !more) break;
      if (!any || r.hi != first.hi || r.lo != first.lo) {
        first = r;
        any = true;
        if (kept_) {
          const NewEntry e{r.hi, r.lo, r.doc, 0};
          s = kept_->Put(&e, 1);
          if (!s.ok()) break;
        }
      } else {
        stats_.duplicates++;
      }
      rep_[r.doc] = first.doc;
    }
    if (!s.ok()) return s;
    stats_.spilled_bytes = so.spilled_bytes();
    stats_.runs = so.runs_written();
    spill_->sorter.reset();  // removes the run files (the folder stays while kept_ may use it)
    if (kept_) {
      s = kept_->Seal();
      if (!s.ok()) return s;
      stats_.spilled_bytes += kept_->file_bytes();
    } else {
      spill_.reset();
    }
  }
  stats_.distinct = stats_.documents - stats_.duplicates;
  *rep = std::move(rep_);
  rep_.clear();
  return Status::Ok();
}

Status ExactDedup::SaveIndex(const std::string& path, const IndexWrite& w) {
  if (!keep_for_index_) return Status(Code::kInvalidArgument, "SaveIndex needs KeepForIndex() before the first Add");
  if (kept_) return WriteExactIndex(path, w, kept_->data(), kept_->size());
  if (!table_) return Status(Code::kInvalidArgument, "SaveIndex after the table was released");
  std::vector<NewEntry> fresh;
  fresh.reserve(table_->size + 1);
  const Table& t = *table_;
  for (size_t i = 0; i < t.capacity(); i++)
    if (t.keys[i].hi != 0 || t.keys[i].lo != 0) fresh.push_back(NewEntry{t.keys[i].hi, t.keys[i].lo, t.docs[i], 0});
  if (t.has_zero) fresh.push_back(NewEntry{0, 0, t.zero_doc, 0});
  std::sort(fresh.begin(), fresh.end(), [](const NewEntry& a, const NewEntry& b) { return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo; });
  return WriteExactIndex(path, w, fresh.data(), fresh.size());
}

}  // namespace exact
}  // namespace neardup
