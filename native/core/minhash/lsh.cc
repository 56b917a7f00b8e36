#include "minhash/lsh.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <mutex>

#include "hash/fast64.h"
#include "minhash/union_find.h"
#include "parallel/pool.h"

namespace neardup {
namespace lsh {
namespace {

inline uint64_t LoadU64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t LoadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

}  // namespace

Status Validate(const Params& p) {
  if (p.value_bytes != 4 && p.value_bytes != 8)
    return Status(Code::kInvalidArgument, "value size must be 4 or 8 bytes");
  if (p.num_perm == 0) return Status(Code::kInvalidArgument, "num_perm must be at least 1");
  if (p.b == 0 || p.r == 0) return Status(Code::kInvalidArgument, "b and r must be at least 1");
  if (uint64_t(p.b) * p.r > p.num_perm)
    return Status(Code::kInvalidArgument, "b * r = " + std::to_string(uint64_t(p.b) * p.r) + " exceeds num_perm = " +
                                              std::to_string(p.num_perm));
  if (p.profile != Profile::kFast && p.value_bytes != 4)
    return Status(Code::kInvalidArgument, "the datasketch and doubri profiles have 32-bit values");
  return Status::Ok();
}

uint64_t BandKey(const Params& p, const uint8_t* sig, uint32_t j) {
  const size_t band_bytes = size_t(p.r) * p.value_bytes;
  const uint8_t* v = sig + j * band_bytes;
  if (p.profile != Profile::kDatasketch) return fast64::HashPrepared(v, band_bytes, fast64::PrepareSeed(0));
  // Key bytes: each value as 8 bytes big-endian; hashed in chunks of 64 values, chained by seed.
  uint8_t buf[8 * 64];
  uint64_t h = fast64::PrepareSeed(0);
  uint32_t done = 0;
  while (done < p.r) {
    const uint32_t m = std::min<uint32_t>(64, p.r - done);
    for (uint32_t i = 0; i < m; i++) {
      const uint32_t x = LoadU32(v + (done + i) * 4);
      uint8_t* o = buf + i * 8;
      o[0] = o[1] = o[2] = o[3] = 0;
      o[4] = uint8_t(x >> 24);
      o[5] = uint8_t(x >> 16);
      o[6] = uint8_t(x >> 8);
      o[7] = uint8_t(x);
    }
    h = fast64::HashPrepared(buf, size_t(m) * 8, h);
    done += m;
  }
  return h;
}

void BandKeys(const Params& p, const uint8_t* sig, uint64_t* keys) {
  for (uint32_t j = 0; j < p.b; j++) keys[j] = BandKey(p, sig, j);
}

void BandKeysBatch(const Params& p, const uint8_t* sigs, size_t n, uint64_t* keys, size_t slots,
                   const std::atomic<bool>* stop) {
  const size_t sb = p.signature_bytes();
  parallel::ParallelFor(
      n, 512, slots,
      [&](size_t begin, size_t end, size_t) {
        for (size_t i = begin; i < end; i++) BandKeys(p, sigs + i * sb, keys + i * p.b);
      },
      stop);
}

double EstimateJaccard(const Params& p, const uint8_t* a, const uint8_t* b) {
  size_t eq = 0;
  if (p.value_bytes == 8) {
    for (uint32_t i = 0; i < p.num_perm; i++) eq += LoadU64(a + i * 8) == LoadU64(b + i * 8);
  } else {
    for (uint32_t i = 0; i < p.num_perm; i++) eq += LoadU32(a + i * 4) == LoadU32(b + i * 4);
  }
  return static_cast<double>(eq) / p.num_perm;
}

static Status TooManyPairs(uint64_t max_pairs) {
  return Status(Code::kTooManyResults, "more than " + std::to_string(max_pairs) +
                                           " candidate pairs (raise maxPairs, or read them with candidatePairsStream)");
}

inline uint64_t BucketPairs(uint64_t m) { return m * (m - (m > 0)) / 2; }

// Candidate pairs band by band: pairs within one band are distinct (an id is in one bucket per band), so a
// band with more than max_pairs pairs fails before it is listed; otherwise its sorted pairs are merged into
// *out, which fails as soon as it holds more than max_pairs. Memory: about 3 * max_pairs pairs at most.
// band_pairs(j, nullptr) counts band j's pairs; band_pairs(j, &v) also appends them to v.
template <typename BandPairs>
Status PairsByBand(uint32_t bands, uint64_t max_pairs, std::vector<Pair>* out, BandPairs&& band_pairs) {
  out->clear();
  std::vector<Pair> band, merged;
  for (uint32_t j = 0; j < bands; j++) {
    const uint64_t count = band_pairs(j, nullptr);
    if (count > max_pairs) return TooManyPairs(max_pairs);
    if (count == 0) continue;
    band.clear();
    band.reserve(static_cast<size_t>(count));
    band_pairs(j, &band);
    std::sort(band.begin(), band.end());
    merged.clear();
    merged.reserve(out->size() + band.size());
    std::set_union(out->begin(), out->end(), band.begin(), band.end(), std::back_inserter(merged));
    out->swap(merged);
    if (out->size() > max_pairs) {
      out->clear();
      out->shrink_to_fit();
      return TooManyPairs(max_pairs);
    }
  }
  return Status::Ok();
}

// ---- Index -------------------------------------------------------------------------------------------------

Index::Index(const Params& p, KeyType key_type, Store store) : p_(p), key_type_(key_type), store_(store), tables_(p.b) {}

Status Index::Load(const std::string& path, bool verify, std::unique_ptr<Index>* out) {
  auto seg = std::make_unique<Segment>();
  Status s = seg->Open(path, verify);
  if (!s.ok()) return s;
  auto ix = std::make_unique<Index>(seg->params(), seg->key_type(), seg->store());
  ix->meta_ = std::string(seg->meta());
  ix->base_n_ = ix->next_handle_ = seg->size();
  ix->base_ = std::move(seg);
  ix->source_ = path;
  *out = std::move(ix);
  return Status::Ok();
}

Status Index::LoadBytes(const uint8_t* data, size_t size, const std::string& name, bool verify,
                        std::unique_ptr<Index>* out) {
  auto seg = std::make_unique<Segment>();
  Status s = seg->OpenBytes(data, size, name, verify);
  if (!s.ok()) return s;
  auto ix = std::make_unique<Index>(seg->params(), seg->key_type(), seg->store());
  ix->meta_ = std::string(seg->meta());
  ix->base_n_ = ix->next_handle_ = seg->size();
  ix->base_ = std::move(seg);
  *out = std::move(ix);
  return Status::Ok();
}

static const char* KeyKind(KeyType t) { return t == KeyType::kInt ? "integer" : "string"; }

Status Index::Insert(const KeyBatch& keys, const uint8_t* sigs, const DataBatch* data, size_t slots,
                     const std::atomic<bool>* stop) {
  if (keys.type != key_type_)
    return Status(Code::kInvalidArgument, std::string("this index has ") + KeyKind(key_type_) + " keys, not " + KeyKind(keys.type) + " keys");
  if (store_.data && !data)
    return Status(Code::kInvalidArgument,
                  "this index keeps per-document data for dedup (shingle sets): add documents to it with dedup");
  const size_t n = keys.n;
  if (size() + n >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "an index holds at most 2^32-1 entries");
  {
    std::unordered_map<uint64_t, size_t> seen_int;
    std::unordered_map<std::string_view, size_t> seen_str;
    for (size_t i = 0; i < n; i++) {
      const Key k = keys.at(i);
      if (Contains(k)) return Status(Code::kDuplicateKey, "key " + KeyText(k) + " is already in the index");
      const bool fresh = k.type == KeyType::kInt ? seen_int.emplace(k.i, i).second : seen_str.emplace(k.s, i).second;
      if (!fresh) return Status(Code::kDuplicateKey, "key " + KeyText(k) + " is given twice");
    }
  }
  std::vector<uint64_t> bands(n * p_.b);
  BandKeysBatch(p_, sigs, n, bands.data(), slots, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  const size_t sb = p_.signature_bytes();
  for (size_t i = 0; i < n; i++) {
    const uint64_t h = next_handle_++;
    Entry e;
    const Key k = keys.at(i);
    if (key_type_ == KeyType::kInt) {
      e.ikey = k.i;
      int_keys_.emplace(k.i, h);
      added_ints_.push_back(k.i);
    } else {
      e.skey.assign(k.s.data(), k.s.size());
      str_keys_.emplace(e.skey, h);
    }
    e.bands.assign(bands.begin() + i * p_.b, bands.begin() + (i + 1) * p_.b);
    if (store_.signatures) e.sig.assign(sigs + i * sb, sigs + (i + 1) * sb);
    if (store_.data) e.data.assign(data->bytes + data->offsets[i], data->bytes + data->offsets[i + 1]);
    for (uint32_t j = 0; j < p_.b; j++) tables_[j][e.bands[j]].push_back(h);
    added_.emplace(h, std::move(e));
  }
  version_++;
  return Status::Ok();
}

bool Index::Find(const Key& k, uint64_t* handle) const {
  if (k.type != key_type_) return false;
  if (k.type == KeyType::kInt) {
    auto it = int_keys_.find(k.i);
    if (it != int_keys_.end()) {
      *handle = it->second;
      return true;
    }
  } else if (!str_keys_.empty()) {
    auto it = str_keys_.find(std::string(k.s));
    if (it != str_keys_.end()) {
      *handle = it->second;
      return true;
    }
  }
  uint64_t slot;
  if (base_ && base_->Find(k, &slot) && !Dead(slot)) {
    *handle = slot;
    return true;
  }
  return false;
}

Status Index::Remove(const Key& k) {
  uint64_t h;
  if (!Find(k, &h)) return Status(Code::kKeyNotFound, "key " + KeyText(k) + " is not in the index");
  if (h < base_n_) {
    if (dead_.empty()) dead_.assign((base_n_ + 63) / 64, 0);
    dead_[h >> 6] |= uint64_t(1) << (h & 63);
    dead_count_++;
  } else {
    auto it = added_.find(h);
    const Entry& e = it->second;
    for (uint32_t j = 0; j < p_.b; j++) {
      auto bucket = tables_[j].find(e.bands[j]);
      if (bucket == tables_[j].end()) continue;
      auto& v = bucket->second;
      v.erase(std::remove(v.begin(), v.end(), h), v.end());
      if (v.empty()) tables_[j].erase(bucket);
    }
    if (key_type_ == KeyType::kInt) int_keys_.erase(e.ikey);
    else str_keys_.erase(e.skey);
    added_.erase(it);
  }
  version_++;
  return Status::Ok();
}

void Index::Query(const uint8_t* sig, std::vector<uint64_t>* out) const {
  std::vector<uint64_t> bands(p_.b);
  BandKeys(p_, sig, bands.data());
  QueryBands(bands.data(), out);
}

void Index::QueryBands(const uint64_t* bands, std::vector<uint64_t>* out, size_t limit) const {
  out->clear();
  for (uint32_t j = 0; j < p_.b; j++) {
    const std::vector<uint64_t>* added = nullptr;
    if (!tables_[j].empty()) {
      auto it = tables_[j].find(bands[j]);
      if (it != tables_[j].end()) added = &it->second;
    }
    size_t lo = 0, hi = 0;  // the bucket's run in the base table
    const uint32_t* slots = nullptr;
    if (base_) {
      const uint64_t* keys = base_->band_keys(j);
      slots = base_->band_slots(j);
      lo = std::lower_bound(keys, keys + base_n_, bands[j]) - keys;
      hi = std::upper_bound(keys + lo, keys + base_n_, bands[j]) - keys;
    }
    auto live = [&](size_t i) { return slots[i] < base_n_ && !Dead(slots[i]); };
    if ((hi - lo) + (added ? added->size() : 0) <= limit) {
      for (size_t i = lo; i < hi; i++)
        if (live(i)) out->push_back(slots[i]);
      if (added) out->insert(out->end(), added->begin(), added->end());
      continue;
    }
    // first and last live entries (base entries precede inserted ones)
    size_t f = lo;
    while (f < hi && !live(f)) f++;
    if (f < hi) out->push_back(slots[f]);
    else if (added && !added->empty()) out->push_back(added->front());
    if (added && !added->empty()) {
      out->push_back(added->back());
    } else {
      size_t l = hi;
      while (l > lo && !live(l - 1)) l--;
      if (l > lo) out->push_back(slots[l - 1]);
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

Status Index::KeyOf(uint64_t handle, Key* k) const {
  if (handle < base_n_) return base_->KeyAt(handle, k);
  if (key_type_ == KeyType::kInt && handle - base_n_ < added_ints_.size()) {
    *k = Key::Int(added_ints_[handle - base_n_]);
    return Status::Ok();
  }
  auto it = added_.find(handle);
  if (it == added_.end()) return Status(Code::kInternal, "no entry " + std::to_string(handle));
  *k = it->second.key(key_type_);
  return Status::Ok();
}

const uint8_t* Index::Signature(uint64_t handle) const {
  if (!store_.signatures) return nullptr;
  if (handle < base_n_) return base_->Signature(handle);
  auto it = added_.find(handle);
  return it == added_.end() ? nullptr : it->second.sig.data();
}

Status Index::Data(uint64_t handle, const uint8_t** p, uint64_t* n) const {
  if (!store_.data) return Status(Code::kUnsupported, "this index keeps no per-entry data");
  if (handle < base_n_) return base_->Data(handle, p, n);
  auto it = added_.find(handle);
  if (it == added_.end()) return Status(Code::kInternal, "no entry " + std::to_string(handle));
  *p = it->second.data.data();
  *n = it->second.data.size();
  return Status::Ok();
}

std::vector<uint64_t> Index::AddedInOrder() const {
  std::vector<uint64_t> hs;
  hs.reserve(added_.size());
  for (const auto& kv : added_) hs.push_back(kv.first);
  std::sort(hs.begin(), hs.end());
  return hs;
}

void Index::Handles(std::vector<uint64_t>* out) const {
  out->clear();
  out->reserve(size());
  for (uint64_t s = 0; s < base_n_; s++)
    if (!Dead(s)) out->push_back(s);
  const std::vector<uint64_t> added = AddedInOrder();
  out->insert(out->end(), added.begin(), added.end());
}

template <typename Fn>
void Index::ForEachBucket(uint32_t j, Fn&& fn) const {
  std::vector<std::pair<uint64_t, uint64_t>> add;  // (band key, handle) of the inserted entries, sorted
  for (const auto& kv : tables_[j])
    for (uint64_t h : kv.second) add.emplace_back(kv.first, h);
  std::sort(add.begin(), add.end());
  std::vector<uint64_t> bucket;
  size_t a = 0;
  auto added_only = [&](uint64_t below, bool all) {
    while (a < add.size() && (all || add[a].first < below)) {
      const uint64_t key = add[a].first;
      bucket.clear();
      for (; a < add.size() && add[a].first == key; a++) bucket.push_back(add[a].second);
      if (bucket.size() >= 2) fn(bucket.data(), bucket.size());
    }
  };
  if (base_) {
    const uint64_t* keys = base_->band_keys(j);
    const uint32_t* slots = base_->band_slots(j);
    uint64_t i = 0;
    while (i < base_n_) {
      const uint64_t key = keys[i];
      added_only(key, false);
      bucket.clear();
      for (; i < base_n_ && keys[i] == key; i++)
        if (slots[i] < base_n_ && !Dead(slots[i])) bucket.push_back(slots[i]);
      for (; a < add.size() && add[a].first == key; a++) bucket.push_back(add[a].second);
      if (bucket.size() >= 2) fn(bucket.data(), bucket.size());
    }
  }
  added_only(0, true);
}

Status Index::CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs) const {
  return PairsByBand(p_.b, max_pairs, out, [&](uint32_t j, std::vector<Pair>* band) {
    uint64_t count = 0;
    ForEachBucket(j, [&](const uint64_t* hs, size_t m) {
      count += BucketPairs(m);
      if (!band) return;
      for (size_t x = 0; x < m; x++)
        for (size_t y = x + 1; y < m; y++) band->emplace_back(std::min(hs[x], hs[y]), std::max(hs[x], hs[y]));
    });
    return count;
  });
}

void Index::Clusters(std::vector<uint64_t>* handles, std::vector<uint64_t>* reps) const {
  Handles(handles);
  const std::vector<uint64_t>& hs = *handles;
  // dense position of a handle: base slots through a table, inserted ones by binary search
  std::vector<uint32_t> base_pos(base_n_, 0);
  size_t live_base = 0;
  for (; live_base < hs.size() && hs[live_base] < base_n_; live_base++) base_pos[hs[live_base]] = static_cast<uint32_t>(live_base);
  auto pos = [&](uint64_t h) -> uint32_t {
    if (h < base_n_) return base_pos[h];
    return static_cast<uint32_t>(std::lower_bound(hs.begin() + live_base, hs.end(), h) - hs.begin());
  };
  UnionFind uf(hs.size());
  for (uint32_t j = 0; j < p_.b; j++)
    ForEachBucket(j, [&](const uint64_t* b, size_t m) {
      const uint32_t first = pos(b[0]);
      for (size_t x = 1; x < m; x++) uf.Union(first, pos(b[x]));
    });
  reps->resize(hs.size());
  for (size_t i = 0; i < hs.size(); i++) (*reps)[i] = hs[uf.Find(static_cast<uint32_t>(i))];
}

// The inserted entries, in insertion order, as a source for the writer.
class AddedSource : public AppendSource {
 public:
  explicit AddedSource(const Index& ix) : ix_(ix), order_(ix.AddedInOrder()) {}
  uint64_t count() const override { return order_.size(); }
  Status Keys(const std::function<Status(const Key&)>& fn) override {
    for (uint64_t h : order_) {
      Status s = fn(entry(h).key(ix_.key_type_));
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status BandKeys(uint32_t j, uint64_t* out) override {
    for (size_t i = 0; i < order_.size(); i++) out[i] = entry(order_[i]).bands[j];
    return Status::Ok();
  }
  Status Signatures(const std::function<Status(const uint8_t*)>& fn) override {
    for (uint64_t h : order_) {
      Status s = fn(entry(h).sig.data());
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status DataSizes(uint64_t* out) override {
    for (size_t i = 0; i < order_.size(); i++) out[i] = entry(order_[i]).data.size();
    return Status::Ok();
  }
  Status Data(const std::function<Status(const uint8_t*, size_t)>& fn) override {
    for (uint64_t h : order_) {
      const Index::Entry& e = entry(h);
      Status s = fn(e.data.data(), e.data.size());
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

 private:
  const Index::Entry& entry(uint64_t h) const { return ix_.added_.at(h); }
  const Index& ix_;
  std::vector<uint64_t> order_;
};

Status Index::SaveTo(ByteSink* sink, const std::vector<AppendSource*>& extra, const std::string* meta) const {
  AddedSource added(*this);
  std::vector<AppendSource*> sources{&added};
  sources.insert(sources.end(), extra.begin(), extra.end());
  WriteSpec spec;
  spec.params = p_;
  spec.key_type = key_type_;
  spec.store = store_;
  spec.meta = meta ? *meta : meta_;
  return WriteIndex(spec, base_.get(), dead_, sources, sink);
}

Status Index::Save(const std::string& path, const std::vector<AppendSource*>& extra, const std::string* meta) const {
  FileSink f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  s = SaveTo(&f, extra, meta);
  if (!s.ok()) return s;
  s = f.Commit();
#if defined(_WIN32)
  if (!s.ok() && base_ && path == source_)
    return Status(s.code(), s.message() + " (Windows cannot replace a file that is mapped: save to another path, close the index, then rename)");
#endif
  return s;
}

// ---- PairStream --------------------------------------------------------------------------------------------

PairStream::PairStream(const Index& index) : index_(&index), version_(index.version()) {
  index.Handles(&handles_);
  const uint32_t b = index.p_.b;
  const uint64_t n = index.base_n_;
  if (n > 0) {
    base_keys_.assign(n * b, 0);
    for (uint32_t j = 0; j < b; j++) {
      const uint64_t* keys = index.base_->band_keys(j);
      const uint32_t* slots = index.base_->band_slots(j);
      for (uint64_t x = 0; x < n; x++)
        if (slots[x] < n) base_keys_[slots[x] * b + j] = keys[x];
    }
  }
}

void PairStream::Partners(size_t i) {
  partners_.clear();
  const uint64_t h = handles_[i];
  const Index& ix = *index_;
  const uint32_t b = ix.p_.b;
  const uint64_t* bands = h < ix.base_n_ ? &base_keys_[h * b] : ix.added_.at(h).bands.data();
  for (uint32_t j = 0; j < b; j++) {
    if (ix.base_)
      ix.base_->Lookup(j, bands[j], [&](uint64_t slot) {
        if (slot > h && !ix.Dead(slot)) partners_.push_back(slot);
      });
    if (ix.tables_[j].empty()) continue;
    auto it = ix.tables_[j].find(bands[j]);
    if (it == ix.tables_[j].end()) continue;
    for (uint64_t y : it->second)
      if (y > h) partners_.push_back(y);
  }
  std::sort(partners_.begin(), partners_.end());
  partners_.erase(std::unique(partners_.begin(), partners_.end()), partners_.end());
  partner_pos_ = 0;
}

Status PairStream::Next(size_t max_pairs, std::vector<Pair>* out, bool* done) {
  if (index_->version() != version_)
    return Status(Code::kInvalidArgument, "the index changed while its candidate pairs were being listed");
  size_t added = 0;
  while (added < max_pairs) {
    if (partner_pos_ == partners_.size()) {
      if (next_ == handles_.size()) break;
      Partners(next_++);
      continue;
    }
    const uint64_t a = handles_[next_ - 1];
    const size_t m = std::min(max_pairs - added, partners_.size() - partner_pos_);
    for (size_t k = 0; k < m; k++) out->emplace_back(a, partners_[partner_pos_ + k]);
    partner_pos_ += m;
    added += m;
  }
  *done = partner_pos_ == partners_.size() && next_ == handles_.size();
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
