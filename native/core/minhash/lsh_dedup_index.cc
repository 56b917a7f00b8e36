#include "minhash/lsh_dedup_index.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "io/file.h"
#include "minhash/shingle_set.h"
#include "parallel/pool.h"

namespace neardup {
namespace lsh {
namespace {

const char* KeyKind(KeyType t) { return t == KeyType::kInt ? "integer keys (document numbers)" : "string keys (document ids)"; }

// A text's shingle set, as the engine's exact verification builds it (BuildSet), in *out.
size_t BuildSetOf(const TextOptions& o, const uint8_t* text, size_t len, SetScratch* sc, std::vector<uint64_t>* out) {
  const uint64_t bound = ShingleBoundOfLength(o, len);
  if (out->size() < bound) out->resize(static_cast<size_t>(bound));
  return BuildSet(text, len, sc, out->data());
}

Status ReadAll(const std::string& path, io::MappedFile* map) { return map->Open(path); }

}  // namespace

IndexHook::IndexHook(const IndexHookOptions& o) : o_(o) {}

Status IndexHook::Init() {
  Status s = Validate(o_.params);
  if (!s.ok()) return s;
  if (o_.verify == Verify::kExact) {
    s = ValidateTextOptions(o_.text);
    if (!s.ok()) return s;
  }
  if (const Index* p = o_.prior) {
    if (!(p->params() == o_.params))
      return Status(Code::kInvalidArgument, "the index's MinHash LSH parameters (profile, num_perm, b, r) differ from this run's");
    if (p->key_type() != o_.key_type)
      return Status(Code::kInvalidArgument, std::string("the index has ") + KeyKind(p->key_type()) + ", this run gives " + KeyKind(o_.key_type));
    if (!(p->store() == store()))
      return Status(Code::kInvalidArgument, o_.verify == Verify::kExact
                                                ? "the index keeps no texts: it was not written by a dedup run with exact verification"
                                                : "the index does not keep what this run's verification needs");
  }
  if (o_.write) {
    s = spill_dir_.Create(o_.tmp_dir);
    if (s.ok() && o_.key_type == KeyType::kString) s = Spill(&keys_, "index-keys");
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status IndexHook::Spill(std::unique_ptr<TempFile>* f, const char* tag) {
  *f = std::make_unique<TempFile>();
  return (*f)->Create(spill_dir_.path(), tag);
}

uint64_t IndexHook::spilled_bytes() const { return keys_ ? keys_->size() : 0; }

Status IndexHook::AddKeys(const KeyBatch& keys) {
  if (keys.type != KeyType::kString || !keys_) return Status(Code::kInvalidArgument, "this run's index has integer keys: no ids are taken");
  for (size_t i = 0; i < keys.n; i++) {
    const Key k = keys.at(i);
    Status s = keys_->Append(k.s.data(), k.s.size());
    if (!s.ok()) return s;
    key_off_.push_back(key_off_.back() + k.s.size());
  }
  return Status::Ok();
}

Status IndexHook::AddBatch(const uint64_t* band_keys, size_t n, const uint8_t* valid, size_t slots,
                           const std::atomic<bool>* stop) {
  const uint64_t first = docs_;
  if (o_.write) {
    if (keys_ && key_off_.size() - 1 < first + n)
      return Status(Code::kInvalidArgument, "the index written has string keys: every document needs an id");
    for (size_t i = 0; i < n; i++)
      if (!valid || valid[i]) SetBit(&valid_, first + i);
  }
  if (o_.prior && o_.prior->size() > 0) {
    // the candidates among the index's entries, per document
    if (slots == 0) slots = 1;
    std::vector<std::vector<std::pair<uint64_t, uint32_t>>> per(slots);
    const uint32_t b = o_.params.b;
    parallel::ParallelFor(n, 64, slots, [&](size_t lo, size_t hi, size_t slot) {
      std::vector<uint64_t> hs;
      for (size_t i = lo; i < hi; i++) {
        if (valid && !valid[i]) continue;
        o_.prior->QueryBands(band_keys + i * b, &hs);  // every entry of its buckets, however many
        for (uint64_t h : hs) per[slot].emplace_back(h, static_cast<uint32_t>(first + i));
      }
    }, stop);
    if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
    for (auto& v : per) cand_.insert(cand_.end(), v.begin(), v.end());
  }
  docs_ += n;
  return Status::Ok();
}

Status IndexHook::Match(RunDocs* docs, bool want_pairs, size_t slots, const std::atomic<bool>* stop) {
  const Index* prior = o_.prior;
  std::sort(cand_.begin(), cand_.end());  // by entry, then document
  candidates_count_ = cand_.size();
  std::vector<uint8_t> ok(cand_.size(), 0);
  std::vector<float> est(want_pairs ? cand_.size() : 0), exact(want_pairs && o_.verify == Verify::kExact ? cand_.size() : 0);
  // groups of one entry: its set is built once
  std::vector<size_t> groups;
  for (size_t i = 0; i < cand_.size(); i++)
    if (i == 0 || cand_[i].first != cand_[i - 1].first) groups.push_back(i);
  groups.push_back(cand_.size());
  if (slots == 0) slots = 1;
  struct Scratch {
    explicit Scratch(const TextOptions& o) : set(o) {}
    SetScratch set;
    std::vector<uint64_t> entry, doc;
    Status status;
  };
  std::vector<std::unique_ptr<Scratch>> scratch(slots);
  for (auto& sc : scratch) sc = std::make_unique<Scratch>(o_.text);
  parallel::ParallelFor(groups.size() - 1, 1, slots, [&](size_t gb, size_t ge, size_t slot) {
    Scratch& sc = *scratch[slot];
    for (size_t g = gb; g < ge && sc.status.ok(); g++) {
      const uint64_t entry = cand_[groups[g]].first;
      size_t entry_n = 0;
      if (o_.verify == Verify::kExact) {
        const uint8_t* text;
        uint64_t len;
        sc.status = prior->Data(entry, &text, &len);
        if (!sc.status.ok()) break;
        entry_n = BuildSetOf(o_.text, text, static_cast<size_t>(len), &sc.set, &sc.entry);
      }
      const uint8_t* entry_sig = prior->Signature(entry);
      for (size_t i = groups[g]; i < groups[g + 1]; i++) {
        const uint32_t d = cand_[i].second;
        double e = 0;
        if (want_pairs || o_.verify == Verify::kEstimate) {
          const uint8_t* sig = docs->Signature(d);
          if (!sig) {
            sc.status = Status(Code::kInternal, "the dedup engine kept no signatures for the index");
            break;
          }
          e = EstimateJaccard(o_.params, sig, entry_sig);
          if (want_pairs) est[i] = static_cast<float>(e);
        }
        if (o_.verify == Verify::kNone) {
          ok[i] = 1;
        } else if (o_.verify == Verify::kEstimate) {
          ok[i] = e >= o_.threshold;
        } else {
          const uint8_t* text;
          uint64_t len;
          if (!docs->Text(d, &text, &len)) {
            sc.status = Status(Code::kInternal, "the dedup engine kept no texts for the index");
            break;
          }
          const size_t dn = BuildSetOf(o_.text, text, static_cast<size_t>(len), &sc.set, &sc.doc);
          double j = 0;  // decided as the engine decides its own pairs
          ok[i] = JaccardAtLeast(sc.entry.data(), entry_n, sc.doc.data(), dn, o_.threshold, &j);
          if (want_pairs) exact[i] = static_cast<float>(j);
        }
      }
    }
  }, stop);
  for (const auto& sc : scratch)
    if (!sc->status.ok()) return sc->status;
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  // per document, the earliest matching entry; verified pairs by document, then entry
  std::vector<size_t> order;
  for (size_t i = 0; i < cand_.size(); i++)
    if (ok[i]) order.push_back(i);
  verified_ = order.size();
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return cand_[x].second != cand_[y].second ? cand_[x].second < cand_[y].second : cand_[x].first < cand_[y].first;
  });
  matches_.clear();
  pairs_.clear();
  for (size_t i : order) {
    const uint32_t d = cand_[i].second;
    if (!matched(d)) {
      SetBit(&matched_, d);
      matches_.emplace_back(d, cand_[i].first);
    }
    if (want_pairs) pairs_.push_back(PriorPair{d, cand_[i].first, est[i], exact.empty() ? 0.0f : exact[i]});
  }
  std::vector<std::pair<uint64_t, uint32_t>>().swap(cand_);
  return Status::Ok();
}

void IndexHook::MarkMatched(std::vector<uint32_t>* rep) const {
  for (const auto& m : matches_) (*rep)[m.first] = kIndexRep;
}

void IndexHook::Tally(DedupResult* out) {
  out->spilled_bytes += spilled_bytes();
  out->candidate_pairs += candidates_count_;
  out->kept_pairs += verified_;
  std::vector<uint64_t> entries;  // clusters around an indexed document
  for (const auto& m : matches_) entries.push_back(m.second);
  std::sort(entries.begin(), entries.end());
  out->clusters += static_cast<uint64_t>(std::unique(entries.begin(), entries.end()) - entries.begin());
  out->duplicates += matches_.size();
  const std::vector<uint32_t>& rep = out->rep;
  kept_.assign((rep.size() + 63) / 64, 0);
  for (size_t d = 0; d < rep.size(); d++)
    if (rep[d] == d && Bit(valid_, d)) SetBit(&kept_, d);
}

// This run's kept documents, in order, as entries appended to the index written.
class KeptSource : public AppendSource {
 public:
  KeptSource(IndexHook* h, RunDocs* docs) : h_(h), docs_(docs) {
    for (uint64_t d = 0; d < h->docs_; d++)
      if (IndexHook::Bit(h->kept_, d)) kept_.push_back(d);
  }
  Status Open() {
    Status s;
    if (h_->keys_) {
      s = h_->keys_->Finish();
      if (s.ok() && h_->keys_->size() > 0) s = ReadAll(h_->keys_->path(), &keys_);
    }
    return s;
  }
  const std::vector<uint64_t>& kept() const { return kept_; }
  Key KeyOf(uint64_t d) const {
    if (h_->o_.key_type == KeyType::kInt) return Key::Int(h_->o_.key_offset + d);
    const uint64_t a = h_->key_off_[d], b = h_->key_off_[d + 1];
    return Key::Str(std::string_view(reinterpret_cast<const char*>(keys_.data()) + a, size_t(b - a)));
  }
  uint64_t count() const override { return kept_.size(); }
  Status Keys(const std::function<Status(const Key&)>& fn) override {
    for (uint64_t d : kept_) {
      Status s = fn(KeyOf(d));
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status BandKeys(uint32_t j, uint64_t* out) override {
    const Params& p = h_->o_.params;
    std::vector<uint64_t> all(p.b);
    for (size_t i = 0; i < kept_.size(); i++) {
      const uint8_t* sig = docs_->Signature(kept_[i]);
      if (!sig) return NoSignatures();
      out[i] = BandKey(p, sig, j);
    }
    return Status::Ok();
  }
  Status Signatures(const std::function<Status(const uint8_t*)>& fn) override {
    for (uint64_t d : kept_) {
      const uint8_t* sig = docs_->Signature(d);
      if (!sig) return NoSignatures();
      Status s = fn(sig);
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status DataSizes(uint64_t* out) override {
    for (size_t i = 0; i < kept_.size(); i++) {
      const uint8_t* p;
      if (!docs_->Text(kept_[i], &p, &out[i])) return NoTexts();
    }
    return Status::Ok();
  }
  Status Data(const std::function<Status(const uint8_t*, size_t)>& fn) override {
    for (uint64_t d : kept_) {
      const uint8_t* p;
      uint64_t len;
      if (!docs_->Text(d, &p, &len)) return NoTexts();
      Status s = fn(p, static_cast<size_t>(len));
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  IndexHook* h_;
  RunDocs* docs_;
  static Status NoSignatures() { return Status(Code::kInternal, "the dedup engine kept no signatures for the index"); }
  static Status NoTexts() { return Status(Code::kInternal, "the dedup engine kept no texts for the index"); }
  std::vector<uint64_t> kept_;
  io::MappedFile keys_;
};

Status IndexHook::KeyConflicts(size_t max, std::vector<KeyConflict>* out) {
  out->clear();
  KeptSource src(this, nullptr);
  Status s = src.Open();
  if (!s.ok()) return s;
  std::unordered_map<uint64_t, std::vector<uint64_t>> seen;  // key hash -> kept documents so far
  for (uint64_t d : src.kept()) {
    if (out->size() >= max) break;
    const Key k = src.KeyOf(d);
    uint64_t h;
    if (o_.prior && o_.prior->Find(k, &h)) {
      out->push_back(KeyConflict{d, UINT64_MAX, KeyText(k)});
      continue;
    }
    if (o_.key_type == KeyType::kInt) continue;  // document numbers of one run are distinct
    auto& same = seen[KeyHash(k)];
    for (uint64_t e : same)
      if (src.KeyOf(e) == k) {
        out->push_back(KeyConflict{d, e, KeyText(k)});
        break;
      }
    same.push_back(d);
  }
  return Status::Ok();
}

Status IndexHook::Write(const std::string& path, const std::string& meta, RunDocs* docs, size_t slots,
                        const std::atomic<bool>* stop, uint64_t* entries) {
  (void)slots;
  if (!o_.write) return Status(Code::kInvalidArgument, "this dedup session was not asked to write an index");
  std::vector<KeyConflict> conflicts;
  Status s = KeyConflicts(1, &conflicts);
  if (!s.ok()) return s;
  if (!conflicts.empty())
    return Status(Code::kDuplicateKey, "document " + std::to_string(conflicts[0].doc) + " is kept, but its key " + conflicts[0].key +
                                           (conflicts[0].other == UINT64_MAX ? " is already in the index"
                                                                             : " is also the key of kept document " + std::to_string(conflicts[0].other)));
  KeptSource src(this, docs);
  s = src.Open();
  if (!s.ok()) return s;
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  *entries = (o_.prior ? o_.prior->size() : 0) + src.count();
  if (o_.prior) return o_.prior->Save(path, {&src}, &meta);
  Index fresh(o_.params, o_.key_type, store());
  fresh.set_meta(meta);
  return fresh.Save(path, {&src});
}

}  // namespace lsh
}  // namespace neardup
