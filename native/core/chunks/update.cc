// Incremental runs: added, modified and deleted documents against an open state (index.h), and the
// compaction of segments and record files.
#include <algorithm>
#include <cstring>

#include "chunks/index.h"
#include "chunks/internal.h"
#include "io/os.h"
#include "parallel/pool.h"

namespace neardup {
namespace chunks {

namespace {

constexpr size_t kMaxSegmentsPerPart = 8;
constexpr size_t kMaxRecordFiles = 16;

Status Cancelled() { return Status(Code::kCancelled, "cancelled"); }

std::string TmpOf(const std::string& dir, const RunOptions& o) { return o.tmp.empty() ? dir : o.tmp; }

uint64_t RecordBytes(uint64_t count, uint32_t w) { return (8 + count * w + 4 + 7) & ~uint64_t(7); }

template <typename Key>
Status BuildNewSegment(const std::vector<std::pair<uint32_t, const std::vector<uint64_t>*>>& docs, uint64_t lo,
                       uint64_t hi, const std::string& path, const RunOptions& o, const std::string& tmp,
                       uint64_t* posts, bool* empty) {
  postings::BasicSegmentBuilder<Key> b(o.memory, tmp);
  std::vector<Key> keys;
  *empty = true;
  for (const auto& d : docs) {
    const auto& c = *d.second;
    auto b0 = std::lower_bound(c.begin(), c.end(), lo);
    auto b1 = hi == UINT64_MAX ? c.end() : std::upper_bound(b0, c.end(), hi);
    if (b0 == b1) continue;
    keys.assign(b0, b1);
    *posts += keys.size();
    *empty = false;
    Status s = b.Add(d.first, keys.data(), keys.size());
    if (!s.ok()) return s;
  }
  if (*empty) return Status::Ok();
  return b.Finish(path, o.stop);
}

// Merges the segments of one part at positions `files` (in the part's list) into `path`, dropping dead
// postings.
template <typename Key>
Status MergeSegmentsT(const PostingsT<Key>& post, const std::vector<uint8_t>& live, uint32_t part,
                      const std::vector<uint32_t>& files, const std::string& path, const RunOptions& o,
                      const std::string& tmp, uint64_t* posts) {
  std::vector<const typename PostingsT<Key>::Seg*> segs;
  const auto& all = post.part(part);
  for (size_t i = 0; i < all.size(); i++)
    if (std::find(files.begin(), files.end(), uint32_t(i)) != files.end()) segs.push_back(&all[i]);
  postings::BasicSegmentWriter<Key> w;
  Status s = w.Open(path, tmp);
  if (!s.ok()) return s;
  const auto& kill = post.kill();
  std::vector<uint64_t> pos(segs.size(), 0);
  std::vector<postings::BlockCursor<Key>> cur;
  for (const auto* g : segs) cur.emplace_back(*g->seg);
  std::vector<uint32_t> docs, list;
  uint64_t steps = 0;
  for (;;) {
    bool any = false;
    Key key = 0;
    for (size_t i = 0; i < segs.size(); i++) {
      if (pos[i] >= segs[i]->seg->num_keys()) continue;
      const Key k = cur[i].entry(pos[i]).key;
      if (!any || k < key) key = k;
      any = true;
    }
    if (!any) break;
    if (o.stop && (++steps & 0xffff) == 0 && o.stop->load()) {
      w.Abort();
      return Cancelled();
    }
    docs.clear();
    for (size_t i = 0; i < segs.size(); i++) {
      if (pos[i] >= segs[i]->seg->num_keys() || cur[i].entry(pos[i]).key != key) continue;
      list.clear();
      s = cur[i].Decode(pos[i], &list);
      if (!s.ok()) return s;
      pos[i]++;
      for (uint32_t id : list) {
        if (id >= live.size())
          return Status(Code::kCorrupt, "'" + segs[i]->seg->path() + "': document " + std::to_string(id) + " is beyond the index");
        if (kill[id] >= segs[i]->gen) continue;
        if (!live[id])
          return Status(Code::kCorrupt, "'" + segs[i]->seg->path() + "': posting of document " + std::to_string(id) +
                                            ", which is not in the index");
        docs.push_back(id);
      }
    }
    if (docs.empty()) continue;
    std::sort(docs.begin(), docs.end());
    docs.erase(std::unique(docs.begin(), docs.end()), docs.end());
    s = w.Add(key, docs.data(), docs.size());
    if (!s.ok()) return s;
  }
  *posts = w.posts();
  return w.Commit();
}

}  // namespace

Status MergeSegments(const State& st, uint32_t part, const std::vector<uint32_t>& files, const std::string& path,
                     const RunOptions& o, uint64_t* posts) {
  // files: the file numbers to merge; mapped to positions in the part's segment list (manifest order).
  std::vector<uint32_t> idx;
  uint32_t i = 0;
  for (const auto& g : st.manifest().segments) {
    if (g.part != part) continue;
    if (std::find(files.begin(), files.end(), g.file) != files.end()) idx.push_back(i);
    i++;
  }
  std::vector<uint8_t> live(st.directory().slots());
  for (uint32_t id = 0; id < live.size(); id++) live[id] = st.directory().entry(id).live();
  const std::string tmp = TmpOf(st.dir(), o);
  if (st.params().chunk.wide())
    return MergeSegmentsT(static_cast<const PostingsT<uint64_t>&>(st.postings()), live, part, idx, path, o, tmp, posts);
  return MergeSegmentsT(static_cast<const PostingsT<uint32_t>&>(st.postings()), live, part, idx, path, o, tmp, posts);
}

// ------------------------------------------------------------------------------------------------- updater

Status Updater::Add(const std::vector<std::string_view>& ext, const Docs& texts, size_t* bad) {
  const Directory& d0 = base_->directory();
  const size_t n = texts.n;
  if (ext.size() != n) return Status(Code::kInternal, "ids and texts differ in number");
  std::vector<std::vector<uint64_t>> chunks(n);
  const size_t slots = parallel::MaxSlots();
  std::vector<std::unique_ptr<Chunker>> ch(slots);
  parallel::ParallelFor(n, 8, slots, [&](size_t b, size_t e, size_t slot) {
    if (!ch[slot]) ch[slot] = std::make_unique<Chunker>(base_->params().chunk);
    for (size_t i = b; i < e; i++)
      if (texts.ptr[i] != nullptr) ch[slot]->Run(texts.ptr[i], texts.len[i], &chunks[i]);
  }, o_.stop);
  if (o_.stop && o_.stop->load()) return Cancelled();
  for (size_t i = 0; i < n; i++) {
    if (ext[i].empty() || ext[i].size() > kMaxExtIdBytes) {
      *bad = i;
      return Status(Code::kInvalidInput, "an id must be 1 to 65535 bytes of JSON");
    }
    const bool del = texts.ptr[i] == nullptr;
    std::string e(ext[i]);
    const bool known = d0.Find(e) >= 0;
    auto it = by_ext_.find(e);
    if (it != by_ext_.end()) {
      Change& c = changes_[it->second];
      if (del && !known) {
        c.gone = true;
        by_ext_.erase(it);
        continue;
      }
      c.del = del;
      c.chunks = std::move(chunks[i]);
      continue;
    }
    if (del && !known) {
      *bad = i;
      return Status(Code::kInvalidInput, "cannot delete the id " + e + ": it is not in the index");
    }
    by_ext_.emplace(e, changes_.size());
    Change c;
    c.ext = std::move(e);
    c.del = del;
    c.chunks = std::move(chunks[i]);
    changes_.push_back(std::move(c));
  }
  return Status::Ok();
}

namespace {

struct Cand {
  uint32_t x, a, shared;
  bool operator<(const Cand& o) const { return x != o.x ? x < o.x : a < o.a; }
};

// The row changes of document x's table rows (its first K entries) from list `was` to list `now`.
void RowDiff(uint32_t x, const std::vector<TopEntry>& was, const std::vector<TopEntry>& now, uint32_t k,
             std::vector<RowChange>* out) {
  auto by_other = [](const TopEntry& p, const TopEntry& q) { return p.other < q.other; };
  std::vector<TopEntry> a(was.begin(), was.begin() + std::min<size_t>(was.size(), k));
  std::vector<TopEntry> b(now.begin(), now.begin() + std::min<size_t>(now.size(), k));
  std::sort(a.begin(), a.end(), by_other);
  std::sort(b.begin(), b.end(), by_other);
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j >= b.size() || (i < a.size() && a[i].other < b[j].other)) {
      out->push_back(RowChange{x, a[i++].other, 0});
    } else if (i >= a.size() || b[j].other < a[i].other) {
      out->push_back(RowChange{x, b[j].other, b[j].shared});
      j++;
    } else {
      if (a[i].shared != b[j].shared) out->push_back(RowChange{x, b[j].other, b[j].shared});
      i++;
      j++;
    }
  }
}

}  // namespace

