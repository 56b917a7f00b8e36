// An opened generation of a chunk index (State), its postings over all parts (tombstones applied), the
// ranking of top lists, the per-document counter, and queries.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "chunks/index.h"
#include "chunks/internal.h"
#include "parallel/pool.h"
#include "util/endian.h"

namespace neardup {
namespace chunks {

// ------------------------------------------------------------------------------------------------ postings

template <typename Key>
Status PostingsT<Key>::Open(const std::string& dir, const Manifest& m, const std::vector<uint32_t>* kill,
                            const std::vector<uint8_t>* live, bool verify) {
  bits_ = m.params.chunk.bits;
  parts_n_ = m.params.parts;
  kill_ = kill;
  live_ = live;
  parts_.clear();
  parts_.resize(m.params.parts);
  accept_.clear();
  for (const auto& r : m.segments) {
    Seg g;
    g.gen = r.gen;
    g.seg = std::make_unique<postings::BasicSegment<Key>>();
    Status s = g.seg->Open(dir + "/" + SegmentName(r.part, r.file), verify);
    if (!s.ok()) return s;
    if (g.seg->num_posts() != r.posts)
      return Status(Code::kCorrupt, "'" + g.seg->path() + "' holds " + std::to_string(g.seg->num_posts()) +
                                        " postings, the manifest says " + std::to_string(r.posts));
    auto a = accept_.find(r.gen);
    if (a == accept_.end()) {
      std::vector<uint64_t> bits((live->size() + 63) / 64, 0);
      for (size_t id = 0; id < live->size(); id++)
        if ((*live)[id] && (*kill)[id] < r.gen) bits[id >> 6] |= uint64_t(1) << (id & 63);
      a = accept_.emplace(r.gen, std::move(bits)).first;
    }
    g.accept = a->second.data();
    parts_[r.part].push_back(std::move(g));
    count_++;
  }
  return Status::Ok();
}

template <typename Key>
Status PostingsT<Key>::Lookup(uint64_t key, std::vector<uint32_t>* out) const {
  out->clear();
  const auto& segs = parts_[PartOf(bits_, parts_n_, key)];
  const uint32_t* kill = kill_->data();
  const size_t slots = live_->size();
  for (const auto& g : segs) {
    // The store finds the key block by its directory and decodes that block once, then the list.
    const size_t at = out->size();
    Status s = g.seg->FindList(static_cast<Key>(key), out);
    if (!s.ok()) return s;
    uint32_t* ids = out->data();
    const uint64_t* accept = g.accept;
    size_t w = at;
    for (size_t r = at, end = out->size(); r < end; r++) {
      const uint32_t id = ids[r];
      if (id < slots && (accept[id >> 6] >> (id & 63) & 1)) {
        ids[w++] = id;
        continue;
      }
      // Killed (skipped), or an error to report.
      if (id >= slots)
        return Status(Code::kCorrupt, "'" + g.seg->path() + "': document " + std::to_string(id) + " is beyond the index");
      if (kill[id] >= g.gen) continue;
      return Status(Code::kCorrupt, "'" + g.seg->path() + "': posting of document " + std::to_string(id) +
                                        ", which is not in the index");
    }
    out->resize(w);
  }
  return Status::Ok();
}

template class PostingsT<uint32_t>;
template class PostingsT<uint64_t>;

// --------------------------------------------------------------------------------------------------- state

Status State::Open(const std::string& dir, const std::string& which, bool verify, std::shared_ptr<State>* out) {
  Manifest m;
  Status s = ReadManifest(dir + "/" + which, &m);
  if (!s.ok()) return s;
  return Open(dir, m, nullptr, verify, out);
}

Status State::Open(const std::string& dir, const Manifest& m, std::unique_ptr<Directory> directory, bool verify,
                   std::shared_ptr<State>* out) {
  auto st = std::shared_ptr<State>(new State());
  st->dir_ = dir;
  st->m_ = m;
  Status s;
  if (directory) {
    st->d_ = std::move(directory);
  } else {
    st->d_ = std::make_unique<Directory>();
    s = st->d_->Load(dir + "/" + DirectoryName(m.directory), verify);
    if (!s.ok()) return s;
  }
  const Directory& d = *st->d_;
  const std::string dname = dir + "/" + DirectoryName(m.directory);
  if (d.slots() != m.next_id || d.live() != m.live)
    return Status(Code::kCorrupt, "'" + dname + "' holds " + std::to_string(d.slots()) + " ids (" +
                                      std::to_string(d.live()) + " live), the manifest says " +
                                      std::to_string(m.next_id) + " (" + std::to_string(m.live) + ")");
  const uint32_t w = st->item_bytes();
  for (uint32_t f : m.doc_files) {
    auto r = std::make_unique<RecordFile>();
    s = r->Open(dir + "/" + DocsName(f), kDocRecords, w, verify);
    if (!s.ok()) return s;
    st->docs_[f] = std::move(r);
  }
  for (uint32_t f : m.top_files) {
    auto r = std::make_unique<RecordFile>();
    s = r->Open(dir + "/" + TopsName(f), kTopRecords, 8, verify);
    if (!s.ok()) return s;
    st->tops_[f] = std::move(r);
  }
  st->live_.assign(d.slots(), 0);
  for (uint32_t id = 0; id < d.slots(); id++) {
    const DocEntry& e = d.entry(id);
    if (!e.live()) continue;
    st->live_[id] = 1;
    if (!st->docs_.count(e.doc_file) || (e.top_file != 0 && !st->tops_.count(e.top_file)))
      return Status(Code::kCorrupt, "'" + dname + "': document " + std::to_string(id) +
                                        " refers to a record file the manifest does not list");
  }
  st->kill_.assign(d.slots(), 0);
  for (const auto& t : m.tombstones) st->kill_[t.id] = t.gen;
  if (m.params.chunk.wide()) {
    auto p = std::make_unique<PostingsT<uint64_t>>();
    s = p->Open(dir, m, &st->kill_, &st->live_, verify);
    st->post_ = std::move(p);
  } else {
    auto p = std::make_unique<PostingsT<uint32_t>>();
    s = p->Open(dir, m, &st->kill_, &st->live_, verify);
    st->post_ = std::move(p);
  }
  if (!s.ok()) return s;
  *out = std::move(st);
  return Status::Ok();
}

Status State::Chunks(uint32_t id, std::vector<uint64_t>* out) const {
  if (id >= d_->slots() || !d_->entry(id).live()) return Status(Code::kInvalidArgument, "no document " + std::to_string(id));
  const DocEntry& e = d_->entry(id);
  const RecordFile& f = *docs_.at(e.doc_file);
  const uint8_t* items;
  uint32_t n;
  Status s = f.Read(e.doc_off, id, &items, &n);
  if (!s.ok()) return s;
  if (n != e.chunks)
    return CorruptAt(f.path(), e.doc_off + 4, "document " + std::to_string(id) + " has " + std::to_string(n) +
                                                   " chunks, the directory says " + std::to_string(e.chunks));
  return DecodeChunks(items, n, item_bytes(), f.path(), e.doc_off, out);
}

Status State::Top(uint32_t id, std::vector<TopEntry>* out) const {
  out->clear();
  if (id >= d_->slots() || !d_->entry(id).live()) return Status(Code::kInvalidArgument, "no document " + std::to_string(id));
  const DocEntry& e = d_->entry(id);
  if (e.top_file == 0) return Status::Ok();
  const RecordFile& f = *tops_.at(e.top_file);
  const uint8_t* items;
  uint32_t n;
  Status s = f.Read(e.top_off, id, &items, &n);
  if (!s.ok()) return s;
  if (n != e.top_count)
    return CorruptAt(f.path(), e.top_off + 4, "top list of document " + std::to_string(id) + " has " +
                                                   std::to_string(n) + " entries, the directory says " +
                                                   std::to_string(e.top_count));
  out->resize(n);
  for (uint32_t i = 0; i < n; i++) {
    TopEntry& t = (*out)[i];
    t.other = LoadLe32(items + 8 * size_t(i));
    t.shared = LoadLe32(items + 8 * size_t(i) + 4);
    if (t.other >= live_.size() || t.other == id || !live_[t.other] || t.shared == 0)
      return CorruptAt(f.path(), e.top_off + 8 + 8 * uint64_t(i), "bad entry in the top list of document " + std::to_string(id));
  }
  if (n && ((*out)[n - 1].other != e.tail_other || (*out)[n - 1].shared != e.tail_shared))
    return CorruptAt(f.path(), e.top_off, "top list of document " + std::to_string(id) + " does not end where the directory says");
  return Status::Ok();
}

std::vector<std::string> State::Files() const {
  std::vector<std::string> f{DirectoryName(m_.directory)};
  for (uint32_t x : m_.doc_files) f.push_back(DocsName(x));
  for (uint32_t x : m_.top_files) f.push_back(TopsName(x));
  for (const auto& g : m_.segments) f.push_back(SegmentName(g.part, g.file));
  return f;
}

// ------------------------------------------------------------------------------------------------- ranking

bool RankBefore(const RankKey& a, const RankKey& b) {
  if (a.shared != b.shared) return a.shared > b.shared;
  const uint64_t x = uint64_t(a.shared) * b.chunks, y = uint64_t(b.shared) * a.chunks;
  if (x != y) return x > y;
  return ExtLess(a.ext, b.ext);
}

bool PassesFloors(const IndexParams& p, uint32_t shared, uint32_t owner_chunks) {
  if (shared < p.min_shared) return false;
  return p.min_similarity <= 0 || double(shared) / double(owner_chunks) >= p.min_similarity;
}

RankKey KeyOf(const Directory& d, const TopEntry& t) { return RankKey{t.shared, d.entry(t.other).chunks, d.ext(t.other)}; }

bool EntryBefore(const Directory& d, const TopEntry& a, const TopEntry& b) {
  if (a.shared != b.shared) return a.shared > b.shared;
  return d.rank(a.other) < d.rank(b.other);  // chunk count, then external id
}

bool SelectTop(const IndexParams& p, const Directory& d, uint32_t owner_chunks, std::vector<TopEntry>* cand) {
  // One integer per entry (shared descending, then the directory's rank): the comparisons touch no entry.
  thread_local std::vector<uint64_t> keys;
  keys.clear();
  for (const auto& t : *cand)
    if (PassesFloors(p, t.shared, owner_chunks)) keys.push_back(uint64_t(~t.shared) << 32 | d.rank(t.other));
  const uint32_t keep = p.keep();
  const bool complete = keys.size() <= keep;
  if (!complete) {
    std::nth_element(keys.begin(), keys.begin() + keep, keys.end());
    keys.resize(keep);
  }
  std::sort(keys.begin(), keys.end());
  cand->resize(keys.size());
  const std::vector<uint32_t>& order = d.by_rank();
  for (size_t i = 0; i < keys.size(); i++) (*cand)[i] = TopEntry{order[uint32_t(keys[i])], ~uint32_t(keys[i] >> 32)};
  return complete;
}

bool TopOfCounter(const IndexParams& p, const Directory& d, uint32_t owner_chunks, const Counter& c,
                  std::vector<TopEntry>* out) {
  constexpr uint32_t kH = 256;
  uint32_t hist[kH] = {0};
  const uint32_t* t = c.touched();
  const size_t nt = c.size();
  for (size_t i = 0; i < nt; i++) hist[std::min(c.count(t[i]), kH - 1)]++;
  // The floors pass shared counts from some value up (both grow with shared).
  const uint32_t keep = p.keep();
  uint64_t passing = 0, acc = 0;
  uint32_t low = kH;  // the lowest bucket whose candidates are collected
  for (uint32_t s = kH - 1; s >= 1; s--) {
    if (!PassesFloors(p, s, owner_chunks)) break;
    if (hist[s] == 0) continue;
    passing += hist[s];
    if (acc < keep) low = s;
    acc += hist[s];
  }
  // Bucket kH - 1 holds every count from kH - 1 up: PassesFloors(kH - 1) implies it for them all.
  out->clear();
  for (size_t i = 0; i < nt; i++) {
    const uint32_t n = c.count(t[i]);
    if (std::min(n, kH - 1) >= low) out->push_back(TopEntry{t[i], n});
  }
  SelectTop(p, d, owner_chunks, out);
  return passing <= keep;
}

// ------------------------------------------------------------------------------------------------- counter

Status Counter::CountLookup(const Postings& p, const std::vector<uint64_t>& chunks, int64_t self) {
  if (self >= 0) Exclude(uint32_t(self));
  for (uint64_t k : chunks) {
    Status s = p.Lookup(k, &list_);
    if (!s.ok()) return s;
    AddRange(list_.data(), list_.data() + list_.size());
  }
  return Status::Ok();
}

// --------------------------------------------------------------------------------------------------- query

Status QueryTexts(const State& st, const Docs& texts, const std::atomic<bool>* stop, std::vector<uint32_t>* chunk_counts,
                  std::vector<std::vector<TopEntry>>* lists) {
  chunk_counts->assign(texts.n, 0);
  lists->assign(texts.n, {});
  const size_t slots = parallel::MaxSlots();
  std::vector<std::unique_ptr<Counter>> counters(slots);
  FirstError err;
  parallel::ParallelFor(texts.n, 4, slots, [&](size_t b, size_t e, size_t slot) {
    if (!counters[slot]) counters[slot] = std::make_unique<Counter>(st.directory().slots());
    Counter& c = *counters[slot];
    Chunker ch(st.params().chunk);
    std::vector<uint64_t> chunks;
    for (size_t i = b; i < e && err.ok(); i++) {
      ch.Run(texts.ptr[i], texts.len[i], &chunks);
      (*chunk_counts)[i] = uint32_t(chunks.size());
      Status s = c.CountLookup(st.postings(), chunks, -1);
      if (!s.ok()) {
        err.Set(s);
        c.Clear();
        return;
      }
      TopOfCounter(st.params(), st.directory(), uint32_t(chunks.size()), c, &(*lists)[i]);
      if ((*lists)[i].size() > st.params().top_k) (*lists)[i].resize(st.params().top_k);
      c.Clear();
    }
  }, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  return err.get();
}

}  // namespace chunks
}  // namespace neardup
