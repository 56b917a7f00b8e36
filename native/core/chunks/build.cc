// Full runs: chunking into the per-document table, the parts' segments, and the counting of shared chunks
// (CSR of the shared chunk ids, transposed, document at a time) straight into top lists. A CSR that does not
// fit the budget is built range by range of the chunk-id space into spill files that are mapped for the
// counting; the parts of a staged build count into partial pair files that are summed per document.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "chunks/index.h"
#include "chunks/internal.h"
#include "hash/fast64.h"
#include "io/file.h"
#include "io/os.h"
#include "io/temp_names.h"
#include "minhash/spill.h"
#include "parallel/pool.h"
#include "util/endian.h"

namespace neardup {
namespace chunks {

void EncodeChunks(const std::vector<uint64_t>& chunks, uint32_t item_bytes, std::vector<uint8_t>* out) {
  out->resize(chunks.size() * item_bytes);
  uint8_t* p = out->data();
  if (item_bytes == 8) {
    for (size_t i = 0; i < chunks.size(); i++) StoreLe64(p + 8 * i, chunks[i]);
  } else {
    for (size_t i = 0; i < chunks.size(); i++) StoreLe32(p + 4 * i, uint32_t(chunks[i]));
  }
}

void EncodeTop(const std::vector<TopEntry>& top, std::vector<uint8_t>* out) {
  out->resize(top.size() * 8);
  for (size_t i = 0; i < top.size(); i++) {
    StoreLe32(out->data() + 8 * i, top[i].other);
    StoreLe32(out->data() + 8 * i + 4, top[i].shared);
  }
}

Status SetTop(DocEntry* e, uint32_t id, const std::vector<TopEntry>& v, bool complete, RecordWriter* w, uint32_t file,
              std::vector<uint8_t>* buf) {
  e->flags = (e->flags & 1) | (complete ? 2 : 0);
  e->top_file = 0;
  e->top_off = 0;
  e->top_count = e->tail_other = e->tail_shared = 0;
  if (v.empty()) return Status::Ok();
  EncodeTop(v, buf);
  Status s = w->Add(id, buf->data(), uint32_t(v.size()), &e->top_off);
  e->top_file = file;
  e->top_count = uint32_t(v.size());
  e->tail_other = v.back().other;
  e->tail_shared = v.back().shared;
  return s;
}

Status WriteRun(const std::string& dir, const std::string& which, Manifest* m, std::unique_ptr<Directory> d,
                std::shared_ptr<State>* out) {
  Status s = d->Save(dir + "/" + DirectoryName(m->directory));
  if (!s.ok()) return s;
  s = WriteManifest(dir + "/" + which, *m);
  if (!s.ok()) return s;
  return State::Open(dir, *m, std::move(d), false, out);
}

namespace {

std::string TmpOf(const std::string& dir, const RunOptions& o) { return o.tmp.empty() ? dir : o.tmp; }

Status Cancelled() { return Status(Code::kCancelled, "cancelled"); }

// ------------------------------------------------------------------------------------------------- sinks

// Per-document results of a block of documents: Process / FromCounter run in parallel, Emit in id order.
// The byte they return travels to Emit (top lists: whether the list is complete).
class Sink {
 public:
  virtual ~Sink() = default;
  // From summed counts (other, shared), ascending by other.
  virtual uint8_t Process(uint32_t a, std::vector<TopEntry>* v) = 0;
  // From a counter (every touched document).
  virtual uint8_t FromCounter(uint32_t a, const Counter& c, std::vector<TopEntry>* v) {
    v->resize(c.size());
    for (size_t i = 0; i < c.size(); i++) (*v)[i] = TopEntry{c.touched()[i], c.count(c.touched()[i])};
    return Process(a, v);
  }
  virtual Status Emit(uint32_t a, const std::vector<TopEntry>& v, uint8_t flag) = 0;
};

// Top lists into a record file and the directory.
class TopSink : public Sink {
 public:
  TopSink(const IndexParams& p, Directory* d, RecordWriter* w, uint32_t file) : p_(p), d_(d), w_(w), file_(file) {}
  uint8_t Process(uint32_t a, std::vector<TopEntry>* v) override { return SelectTop(p_, *d_, d_->entry(a).chunks, v); }
  uint8_t FromCounter(uint32_t a, const Counter& c, std::vector<TopEntry>* v) override {
    return TopOfCounter(p_, *d_, d_->entry(a).chunks, c, v);
  }
  Status Emit(uint32_t a, const std::vector<TopEntry>& v, uint8_t complete) override {
    DocEntry& e = d_->mutable_entry(a);
    return SetTop(&e, a, v, complete, w_, file_, &buf_);
  }

 private:
  const IndexParams& p_;
  Directory* d_;
  RecordWriter* w_;
  uint32_t file_;
  std::vector<uint8_t> buf_;
};

// Partial counts into a pairs file.
class PairsSink : public Sink {
 public:
  explicit PairsSink(PairsWriter* w) : w_(w) {}
  uint8_t Process(uint32_t, std::vector<TopEntry>* v) override {
    std::sort(v->begin(), v->end(), [](const TopEntry& x, const TopEntry& y) { return x.other < y.other; });
    return 0;
  }
  Status Emit(uint32_t a, const std::vector<TopEntry>& v, uint8_t) override {
    if (v.empty()) return Status::Ok();
    buf_.resize(v.size());
    for (size_t i = 0; i < v.size(); i++) buf_[i] = {v[i].other, v[i].shared};
    return w_->Add(a, buf_);
  }