Status Updater::Prepare(bool compact, UpdateSummary* sum, std::shared_ptr<State>* pending) {
  const State& s0 = *base_;
  const Manifest& m0 = s0.manifest();
  const Directory& d0 = s0.directory();
  const IndexParams& P = s0.params();
  const std::string& dir = s0.dir();
  const uint32_t g1 = m0.generation + 1;
  const uint32_t slots0 = uint32_t(d0.slots());
  const uint32_t K = P.top_k;
  const uint32_t w = s0.item_bytes();
  *sum = UpdateSummary();
  pending->reset();
  StepTimer timer;

  // 1. What changes. Old ids (modified or deleted) keep their identity in the old lists; added documents
  // take the free ids (ascending, deleted ones included), then new ones.
  struct NewDoc {
    uint32_t id;
    const Change* c;
  };
  std::vector<uint32_t> old_ids;
  std::vector<uint8_t> is_old(slots0, 0), is_del(slots0, 0);
  std::vector<NewDoc> news;
  std::vector<const Change*> adds;
  for (const Change& c : changes_) {
    if (c.gone) continue;
    const int64_t id = d0.Find(c.ext);
    if (id >= 0) {
      is_old[id] = 1;
      old_ids.push_back(uint32_t(id));
      if (c.del) {
        is_del[id] = 1;
        sum->deleted++;
      } else {
        news.push_back({uint32_t(id), &c});
        sum->modified++;
      }
    } else {
      adds.push_back(&c);
      sum->added++;
    }
  }
  if (old_ids.empty() && adds.empty() && !compact) return Status::Ok();
  std::vector<uint32_t> free_ids;
  for (uint32_t id = 0; id < slots0; id++)
    if (!d0.entry(id).live() || is_del[id]) free_ids.push_back(id);
  uint64_t next = slots0;
  size_t fi = 0;
  for (const Change* c : adds) news.push_back({fi < free_ids.size() ? free_ids[fi++] : uint32_t(next++), c});
  if (next > 0xfffffffeull) return Status(Code::kInvalidArgument, "an index holds at most 2^32 - 2 documents");
  const uint32_t slots1 = uint32_t(next);
  std::sort(news.begin(), news.end(), [](const NewDoc& a, const NewDoc& b) { return a.id < b.id; });
  std::vector<uint8_t> is_new(slots1, 0);
  for (const auto& nd : news) is_new[nd.id] = 1;
  for (uint32_t id = 0; id < slots0; id++)
    if (is_del[id] && !is_new[id]) sum->removed.push_back(id);
  std::sort(old_ids.begin(), old_ids.end());

  const size_t nslots = parallel::MaxSlots();
  FirstError err;
  // The least shared count that can matter to an unchanged document's list (its floor, and its last entry's
  // shared count when the list is not complete): most partners of a changed document fail it at once.
  std::vector<uint32_t> gate(slots0, UINT32_MAX);
  for (uint32_t x = 0; x < slots0; x++) {
    const DocEntry& e = d0.entry(x);
    if (e.live()) gate[x] = e.complete() ? P.min_shared : std::max(P.min_shared, e.tail_shared);
  }

  // 2. Old side: the unchanged documents whose list holds an old id (its shared count from the old index
  // against the tail of their list).
  std::vector<uint8_t> lost(slots0, 0);
  {
    std::vector<std::unique_ptr<Counter>> counters(nslots);
    std::vector<std::vector<uint32_t>> lost_lists(nslots);
    parallel::ParallelFor(old_ids.size(), 1, nslots, [&](size_t b, size_t e, size_t slot) {
      if (!counters[slot]) counters[slot] = std::make_unique<Counter>(slots0);
      Counter& c = *counters[slot];
      std::vector<uint64_t> chunks;
      for (size_t i = b; i < e && err.ok(); i++) {
        const uint32_t a = old_ids[i];
        Status s = s0.Chunks(a, &chunks);
        if (s.ok()) s = c.CountLookup(s0.postings(), chunks, a);
        if (!s.ok()) {
          err.Set(s);
          c.Clear();
          return;
        }
        for (size_t ti = 0; ti < c.size(); ti++) {
          const uint32_t x = c.touched()[ti];
          const uint32_t sh = c.count(x);
          if (sh < gate[x] || is_old[x]) continue;
          const DocEntry& ex = d0.entry(x);
          if (!PassesFloors(P, sh, ex.chunks)) continue;
          // In the list when it holds every passing document, or when a ranks at or above its tail.
          const bool in = ex.complete() ||
                          (ex.top_count > 0 &&
                           !RankBefore(RankKey{ex.tail_shared, d0.entry(ex.tail_other).chunks, d0.ext(ex.tail_other)},
                                       RankKey{sh, d0.entry(a).chunks, d0.ext(a)}));
          if (in) lost_lists[slot].push_back(x);
        }
        c.Clear();
      }
    }, o_.stop);
    if (o_.stop && o_.stop->load()) return Cancelled();
    if (!err.ok()) return err.get();
    for (const auto& l : lost_lists)
      for (uint32_t x : l) lost[x] = 1;
  }

  timer.Step("old side (lists losing an entry)");
  // 3. The new files: chunk lists of the new documents, the directory, tombstones, a segment per part.
  Manifest m1 = m0;
  m1.generation = g1;
  std::vector<uint64_t> doc_off(news.size(), 0);
  const uint32_t f_docs = m1.next_file++;
  std::vector<std::string> written;  // removed again on failure
  auto fail = [&](const Status& s) {
    for (const auto& f : written) io::os::RemoveFile(f);
    return s;
  };
  if (!news.empty()) {
    RecordWriter dw;
    Status s = dw.Open(dir + "/" + DocsName(f_docs), kDocRecords, w);
    std::vector<uint8_t> buf;
    for (size_t i = 0; i < news.size() && s.ok(); i++) {
      EncodeChunks(news[i].c->chunks, w, &buf);
      s = dw.Add(news[i].id, buf.data(), uint32_t(news[i].c->chunks.size()), &doc_off[i]);
    }
    if (s.ok()) s = dw.Commit();
    if (!s.ok()) return fail(s);
    written.push_back(dir + "/" + DocsName(f_docs));
    m1.doc_files.push_back(f_docs);
  }
  auto d1 = std::make_unique<Directory>();
  d1->Reset(slots1);
  {
    size_t ni = 0;
    for (uint32_t id = 0; id < slots1; id++) {
      if (ni < news.size() && news[ni].id == id) {
        DocEntry e;
        e.flags = 1;
        e.chunks = uint32_t(news[ni].c->chunks.size());
        e.doc_file = f_docs;
        e.doc_off = doc_off[ni];
        d1->Append(e, news[ni].c->ext);
        ni++;
      } else if (id < slots0 && d0.entry(id).live() && !is_old[id]) {
        d1->Append(d0.entry(id), d0.ext(id));
      } else {
        d1->Append(DocEntry(), std::string_view());
      }
    }
    Status s = d1->Seal();
    if (!s.ok()) return fail(s);
  }
  m1.next_id = slots1;
  m1.live = d1->live();
  {
    std::vector<Tombstone> t = m0.tombstones;
    for (uint32_t id : old_ids) t.push_back(Tombstone{id, g1 - 1});
    std::sort(t.begin(), t.end(), [](const Tombstone& a, const Tombstone& b) { return a.id != b.id ? a.id < b.id : a.gen > b.gen; });
    m1.tombstones.clear();
    for (const auto& x : t)
      if (m1.tombstones.empty() || m1.tombstones.back().id != x.id) m1.tombstones.push_back(x);
  }
  {
    std::vector<std::pair<uint32_t, const std::vector<uint64_t>*>> docs;
    for (const auto& nd : news) docs.push_back({nd.id, &nd.c->chunks});
    for (uint32_t p = 0; p < P.parts && !docs.empty(); p++) {
      uint64_t lo, hi, posts = 0;
      PartRange(P.chunk.bits, P.parts, p, &lo, &hi);
      const uint32_t f = m1.next_file;
      const std::string path = dir + "/" + SegmentName(p, f);
      bool empty = true;
      Status s = P.chunk.wide() ? BuildNewSegment<uint64_t>(docs, lo, hi, path, o_, TmpOf(dir, o_), &posts, &empty)
                                : BuildNewSegment<uint32_t>(docs, lo, hi, path, o_, TmpOf(dir, o_), &posts, &empty);
      if (!s.ok()) return fail(s);
      if (empty) continue;
      written.push_back(path);
      m1.next_file++;
      m1.segments.push_back(SegmentRef{p, f, g1, posts});
    }
    std::sort(m1.segments.begin(), m1.segments.end(),
              [](const SegmentRef& a, const SegmentRef& b) { return a.part != b.part ? a.part < b.part : a.file < b.file; });
  }
  std::shared_ptr<State> s1;
  {
    Status s = State::Open(dir, m1, std::move(d1), false, &s1);
    if (!s.ok()) return fail(s);
  }
  const Directory& dn = s1->directory();

  timer.Step("new chunk lists, segments");
  // 4. New side: each new document against the new index; its partners get the reverse entry when it
  // enters their list (or when their list lost an entry: then every entry is kept, for step 5).
  std::vector<std::vector<TopEntry>> new_top(news.size());
  std::vector<uint8_t> new_complete(news.size(), 0);
  std::vector<Cand> cands;
  {
    std::vector<std::unique_ptr<Counter>> counters(nslots);
    std::vector<std::vector<Cand>> part_cands(nslots);
    parallel::ParallelFor(news.size(), 1, nslots, [&](size_t b, size_t e, size_t slot) {
      if (!counters[slot]) counters[slot] = std::make_unique<Counter>(slots1);
      Counter& c = *counters[slot];
      for (size_t i = b; i < e && err.ok(); i++) {
        const uint32_t a = news[i].id;
        Status s = c.CountLookup(s1->postings(), news[i].c->chunks, a);
        if (!s.ok()) {
          err.Set(s);
          c.Clear();
          return;
        }
        new_complete[i] = TopOfCounter(P, dn, dn.entry(a).chunks, c, &new_top[i]);
        const RankKey ka{0, dn.entry(a).chunks, dn.ext(a)};
        for (size_t ti = 0; ti < c.size(); ti++) {
          const uint32_t x = c.touched()[ti];
          if (is_new[x]) continue;
          const uint32_t sh = c.count(x);
          if (sh < gate[x] && !lost[x]) continue;
          const DocEntry& ex = dn.entry(x);
          if (!PassesFloors(P, sh, ex.chunks)) continue;
          bool keep = lost[x] || ex.complete();
          if (!keep && ex.top_count > 0) {
            RankKey k = ka;
            k.shared = sh;
            keep = RankBefore(k, RankKey{ex.tail_shared, dn.entry(ex.tail_other).chunks, dn.ext(ex.tail_other)});
          }
          if (keep) part_cands[slot].push_back(Cand{x, a, sh});
        }
        c.Clear();
      }
    }, o_.stop);
    if (o_.stop && o_.stop->load()) return fail(Cancelled());
    if (!err.ok()) return fail(err.get());
    for (auto& v : part_cands) cands.insert(cands.end(), v.begin(), v.end());
    std::sort(cands.begin(), cands.end());
  }

  timer.Step("new side (new lists, reverse)");
  // 5. The unchanged documents whose list changes: their old list without the old ids, plus the new
  // entries. A complete list stays complete. Otherwise the old list was the exact start of the ranking down
  // to its tail: the known entries ranking at or above that tail are still exact (anything unknown ranks
  // below it), the rest is dropped; fewer than K left, and the document is recounted.
  std::vector<uint32_t> affected;
  {
    size_t ci = 0;
    for (uint32_t x = 0; x < slots0; x++) {
      const bool has_cand = ci < cands.size() && cands[ci].x == x;
      if (has_cand || lost[x]) affected.push_back(x);
      while (ci < cands.size() && cands[ci].x == x) ci++;
    }
  }
  const uint32_t keep = P.keep();
  std::vector<std::vector<TopEntry>> aff_top(affected.size());
  std::vector<std::vector<RowChange>> aff_rows(affected.size());
  std::vector<uint8_t> aff_changed(affected.size(), 0), aff_recount(affected.size(), 0), aff_complete(affected.size(), 0);
  {
    std::vector<std::unique_ptr<Counter>> counters(nslots);
    parallel::ParallelFor(affected.size(), 16, nslots, [&](size_t b, size_t e, size_t slot) {
      std::vector<uint64_t> chunks;
      std::vector<TopEntry> old;
      for (size_t i = b; i < e && err.ok(); i++) {
        const uint32_t x = affected[i];
        Status s = s0.Top(x, &old);
        if (!s.ok()) {
          err.Set(s);
          return;
        }
        auto& known = aff_top[i];
        known.clear();
        for (const auto& t : old)
          if (!is_old[t.other]) known.push_back(t);
        // The old list is in ranking order (and an unchanged partner ranks as before: its directory entry is
        // the same): only the new entries are sorted, then merged in (a full sort compared ~100 entries
        // through the directory for each of the 100k+ lists an update touches at 1M documents).
        const size_t old_kept = known.size();
        auto it = std::lower_bound(cands.begin(), cands.end(), Cand{x, 0, 0});
        for (; it != cands.end() && it->x == x; ++it) known.push_back(TopEntry{it->a, it->shared});
        auto before = [&](const TopEntry& p, const TopEntry& q) { return EntryBefore(dn, p, q); };
        if (known.size() > old_kept) {
          std::sort(known.begin() + old_kept, known.end(), before);
          std::inplace_merge(known.begin(), known.begin() + old_kept, known.end(), before);
        }
        const DocEntry& e0 = d0.entry(x);
        bool complete = e0.complete();
        if (!complete && !old.empty()) {
          const RankKey t0{e0.tail_shared, d0.entry(e0.tail_other).chunks, d0.ext(e0.tail_other)};
          // known is in ranking order: the entries at or above t0 are a prefix.
          known.erase(std::partition_point(known.begin(), known.end(),
                                           [&](const TopEntry& t) { return !RankBefore(t0, KeyOf(dn, t)); }),
                      known.end());
        }
        if (complete || known.size() >= K) {
          if (known.size() > keep) {
            known.resize(keep);
            complete = false;
          }
        } else {
          if (!counters[slot]) counters[slot] = std::make_unique<Counter>(slots1);
          Counter& c = *counters[slot];
          s = s1->Chunks(x, &chunks);
          if (s.ok()) s = c.CountLookup(s1->postings(), chunks, x);
          if (!s.ok()) {
            err.Set(s);
            c.Clear();
            return;
          }
          complete = TopOfCounter(P, dn, dn.entry(x).chunks, c, &known);
          c.Clear();
          aff_recount[i] = 1;
        }
        aff_complete[i] = complete;
        aff_changed[i] = known != old || complete != e0.complete();
        if (aff_changed[i]) RowDiff(x, old, known, K, &aff_rows[i]);
      }
    }, o_.stop);
    if (o_.stop && o_.stop->load()) return fail(Cancelled());
    if (!err.ok()) return fail(err.get());
  }

  timer.Step("affected lists merged");
  // 6. The new top lists (new documents and changed partners), in id order; the row changes of the table
  // (the first K entries of each list) for the unchanged documents.
  Directory* dm = s1->mutable_directory();
  {
    const uint32_t f_tops = m1.next_file++;
    RecordWriter tw;
    Status s = tw.Open(dir + "/" + TopsName(f_tops), kTopRecords, 8);
    if (!s.ok()) return fail(s);
    std::vector<uint8_t> buf;
    size_t ni = 0, ai = 0;
    while ((ni < news.size() || ai < affected.size()) && s.ok()) {
      if (ai >= affected.size() || (ni < news.size() && news[ni].id < affected[ai])) {
        sum->upserted.push_back(news[ni].id);
        s = SetTop(&dm->mutable_entry(news[ni].id), news[ni].id, new_top[ni], new_complete[ni], &tw, f_tops, &buf);
        ni++;
      } else {
        if (aff_changed[ai]) {
          sum->affected++;
          sum->recounted += aff_recount[ai];
          s = SetTop(&dm->mutable_entry(affected[ai]), affected[ai], aff_top[ai], aff_complete[ai], &tw, f_tops, &buf);
          sum->rows.insert(sum->rows.end(), aff_rows[ai].begin(), aff_rows[ai].end());
        }
        ai++;
      }
    }
    if (s.ok()) {
      if (tw.records() == 0) {
        tw.Abort();
      } else {
        s = tw.Commit();
        if (s.ok()) {
          written.push_back(dir + "/" + TopsName(f_tops));
          m1.top_files.push_back(f_tops);
        }
      }
    }
    if (!s.ok()) return fail(s);
  }
  // Top-list files no document refers to any more are dropped.
  {
    std::vector<uint8_t> used_top(m1.next_file, 0), used_doc(m1.next_file, 0);
    for (uint32_t id = 0; id < dm->slots(); id++) {
      const DocEntry& e = dm->entry(id);
      if (!e.live()) continue;
      used_doc[e.doc_file] = 1;
      if (e.top_file) used_top[e.top_file] = 1;
    }
    auto keep = [](std::vector<uint32_t>* v, const std::vector<uint8_t>& used) {
      v->erase(std::remove_if(v->begin(), v->end(), [&](uint32_t f) { return !used[f]; }), v->end());
    };
    keep(&m1.top_files, used_top);
    keep(&m1.doc_files, used_doc);
  }

  timer.Step("top lists written");
  // 7. Compaction: segments (too many per part, or as many dead postings as live ones), record files.
  std::unique_ptr<Directory> dfinal = std::make_unique<Directory>(std::move(*dm));
  s1.reset();
  std::shared_ptr<State> s2;
  {
    Status s = State::Open(dir, m1, std::move(dfinal), false, &s2);
    if (!s.ok()) return fail(s);
  }
  Directory* dc = s2->mutable_directory();
  {
    uint64_t total_posts = 0, live_chunks = 0;
    for (const auto& g : m1.segments) total_posts += g.posts;
    for (uint32_t id = 0; id < dc->slots(); id++)
      if (dc->entry(id).live()) live_chunks += dc->entry(id).chunks;
    const bool full = compact || total_posts > 2 * live_chunks + (uint64_t(1) << 20);
    std::vector<SegmentRef> segs;
    for (uint32_t p = 0; p < P.parts; p++) {
      std::vector<SegmentRef> mine;
      for (const auto& g : m1.segments)
        if (g.part == p) mine.push_back(g);
      std::vector<uint32_t> merge;
      if (full ? mine.size() > 1 || (!mine.empty() && !m1.tombstones.empty()) : mine.size() > kMaxSegmentsPerPart) {
        auto largest = std::max_element(mine.begin(), mine.end(),
                                         [](const SegmentRef& a, const SegmentRef& b) { return a.posts < b.posts; });
        uint64_t rest = 0;
        for (const auto& g : mine)
          if (&g != &*largest) rest += g.posts;
        for (const auto& g : mine)
          if (full || &g != &*largest || largest->posts <= 4 * rest) merge.push_back(g.file);
      }
      if (merge.size() < 2 && !(full && merge.size() == 1)) {
        segs.insert(segs.end(), mine.begin(), mine.end());
        continue;
      }
      const uint32_t f = m1.next_file++;
      const std::string path = dir + "/" + SegmentName(p, f);
      uint64_t posts = 0;
      Status s = MergeSegments(*s2, p, merge, path, o_, &posts);
      if (!s.ok()) return fail(s);
      written.push_back(path);
      sum->merged = true;
      for (const auto& g : mine)
        if (std::find(merge.begin(), merge.end(), g.file) == merge.end()) segs.push_back(g);
      if (posts > 0)
        segs.push_back(SegmentRef{p, f, g1, posts});
      else
        io::os::RemoveFile(path);
    }
    std::sort(segs.begin(), segs.end(),
              [](const SegmentRef& a, const SegmentRef& b) { return a.part != b.part ? a.part < b.part : a.file < b.file; });
    m1.segments = segs;
    // A tombstone is needed while a segment it can kill remains.
    uint32_t oldest = UINT32_MAX;
    for (const auto& g : m1.segments) oldest = std::min(oldest, g.gen);
    m1.tombstones.erase(std::remove_if(m1.tombstones.begin(), m1.tombstones.end(),
                                       [&](const Tombstone& t) { return t.gen < oldest; }),
                        m1.tombstones.end());
  }
  auto rewrite = [&](RecordKind kind) -> Status {
    const bool docs = kind == kDocRecords;
    const std::vector<uint32_t>& files = docs ? m1.doc_files : m1.top_files;
    uint64_t file_bytes = 0, live_bytes = 0;
    for (uint32_t f : files) {
      io::MappedFile mf;
      Status s = mf.Open(dir + "/" + (docs ? DocsName(f) : TopsName(f)));
      if (!s.ok()) return s;
      file_bytes += mf.size();
    }
    for (uint32_t id = 0; id < dc->slots(); id++) {
      const DocEntry& e = dc->entry(id);
      if (!e.live()) continue;
      if (docs)
        live_bytes += RecordBytes(e.chunks, w);
      else if (e.top_count)
        live_bytes += RecordBytes(e.top_count, 8);
    }
    const bool needed = compact || files.size() > kMaxRecordFiles || file_bytes > 2 * live_bytes + (uint64_t(1) << 20);
    if (!needed || files.empty()) return Status::Ok();
    const uint32_t f = m1.next_file++;
    const std::string path = dir + "/" + (docs ? DocsName(f) : TopsName(f));
    RecordWriter rw;
    Status s = rw.Open(path, kind, docs ? w : 8);
    std::vector<uint64_t> chunks;
    std::vector<TopEntry> top;
    std::vector<uint8_t> buf;
    for (uint32_t id = 0; id < dc->slots() && s.ok(); id++) {
      DocEntry& e = dc->mutable_entry(id);
      if (!e.live()) continue;
      if (docs) {
        s = s2->Chunks(id, &chunks);
        if (!s.ok()) break;
        EncodeChunks(chunks, w, &buf);
        uint64_t off = 0;
        s = rw.Add(id, buf.data(), uint32_t(chunks.size()), &off);
        e.doc_file = f;
        e.doc_off = off;
      } else if (e.top_count) {
        s = s2->Top(id, &top);
        if (!s.ok()) break;
        EncodeTop(top, &buf);
        uint64_t off = 0;
        s = rw.Add(id, buf.data(), uint32_t(top.size()), &off);
        e.top_file = f;
        e.top_off = off;
      }
    }
    if (s.ok()) s = rw.Commit();
    if (!s.ok()) return s;
    written.push_back(path);
    sum->merged = true;
    (docs ? m1.doc_files : m1.top_files) = {f};
    return Status::Ok();
  };
  {
    Status s = rewrite(kDocRecords);
    if (s.ok()) s = rewrite(kTopRecords);
    if (!s.ok()) return fail(s);
  }

  timer.Step("compaction");
  // 8. The directory and PENDING.
  auto dlast = std::make_unique<Directory>(std::move(*dc));
  s2.reset();
  m1.directory = m1.next_file++;
  Status s = WriteRun(dir, kPendingName, &m1, std::move(dlast), pending);
  timer.Step("directory, manifest");
  if (!s.ok()) {
    written.push_back(dir + "/" + DirectoryName(m1.directory));
    written.push_back(dir + "/" + kPendingName);
    pending->reset();
    return fail(s);
  }
  return Status::Ok();
}

}  // namespace chunks
}  // namespace neardup