 private:
  PairsWriter* w_;
  std::vector<std::pair<uint32_t, uint32_t>> buf_;
};

constexpr uint32_t kBlock = 4096;

// --------------------------------------------------------------------------------------------------- CSR

struct EntryRange {
  uint64_t begin, end;
};

// Key-table ranges of one segment whose shared lists (keys of two documents or more) fit the budget.
template <typename Key>
std::vector<EntryRange> PlanRanges(const postings::BasicSegment<Key>& seg, uint32_t slots, uint64_t memory) {
  const uint64_t fixed = 16 * (uint64_t(slots) + 1) + 8 * uint64_t(slots) * parallel::MaxSlots();
  std::vector<EntryRange> out;
  uint64_t begin = 0, cost = 0;
  const uint64_t n = seg.num_keys();
  postings::BlockCursor<Key> cur(seg);
  for (uint64_t i = 0; i < n; i++) {
    const uint32_t c = cur.entry(i).count;
    if (c < 2) continue;
    // the list and its grouped copy (or transpose); per key its index, start, hash, order, group start and weight
    const uint64_t add = uint64_t(c) * 8 + 44;
    if (memory && cost > 0 && fixed + cost + add > memory) {
      out.push_back({begin, i});
      begin = i;
      cost = 0;
    }
    cost += add;
  }
  out.push_back({begin, n});
  return out;
}

// Shared chunk ids of one range, as groups: keys whose document lists are the same are one group of weight
// `weight[g]` (the chunks of a copied passage or of a stock phrase all have one list: a document then adds
// its partners once per group, not once per chunk). Group g's documents are docs[start[g] .. start[g + 1]);
// document a's groups are group_of[doc_start[a] .. doc_start[a + 1]).
struct CsrView {
  const uint64_t* start = nullptr;
  const uint64_t* doc_start = nullptr;
  const uint32_t* docs = nullptr;
  const uint32_t* weight = nullptr;
  const uint32_t* group_of = nullptr;
};

struct Csr {
  std::vector<uint64_t> start, doc_start;
  std::vector<uint32_t> docs, weight, group_of;
  CsrView View() const { return {start.data(), doc_start.data(), docs.data(), weight.data(), group_of.data()}; }
};

template <typename Key>
Status LoadCsr(const postings::BasicSegment<Key>& seg, EntryRange r, uint32_t slots, const std::atomic<bool>* stop,
               Csr* c, bool transpose = true) {
  std::vector<uint64_t> idx, key_start{0};
  postings::BlockCursor<Key> cur(seg);
  size_t shared = 0;
  for (uint64_t i = r.begin; i < r.end; i++) shared += cur.entry(i).count >= 2;
  idx.reserve(shared);  // exactly: growth by doubling would hold up to twice the budget's estimate
  key_start.reserve(shared + 1);
  for (uint64_t i = r.begin; i < r.end; i++) {
    const uint32_t n = cur.entry(i).count;
    if (n < 2) continue;
    idx.push_back(i);
    key_start.push_back(key_start.back() + n);
  }
  std::vector<uint32_t> docs(key_start.back());
  std::vector<uint64_t> hash(idx.size());
  FirstError err;
  const size_t nslots = parallel::MaxSlots();
  parallel::ParallelFor(idx.size(), 1024, nslots, [&](size_t b, size_t e, size_t) {
    std::vector<uint32_t> tmp;
    postings::BlockCursor<Key> lists(seg);  // idx ascends: a thread's keys share key blocks
    for (size_t k = b; k < e; k++) {
      tmp.clear();
      Status s = lists.Decode(idx[k], &tmp);
      if (s.ok() && tmp.size() != key_start[k + 1] - key_start[k])
        s = Status(Code::kCorrupt, "'" + seg.path() + "': a list differs from its count");
      if (s.ok() && !tmp.empty() && tmp.back() >= slots)
        s = Status(Code::kCorrupt, "'" + seg.path() + "': document " + std::to_string(tmp.back()) + " is beyond the index");
      if (!s.ok()) {
        err.Set(s);
        return;
      }
      std::memcpy(docs.data() + key_start[k], tmp.data(), tmp.size() * 4);
      hash[k] = fast64::Hash(tmp.data(), tmp.size() * 4);
    }
  }, stop);
  if (stop && stop->load()) return Cancelled();
  if (!err.ok()) return err.get();
  std::vector<uint64_t>().swap(idx);
  // Group equal lists: keys ordered by (hash, length, first key); equal neighbours compared in full.
  std::vector<uint32_t> order(hash.size());
  for (uint32_t k = 0; k < order.size(); k++) order[k] = k;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (hash[a] != hash[b]) return hash[a] < hash[b];
    return a < b;
  });
  auto same = [&](uint32_t a, uint32_t b) {
    const uint64_t la = key_start[a + 1] - key_start[a], lb = key_start[b + 1] - key_start[b];
    return hash[a] == hash[b] && la == lb && std::memcmp(docs.data() + key_start[a], docs.data() + key_start[b], la * 4) == 0;
  };
  c->start.assign(1, 0);
  c->docs.clear();
  c->weight.clear();
  // upper bounds (no two lists equal): pages never written are never resident, and nothing is copied to grow
  c->docs.reserve(docs.size());
  c->start.reserve(order.size() + 1);
  c->weight.reserve(order.size());
  for (size_t i = 0; i < order.size();) {
    const uint32_t k = order[i];
    size_t j = i + 1;
    while (j < order.size() && same(k, order[j])) j++;
    c->docs.insert(c->docs.end(), docs.begin() + key_start[k], docs.begin() + key_start[k + 1]);
    c->start.push_back(c->docs.size());
    c->weight.push_back(uint32_t(j - i));
    i = j;
  }
  std::vector<uint32_t>().swap(docs);
  if (!transpose) return Status::Ok();
  c->doc_start.assign(size_t(slots) + 1, 0);
  for (uint32_t a : c->docs) c->doc_start[a + 1]++;
  for (size_t a = 0; a < slots; a++) c->doc_start[a + 1] += c->doc_start[a];
  c->group_of.resize(c->docs.size());
  std::vector<uint64_t> pos(c->doc_start.begin(), c->doc_start.end() - 1);
  const size_t groups = c->start.size() - 1;
  for (size_t g = 0; g < groups; g++)
    for (uint64_t j = c->start[g]; j < c->start[g + 1]; j++) c->group_of[pos[c->docs[j]]++] = uint32_t(g);
  return Status::Ok();
}

// A block's result lists keep their capacity from block to block; one that grew beyond this many entries (a
// pairs list of a document touching many others) is released after it is emitted, so that the block's 4096
// lists do not each keep the largest list they ever held (at 1M documents that alone exceeded --memory).
constexpr size_t kKeepCapacity = 1024;

// Emits the n results of the block starting at document `first`, in id order, releasing large lists.
Status EmitBlock(Sink* sink, uint32_t first, uint32_t n, std::vector<std::vector<TopEntry>>* block,
                 const std::vector<uint8_t>& flags) {
  for (uint32_t i = 0; i < n; i++) {
    Status s = sink->Emit(first + i, (*block)[i], flags[i]);
    if (!s.ok()) return s;
    std::vector<TopEntry>& v = (*block)[i];
    if (v.capacity() > kKeepCapacity) std::vector<TopEntry>().swap(v);
  }
  return Status::Ok();
}

Status CountCsr(const CsrView& c, uint32_t slots, Sink* sink, const std::atomic<bool>* stop) {
  const size_t nslots = parallel::MaxSlots();
  std::vector<std::unique_ptr<Counter>> counters(nslots);
  // per thread: the candidates a counter yields before the sink selects from them (every document the
  // current one shares a chunk with); only the selection is copied into the block
  std::vector<std::vector<TopEntry>> scratch(nslots);
  std::vector<std::vector<TopEntry>> block(kBlock);
  std::vector<uint8_t> flags(kBlock);
  for (uint32_t first = 0; first < slots; first += kBlock) {
    const uint32_t n = std::min<uint32_t>(kBlock, slots - first);
    parallel::ParallelFor(n, 16, nslots, [&](size_t b, size_t e, size_t slot) {
      if (!counters[slot]) counters[slot] = std::make_unique<Counter>(slots);
      Counter& ct = *counters[slot];
      std::vector<TopEntry>& v = scratch[slot];
      for (size_t i = b; i < e; i++) {
        const uint32_t a = first + uint32_t(i);
        v.clear();
        flags[i] = 1;
        ct.Exclude(a);
        for (uint64_t j = c.doc_start[a]; j < c.doc_start[a + 1]; j++) {
          const uint32_t g = c.group_of[j];
          ct.AddRange(c.docs + c.start[g], c.docs + c.start[g + 1], c.weight[g]);
        }
        if (ct.size() > 0) flags[i] = sink->FromCounter(a, ct, &v);
        block[i].assign(v.begin(), v.end());
        ct.Clear();
      }
    }, stop);
    if (stop && stop->load()) return Cancelled();
    Status s = EmitBlock(sink, first, n, &block, flags);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

// A CSR too large for the budget: each range's groups are built in memory (LoadCsr without the transpose) and
// appended to spill files; the transpose is then written in passes over document ranges whose part of it fits
// the budget. The counting reads the four arrays through read-only maps (page cache, not the process's
// memory); only doc_start (8 bytes per document) stays in memory. The files are removed after their maps
// are gone (members are destroyed in reverse order).
struct SpilledCsr {
  lsh::TempFile docs_f, weight_f, start_f, group_f;
  io::MappedFile docs, weight, start, group_of;
  std::vector<uint64_t> doc_start;
  CsrView View() const {
    return {reinterpret_cast<const uint64_t*>(start.data()), doc_start.data(),
            reinterpret_cast<const uint32_t*>(docs.data()), reinterpret_cast<const uint32_t*>(weight.data()),
            reinterpret_cast<const uint32_t*>(group_of.data())};
  }
};

// Closes a spill file written in pieces and maps it.
Status MapSpill(lsh::TempFile* f, io::MappedFile* out) {
  Status s = f->Finish();
  return s.ok() ? out->Open(f->path()) : s;
}

template <typename Key>
Status SpillCsr(const postings::BasicSegment<Key>& seg, const std::vector<EntryRange>& ranges, uint32_t slots,
                uint64_t memory, const std::string& spill, const std::atomic<bool>* stop, SpilledCsr* out) {
  lsh::TempFile &docs_f = out->docs_f, &weight_f = out->weight_f, &start_f = out->start_f, &group_f = out->group_f;
  Status s = docs_f.Create(spill, "csr-docs");
  if (s.ok()) s = weight_f.Create(spill, "csr-weight");
  if (s.ok()) s = start_f.Create(spill, "csr-start");
  if (s.ok()) s = group_f.Create(spill, "csr-groups");
  if (!s.ok()) return s;
  std::vector<uint64_t>& doc_start = out->doc_start;
  doc_start.assign(size_t(slots) + 1, 0);
  uint64_t posts = 0, groups = 0;
  const uint64_t zero = 0;
  s = start_f.Append(&zero, 8);
  std::vector<uint64_t> shifted;
  for (size_t r = 0; s.ok() && r < ranges.size(); r++) {
    Csr c;
    s = LoadCsr(seg, ranges[r], slots, stop, &c, false);
    if (!s.ok()) return s;
    if (uint64_t(groups) + c.weight.size() > UINT32_MAX)
      return Status(Code::kInvalidArgument, "'" + seg.path() + "': more than 2^32 - 1 groups of shared chunks");
    s = docs_f.Append(c.docs.data(), c.docs.size() * 4);
    if (s.ok()) s = weight_f.Append(c.weight.data(), c.weight.size() * 4);
    shifted.resize(c.weight.size());
    for (size_t g = 0; g < c.weight.size(); g++) shifted[g] = posts + c.start[g + 1];
    if (s.ok()) s = start_f.Append(shifted.data(), shifted.size() * 8);
    for (uint32_t a : c.docs) doc_start[a + 1]++;
    posts += c.docs.size();
    groups += c.weight.size();
  }
  std::vector<uint64_t>().swap(shifted);
  io::os::ReleaseFreeMemory();
  if (s.ok()) s = MapSpill(&docs_f, &out->docs);
  if (s.ok()) s = MapSpill(&weight_f, &out->weight);
  if (s.ok()) s = MapSpill(&start_f, &out->start);
  if (!s.ok()) return s;
  for (size_t a = 0; a < slots; a++) doc_start[a + 1] += doc_start[a];
  // The transpose, a document range at a time: each pass reads every group's list and keeps the entries of
  // its documents (the passes' buffer is at most a quarter of the budget, one document's entries at least).
  const CsrView v = out->View();
  const uint64_t cap = std::max<uint64_t>(memory / 16, 1);  // entries of 4 bytes
  std::vector<uint32_t> buf;
  std::vector<uint64_t> pos;
  for (uint32_t d0 = 0; d0 < slots;) {
    uint32_t d1 = d0 + 1;
    while (d1 < slots && doc_start[d1 + 1] - doc_start[d0] <= cap) d1++;
    const uint64_t base = doc_start[d0];
    buf.resize(doc_start[d1] - base);
    pos.assign(doc_start.begin() + d0, doc_start.begin() + d1);
    if (!buf.empty()) {
      for (uint64_t g = 0; g < groups; g++) {
        if (stop && (g & 0xFFFF) == 0 && stop->load()) return Cancelled();
        for (uint64_t j = v.start[g]; j < v.start[g + 1]; j++) {
          const uint32_t a = v.docs[j];
          if (a >= d0 && a < d1) buf[pos[a - d0]++ - base] = uint32_t(g);
        }
      }
      s = group_f.Append(buf.data(), buf.size() * 4);
      if (!s.ok()) return s;
    }
    d0 = d1;
  }
  return MapSpill(&group_f, &out->group_of);
}

// Sums pair files per document (each file's lists ascending by document) into the sink.
Status MergePairs(std::vector<std::unique_ptr<PairsReader>>& rs, uint32_t slots, Sink* sink,
                  const std::atomic<bool>* stop) {
  struct Cur {
    bool has = false;
    uint32_t a = 0;
    std::vector<std::pair<uint32_t, uint32_t>> e;
  };
  std::vector<Cur> cur(rs.size());
  auto advance = [&](size_t r) -> Status {
    Status s;
    cur[r].has = rs[r]->Next(&cur[r].a, &cur[r].e, &s);
    return s;
  };
  for (size_t r = 0; r < rs.size(); r++) {
    Status s = advance(r);
    if (!s.ok()) return s;
  }
  const size_t nslots = parallel::MaxSlots();
  std::vector<std::vector<TopEntry>> block(kBlock);
  std::vector<uint8_t> flags(kBlock);
  for (uint32_t first = 0; first < slots; first += kBlock) {
    if (stop && stop->load()) return Cancelled();
    const uint32_t n = std::min<uint32_t>(kBlock, slots - first);
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t a = first + i;
      auto& v = block[i];
      v.clear();
      size_t from = 0;
      for (size_t r = 0; r < rs.size(); r++) {
        if (!cur[r].has || cur[r].a != a) continue;
        for (const auto& x : cur[r].e) v.push_back(TopEntry{x.first, x.second});
        from++;
        Status s = advance(r);
        if (!s.ok()) return s;
      }
      if (from > 1) {
        std::sort(v.begin(), v.end(), [](const TopEntry& x, const TopEntry& y) { return x.other < y.other; });
        size_t w = 0;
        for (size_t j = 0; j < v.size(); j++) {
          if (w > 0 && v[w - 1].other == v[j].other)
            v[w - 1].shared += v[j].shared;
          else
            v[w++] = v[j];
        }
        v.resize(w);
      }
    }
    parallel::ParallelFor(n, 64, nslots, [&](size_t b, size_t e, size_t) {
      for (size_t i = b; i < e; i++) flags[i] = block[i].empty() ? 1 : sink->Process(first + uint32_t(i), &block[i]);
    }, stop);
    if (stop && stop->load()) return Cancelled();
    Status s = EmitBlock(sink, first, n, &block, flags);
    if (!s.ok()) return s;
  }
  for (size_t r = 0; r < rs.size(); r++)
    if (cur[r].has) return CorruptAt(rs[r]->path(), 0, "document " + std::to_string(cur[r].a) + " is beyond the index");
  return Status::Ok();
}

// Opens pair files and merges them in groups so that at most kFanIn are open at once.
constexpr size_t kFanIn = 64;

Status OpenReaders(const std::vector<std::string>& paths, std::vector<std::unique_ptr<PairsReader>>* rs) {
  rs->clear();
  for (const auto& p : paths) {
    auto r = std::make_unique<PairsReader>();
    Status s = r->Open(p);
    if (!s.ok()) return s;
    rs->push_back(std::move(r));
  }
  return Status::Ok();
}

// Reduces `paths` (pair files of one build) to at most kFanIn files, merging groups into files in `spill`.
Status ReduceFanIn(std::vector<std::string>* paths, const PairsInfo& info, const std::string& spill,
                   const std::atomic<bool>* stop, std::vector<std::string>* made) {
  int round = 0;
  while (paths->size() > kFanIn) {
    std::vector<std::string> next;
    for (size_t i = 0; i < paths->size(); i += kFanIn) {
      std::vector<std::string> group(paths->begin() + i, paths->begin() + std::min(paths->size(), i + kFanIn));
      std::vector<std::unique_ptr<PairsReader>> rs;
      Status s = OpenReaders(group, &rs);
      if (!s.ok()) return s;
      const std::string out = spill + "/merged-" + std::to_string(round) + "-" + std::to_string(i) + ".ckp";
      PairsWriter w;
      s = w.Open(out, info);
      if (!s.ok()) return s;
      made->push_back(out);
      PairsSink sink(&w);
      s = MergePairs(rs, info.slots, &sink, stop);
      if (s.ok()) s = w.Commit();
      if (!s.ok()) return s;
      next.push_back(out);
    }
    *paths = std::move(next);
    round++;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------------------------- parts

struct Staged {
  std::shared_ptr<State> st;
  uint32_t first_seg = 0;  // file number of part 0's segment
};

Status OpenStaged(const std::string& dir, Staged* out) {
  Status s = State::Open(dir, kStageName, false, &out->st);
  if (!s.ok()) return s;
  const Manifest& m = out->st->manifest();
  if (m.state != kStaged || m.next_file < m.params.parts + 2)
    return Status(Code::kCorrupt, "'" + dir + "/" + kStageName + "' is not a staged build");
  out->first_seg = m.next_file - m.params.parts;
  return Status::Ok();
}

template <typename Key>
Status BuildPartT(const State& st, uint32_t p, const std::string& path, const RunOptions& o) {
  uint64_t lo, hi;
  PartRange(st.params().chunk.bits, st.params().parts, p, &lo, &hi);
  postings::BasicSegmentBuilder<Key> b(o.memory, TmpOf(st.dir(), o));
  std::vector<uint64_t> chunks;
  std::vector<Key> keys;
  const Directory& d = st.directory();
  for (uint32_t id = 0; id < d.slots(); id++) {
    if (!d.entry(id).live()) continue;
    if (o.stop && (id & 4095) == 0 && o.stop->load()) return Cancelled();
    Status s = st.Chunks(id, &chunks);
    if (!s.ok()) return s;
    auto b0 = std::lower_bound(chunks.begin(), chunks.end(), lo);
    auto b1 = hi == UINT64_MAX ? chunks.end() : std::upper_bound(b0, chunks.end(), hi);
    if (b0 == b1) continue;
    keys.assign(b0, b1);
    s = b.Add(id, keys.data(), keys.size());
    if (!s.ok()) return s;
  }
  return b.Finish(path, o.stop);
}

// Counts one part of a staged build: its ranges straight into `sink_for_one` when the part fits the
// budget in one range, else into pair files (in `spill`), returned in *pair_paths.
template <typename Key>
Status CountPartT(const State& st, const std::string& seg_path, uint32_t part, const RunOptions& o, bool direct_ok,
                  Sink* direct, const std::string& spill, std::vector<std::string>* pair_paths, bool* was_direct) {
  postings::BasicSegment<Key> seg;
  Status s = seg.Open(seg_path, false);
  if (!s.ok()) return s;
  const uint32_t slots = uint32_t(st.directory().slots());
  // Half the budget for the lists of a range: loading one holds its decoded lists, their hashes and the
  // grouped copy at once, and the counters (8 bytes per document and thread) come on top.
  const auto ranges = PlanRanges(seg, slots, o.memory / 2);
  *was_direct = direct_ok;
  if (direct_ok && ranges.size() > 1) {
    SpilledCsr c;
    StepTimer timer;
    s = SpillCsr(seg, ranges, slots, o.memory, spill, o.stop, &c);
    if (!s.ok()) return s;
    timer.Step("shared lists spilled, mapped");
    return CountCsr(c.View(), slots, direct, o.stop);
  }
  PairsInfo info;
  info.build_id = st.manifest().build_id;
  info.part = part;
  info.parts = st.params().parts;
  info.slots = slots;
  PartRange(st.params().chunk.bits, st.params().parts, part, &info.lo, &info.hi);
  for (size_t r = 0; r < ranges.size(); r++) {
    Csr c;
    StepTimer timer;
    s = LoadCsr(seg, ranges[r], slots, o.stop, &c);
    if (!s.ok()) return s;
    timer.Step("shared lists loaded");
    if (*was_direct) return CountCsr(c.View(), slots, direct, o.stop);
    const std::string path = spill + "/range-" + std::to_string(part) + "-" + std::to_string(r) + ".ckp";
    PairsWriter w;
    s = w.Open(path, info);
    if (!s.ok()) return s;
    pair_paths->push_back(path);
    PairsSink sink(&w);
    s = CountCsr(c.View(), slots, &sink, o.stop);
    if (s.ok()) s = w.Commit();
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status BuildPart(const State& st, uint32_t p, const std::string& path, const RunOptions& o) {
  return st.params().chunk.wide() ? BuildPartT<uint64_t>(st, p, path, o) : BuildPartT<uint32_t>(st, p, path, o);
}

Status CountPart(const State& st, const std::string& seg_path, uint32_t part, const RunOptions& o, bool direct_ok,
                 Sink* direct, const std::string& spill, std::vector<std::string>* pair_paths, bool* was_direct) {
  return st.params().chunk.wide()
             ? CountPartT<uint64_t>(st, seg_path, part, o, direct_ok, direct, spill, pair_paths, was_direct)
             : CountPartT<uint32_t>(st, seg_path, part, o, direct_ok, direct, spill, pair_paths, was_direct);
}

uint64_t SegmentPosts(const State& st, const std::string& path, Status* s) {
  if (st.params().chunk.wide()) {
    postings::Segment64 g;
    *s = g.Open(path, false);
    return g.num_posts();
  }
  postings::Segment g;
  *s = g.Open(path, false);
  return g.num_posts();
}

void RemoveAll(const std::vector<std::string>& paths) {
  for (const auto& p : paths) io::os::RemoveFile(p);
}

// Writes the final manifest of a full run (PENDING) from the staged one, with the top lists written to file
// number `tops_file` (the staged manifest's next_file).
Status FinishFullRun(const Staged& sg, std::unique_ptr<Directory> d, uint32_t tops_file,
                     std::shared_ptr<State>* pending) {
  const std::string& dir = sg.st->dir();
  Manifest m = sg.st->manifest();
  m.state = kIndex;
  m.top_files = {tops_file};
  m.next_file = tops_file + 1;
  m.segments.clear();
  for (uint32_t p = 0; p < m.params.parts; p++) {
    Status s;
    const std::string path = dir + "/" + SegmentName(p, sg.first_seg + p);
    SegmentRef r;
    r.part = p;
    r.file = sg.first_seg + p;
    r.gen = m.generation;
    r.posts = SegmentPosts(*sg.st, path, &s);
    if (!s.ok()) return s;
    m.segments.push_back(r);
  }
  m.directory = m.next_file++;
  return WriteRun(dir, kPendingName, &m, std::move(d), pending);
}

// The top lists of a staged build from pair files, then PENDING.
Status FinishFromPairs(const Staged& sg, std::vector<std::string> paths, const RunOptions& o,
                       std::shared_ptr<State>* pending) {
  const State& st = *sg.st;
  const std::string& dir = st.dir();
  const uint32_t slots = uint32_t(st.directory().slots());
  PairsInfo info;
  info.build_id = st.manifest().build_id;
  info.parts = st.params().parts;
  info.slots = slots;
  info.hi = st.params().chunk.bits >= 64 ? UINT64_MAX : (uint64_t(1) << st.params().chunk.bits) - 1;
  io::SpillDir spill;
  std::vector<std::string> made;
  if (paths.size() > kFanIn) {
    Status s = spill.Create(TmpOf(dir, o));
    if (!s.ok()) return s;
    s = ReduceFanIn(&paths, info, spill.path(), o.stop, &made);
    if (!s.ok()) {
      RemoveAll(made);
      return s;
    }
  }
  std::vector<std::unique_ptr<PairsReader>> rs;
  Status s = OpenReaders(paths, &rs);
  auto d = std::make_unique<Directory>(st.directory());
  const uint32_t tops_file = st.manifest().next_file;
  RecordWriter w;
  if (s.ok()) s = w.Open(dir + "/" + TopsName(tops_file), kTopRecords, 8);
  if (s.ok()) {
    TopSink sink(st.params(), d.get(), &w, tops_file);
    s = MergePairs(rs, slots, &sink, o.stop);
  }
  if (s.ok()) s = w.Commit();
  rs.clear();
  RemoveAll(made);
  if (!s.ok()) return s;
  return FinishFullRun(sg, std::move(d), tops_file, pending);
}

}  // namespace

// ------------------------------------------------------------------------------------------------ builder

Status Builder::Create(const std::string& dir, const IndexParams& p, const RunOptions& o) {
  Status s = ValidateParams(p);
  if (!s.ok()) return s;
  s = io::os::MakeDir(dir);
  if (!s.ok()) return s;
  io::os::PathInfo info;
  s = io::os::StatPath(dir + "/" + kManifestName, &info);
  if (!s.ok()) return s;
  if (info.exists) return Status(Code::kInvalidArgument, "'" + dir + "' already holds a chunk index");
  path_ = dir;
  p_ = p;
  o_ = o;
  m_ = Manifest();
  m_.generation = 1;
  m_.state = kStaged;
  m_.build_id = io::TempRandomBits();
  m_.params = p;
  const uint32_t f = m_.next_file++;
  m_.doc_files = {f};
  dir_.Reset(0);
  seen_.clear();
  finished_docs_ = false;
  return docs_.Open(dir + "/" + DocsName(f), kDocRecords, p.chunk.wide() ? 8 : 4);
}

Status Builder::Add(const std::vector<std::string_view>& ext, const Docs& texts, size_t* bad) {
  if (finished_docs_) return Status(Code::kInternal, "documents added after FinishDocs");
  const size_t n = texts.n;
  if (ext.size() != n) return Status(Code::kInternal, "ids and texts differ in number");
  if (uint64_t(dir_.slots()) + n > 0xfffffffeull)
    return Status(Code::kInvalidArgument, "an index holds at most 2^32 - 2 documents");
  std::vector<std::vector<uint64_t>> chunks(n);
  const size_t slots = parallel::MaxSlots();
  std::vector<std::unique_ptr<Chunker>> ch(slots);
  parallel::ParallelFor(n, 8, slots, [&](size_t b, size_t e, size_t slot) {
    if (!ch[slot]) ch[slot] = std::make_unique<Chunker>(p_.chunk);
    for (size_t i = b; i < e; i++) ch[slot]->Run(texts.ptr[i], texts.len[i], &chunks[i]);
  }, o_.stop);
  if (o_.stop && o_.stop->load()) return Cancelled();
  const uint32_t w = p_.chunk.wide() ? 8 : 4;
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < n; i++) {
    if (ext[i].empty() || ext[i].size() > kMaxExtIdBytes) {
      *bad = i;
      return Status(Code::kInvalidInput, "an id must be 1 to 65535 bytes of JSON");
    }
    const uint64_t h = fast64::Hash(ext[i].data(), ext[i].size());
    auto range = seen_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      if (dir_.ext(it->second) == ext[i]) {
        *bad = i;
        return Status(Code::kInvalidInput, "the id " + std::string(ext[i]) + " is given to two documents");
      }
    }
    const uint32_t id = uint32_t(dir_.slots());
    seen_.emplace(h, id);
    EncodeChunks(chunks[i], w, &buf);
    DocEntry e;
    e.flags = 1;
    e.chunks = uint32_t(chunks[i].size());
    e.doc_file = m_.doc_files[0];
    Status s = docs_.Add(id, buf.data(), e.chunks, &e.doc_off);
    if (!s.ok()) return s;
    dir_.Append(e, ext[i]);
  }
  return Status::Ok();
}

Status Builder::FinishDocs() {
  if (finished_docs_) return Status::Ok();
  Status s = docs_.Commit();
  if (!s.ok()) return s;
  s = dir_.Seal();
  if (!s.ok()) return s;
  std::unordered_multimap<uint64_t, uint32_t>().swap(seen_);
  m_.next_id = uint32_t(dir_.slots());
  m_.live = dir_.live();
  m_.directory = m_.next_file++;
  s = dir_.Save(path_ + "/" + DirectoryName(m_.directory));
  if (!s.ok()) return s;
  m_.next_file += p_.parts;  // the parts' segments: next_file - parts .. next_file - 1
  s = WriteManifest(path_ + "/" + kStageName, m_);
  if (!s.ok()) return s;
  dir_.Reset(0);
  finished_docs_ = true;
  return Status::Ok();
}

// The part of --memory the posting build and the counting may use. What the process already holds comes off
// first: where the system tells (Linux), the resident anonymous memory now (Node and its heap, what reading
// the input left behind, the directory), plus a second directory (the copy the top lists go into while
// counting) and a margin for the allocator and the threads' stacks; elsewhere an estimate (Node itself is
// ~50 MiB; 171 MiB were measured before the posting build of 300k documents). A quarter of the budget at
// least remains. The estimate alone let a 1M run on a loaded machine peak at 1,038 MiB under --memory 1G:
// reading had left 253 MiB where 192 were reserved.
static uint64_t WorkingBudget(uint64_t memory, const Directory& d) {
  if (memory == 0) return 0;
  const uint64_t held = io::os::AnonymousMemoryBytes();
  const uint64_t fixed = held ? held + d.MemoryBytes() + (uint64_t(32) << 20)
                              : 2 * d.MemoryBytes() + (uint64_t(192) << 20);
  return memory / 4 * 3 > fixed ? memory - fixed : memory / 4;
}

Status Builder::Finish(std::shared_ptr<State>* pending) {
  StepTimer timer;
  Status s = FinishDocs();
  if (!s.ok()) return s;
  timer.Step("chunk lists written");
  Staged sg;
  s = OpenStaged(path_, &sg);
  if (!s.ok()) return s;
  RunOptions o = o_;
  o.memory = WorkingBudget(o_.memory, sg.st->directory());
  const uint32_t parts = p_.parts;
  for (uint32_t p = 0; p < parts; p++) {
    s = BuildPart(*sg.st, p, path_ + "/" + SegmentName(p, sg.first_seg + p), o);
    if (!s.ok()) return s;
  }
  io::os::ReleaseFreeMemory();  // the posting build's pair chunks, before the counting allocates
  timer.Step("segments built");
  io::SpillDir spill;
  s = spill.Create(TmpOf(path_, o));
  if (!s.ok()) return s;
  std::vector<std::string> pairs;
  bool direct = false;
  if (parts == 1) {
    auto d = std::make_unique<Directory>(sg.st->directory());
    const uint32_t tops_file = sg.st->manifest().next_file;
    RecordWriter w;
    s = w.Open(path_ + "/" + TopsName(tops_file), kTopRecords, 8);
    if (!s.ok()) return s;
    TopSink sink(p_, d.get(), &w, tops_file);
    s = CountPart(*sg.st, path_ + "/" + SegmentName(0, sg.first_seg), 0, o, true, &sink, spill.path(), &pairs, &direct);
    if (!s.ok()) return s;
    if (direct) {
      s = w.Commit();
      if (!s.ok()) return s;
      timer.Step("counted (one range)");
      s = FinishFullRun(sg, std::move(d), tops_file, pending);
      timer.Step("directory, manifest");
      return s;
    }
    w.Abort();
  } else {
    for (uint32_t p = 0; p < parts; p++) {
      s = CountPart(*sg.st, path_ + "/" + SegmentName(p, sg.first_seg + p), p, o, false, nullptr, spill.path(), &pairs,
                    &direct);
      if (!s.ok()) return s;
    }
  }
  timer.Step("counted into pairs files");
  s = FinishFromPairs(sg, pairs, o, pending);
  timer.Step("pairs summed, top lists");
  return s;
}

Status StagePart(const std::string& dir, uint32_t part, uint32_t expect_parts, const std::string& pairs_path,
                 const RunOptions& o) {
  Staged sg;
  Status s = OpenStaged(dir, &sg);
  if (!s.ok()) return s;
  const State& st = *sg.st;
  const uint32_t parts = st.params().parts;
  if (expect_parts != 0 && expect_parts != parts)
    return Status(Code::kInvalidArgument, "'" + dir + "' was prepared with " + std::to_string(parts) + " parts, not " +
                                              std::to_string(expect_parts));
  if (part >= parts)
    return Status(Code::kInvalidArgument, "part " + std::to_string(part) + " of " + std::to_string(parts) + " does not exist");
  const std::string seg = dir + "/" + SegmentName(part, sg.first_seg + part);
  s = BuildPart(st, part, seg, o);
  if (!s.ok()) return s;
  io::SpillDir spill;
  s = spill.Create(TmpOf(dir, o));
  if (!s.ok()) return s;
  PairsInfo info;
  info.build_id = st.manifest().build_id;
  info.part = part;
  info.parts = parts;
  info.slots = uint32_t(st.directory().slots());
  PartRange(st.params().chunk.bits, parts, part, &info.lo, &info.hi);
  PairsWriter w;
  s = w.Open(pairs_path, info);
  if (!s.ok()) return s;
  PairsSink sink(&w);
  std::vector<std::string> ranges;
  bool direct = false;
  s = CountPart(st, seg, part, o, true, &sink, spill.path(), &ranges, &direct);
  if (s.ok() && !direct) {
    std::vector<std::string> made;
    s = ReduceFanIn(&ranges, info, spill.path(), o.stop, &made);
    std::vector<std::unique_ptr<PairsReader>> rs;
    if (s.ok()) s = OpenReaders(ranges, &rs);
    if (s.ok()) s = MergePairs(rs, info.slots, &sink, o.stop);
  }
  if (s.ok()) s = w.Commit();
  return s;
}

Status StageFinish(const std::string& dir, const std::vector<std::string>& pairs_paths, const RunOptions& o,
                   std::shared_ptr<State>* pending) {
  Staged sg;
  Status s = OpenStaged(dir, &sg);
  if (!s.ok()) return s;
  const State& st = *sg.st;
  const uint32_t parts = st.params().parts;
  std::vector<int> seen(parts, 0);
  for (const auto& p : pairs_paths) {
    PairsReader r;
    s = r.Open(p);
    if (!s.ok()) return s;
    const PairsInfo& i = r.info();
    uint64_t lo, hi;
    PartRange(st.params().chunk.bits, parts, i.part < parts ? i.part : 0, &lo, &hi);
    // The identity fields are payload, whose checksum is checked only at the end of the stream: a file that
    // does not match is read through first, so that a damaged one is reported as corrupt, not as another
    // build's (only on this error path).
    auto refuse = [&](const std::string& why) {
      uint32_t a;
      std::vector<std::pair<uint32_t, uint32_t>> entries;
      Status rs;
      while (r.Next(&a, &entries, &rs)) {
      }
      if (!rs.ok()) return rs;
      return Status(Code::kInvalidArgument, "'" + p + "' " + why);
    };
    if (i.build_id != st.manifest().build_id) return refuse("comes from another build");
    if (i.parts != parts || i.part >= parts || i.slots != st.directory().slots() || i.lo != lo || i.hi != hi)
      return refuse("does not match this build's parts");
    if (seen[i.part]++) return Status(Code::kInvalidArgument, "part " + std::to_string(i.part) + " is given twice");
  }
  for (uint32_t p = 0; p < parts; p++)
    if (!seen[p]) return Status(Code::kInvalidArgument, "the pairs of part " + std::to_string(p) + " are missing");
  return FinishFromPairs(sg, pairs_paths, o, pending);
}

Status CommitPending(const std::string& dir) {
  Status s = io::os::Rename(dir + "/" + kPendingName, dir + "/" + kManifestName);
  if (!s.ok()) return s;
  io::os::SyncDir(dir);
  io::os::RemoveFile(dir + "/" + kStageName);
  return Status::Ok();
}

}  // namespace chunks
}  // namespace neardup
