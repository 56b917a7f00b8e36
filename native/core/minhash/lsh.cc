#include "minhash/lsh.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <mutex>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "io/header.h"
#include "minhash/union_find.h"
#include "parallel/pool.h"

namespace neardup {
namespace lsh {
namespace {

constexpr char kKind[4] = {'L', 'S', 'H', 'I'};
constexpr uint32_t kVersion = 1;
constexpr size_t kPreamble = 32;

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

void BandKeys(const Params& p, const uint8_t* sig, uint64_t* keys) {
  const size_t band_bytes = size_t(p.r) * p.value_bytes;
  if (p.profile == Profile::kDatasketch) {
    uint8_t buf[8 * 64];
    for (uint32_t j = 0; j < p.b; j++) {
      const uint8_t* v = sig + j * band_bytes;
      uint64_t h = fast64::PrepareSeed(0);
      // Key bytes: each value as 8 bytes big-endian; hashed in chunks of 64 values, chained by seed.
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
      keys[j] = h;
    }
  } else {
    const uint64_t seed = fast64::PrepareSeed(0);
    for (uint32_t j = 0; j < p.b; j++) keys[j] = fast64::HashPrepared(sig + j * band_bytes, band_bytes, seed);
  }
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

Index::Index(const Params& p) : p_(p), tables_(p.b) {}

Status Index::Insert(const uint64_t* ids, const uint8_t* sigs, size_t n, size_t slots,
                     const std::atomic<bool>* stop) {
  {
    std::unordered_map<uint64_t, size_t> seen;
    for (size_t i = 0; i < n; i++) {
      if (entries_.count(ids[i]) || !seen.emplace(ids[i], i).second)
        return Status(Code::kInvalidArgument, "id " + std::to_string(ids[i]) + " is already in the index");
    }
  }
  std::vector<uint64_t> keys(n * p_.b);
  BandKeysBatch(p_, sigs, n, keys.data(), slots, stop);
  if (stop && stop->load()) return Status(Code::kCancelled, "cancelled");
  for (size_t i = 0; i < n; i++) {
    Entry e{next_seq_++, std::vector<uint64_t>(keys.begin() + i * p_.b, keys.begin() + (i + 1) * p_.b)};
    for (uint32_t j = 0; j < p_.b; j++) tables_[j][e.keys[j]].push_back(ids[i]);
    entries_.emplace(ids[i], std::move(e));
  }
  version_++;
  return Status::Ok();
}

void Index::Query(const uint8_t* sig, std::vector<uint64_t>* out) const {
  out->clear();
  std::vector<uint64_t> keys(p_.b);
  BandKeys(p_, sig, keys.data());
  for (uint32_t j = 0; j < p_.b; j++) {
    auto it = tables_[j].find(keys[j]);
    if (it != tables_[j].end()) out->insert(out->end(), it->second.begin(), it->second.end());
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

bool Index::Remove(uint64_t id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  for (uint32_t j = 0; j < p_.b; j++) {
    auto bucket = tables_[j].find(it->second.keys[j]);
    if (bucket == tables_[j].end()) continue;
    auto& v = bucket->second;
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
    if (v.empty()) tables_[j].erase(bucket);
  }
  entries_.erase(it);
  version_++;
  return true;
}

Status Index::CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs) const {
  return PairsByBand(p_.b, max_pairs, out,
                     [&](uint32_t j, std::vector<Pair>* band) {
                       uint64_t count = 0;
                       for (const auto& kv : tables_[j]) count += BucketPairs(kv.second.size());
                       if (!band) return count;
                       std::vector<uint64_t> ids;
                       for (const auto& kv : tables_[j]) {
                         if (kv.second.size() < 2) continue;
                         ids.assign(kv.second.begin(), kv.second.end());
                         std::sort(ids.begin(), ids.end());
                         for (size_t x = 0; x < ids.size(); x++)
                           for (size_t y = x + 1; y < ids.size(); y++) band->emplace_back(ids[x], ids[y]);
                       }
                       return count;
                     });
}

void Index::IdsInInsertionOrder(std::vector<uint64_t>* ids) const {
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (seq, id)
  order.reserve(entries_.size());
  for (const auto& kv : entries_) order.emplace_back(kv.second.seq, kv.first);
  std::sort(order.begin(), order.end());
  ids->resize(order.size());
  for (size_t i = 0; i < order.size(); i++) (*ids)[i] = order[i].second;
}

void Index::Clusters(std::vector<uint64_t>* ids, std::vector<uint64_t>* reps) const {
  IdsInInsertionOrder(ids);
  std::unordered_map<uint64_t, uint32_t> pos;
  for (size_t i = 0; i < ids->size(); i++) pos[(*ids)[i]] = static_cast<uint32_t>(i);
  UnionFind uf(ids->size());
  for (const auto& table : tables_)
    for (const auto& kv : table)
      for (size_t x = 1; x < kv.second.size(); x++) uf.Union(pos[kv.second[0]], pos[kv.second[x]]);
  reps->resize(ids->size());
  for (size_t i = 0; i < ids->size(); i++) (*reps)[i] = (*ids)[uf.Find(static_cast<uint32_t>(i))];
}

Status Index::Save(const std::string& path) const {
  std::vector<uint64_t> ids;
  IdsInInsertionOrder(&ids);
  const uint64_t n = ids.size();
  io::AtomicFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  uint8_t header[io::kHeaderSize] = {0};
  s = f.Write(header, sizeof header);  // placeholder, rewritten once the CRC is known
  uint32_t crc = 0;
  auto put = [&](const void* data, size_t len) {
    if (!s.ok()) return;
    crc = Crc32c(data, len, crc);
    s = f.Write(data, len);
  };
  uint32_t pre[6] = {static_cast<uint32_t>(p_.profile), p_.value_bytes, p_.num_perm, p_.b, p_.r, 0};
  put(pre, sizeof pre);
  put(&n, 8);
  put(ids.data(), ids.size() * 8);
  std::vector<uint64_t> slots;  // (key, id) pairs flattened
  for (uint32_t j = 0; j < p_.b && s.ok(); j++) {
    std::vector<std::pair<uint64_t, uint64_t>> t;
    t.reserve(n);
    for (const auto& kv : entries_) t.emplace_back(kv.second.keys[j], kv.first);
    std::sort(t.begin(), t.end());
    slots.resize(t.size() * 2);
    for (size_t i = 0; i < t.size(); i++) {
      slots[2 * i] = t[i].first;
      slots[2 * i + 1] = t[i].second;
    }
    put(slots.data(), slots.size() * 8);
  }
  if (!s.ok()) return s;
  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = f.written() - io::kHeaderSize;
  h.payload_crc = crc;
  h.params[0] = n;
  h.params[1] = p_.b;
  io::EncodeHeader(h, header);
  s = f.WriteAt(0, header, sizeof header);
  if (!s.ok()) return s;
  return f.Commit();
}

// ---- FrozenIndex -------------------------------------------------------------------------------------------

Status FrozenIndex::Load(const std::string& path, bool verify_checksum) {
  Status s = map_.Open(path);
  if (!s.ok()) return s;
  return LoadBytes(map_.data(), map_.size(), path, verify_checksum);
}

Status FrozenIndex::LoadBytes(const uint8_t* data, size_t size, const std::string& path, bool verify_checksum) {
  io::FileHeader h;
  Status s = io::DecodeHeader(data, size, kKind, kVersion, verify_checksum, path, &h);
  if (!s.ok()) return s;
  const uint8_t* p = data + io::kHeaderSize;
  if (h.payload_size < kPreamble) return Status(Code::kCorrupt, "'" + path + "': payload too short");
  uint32_t pre[6];
  std::memcpy(pre, p, sizeof pre);
  if (h.flags != 0) return Status(Code::kCorrupt, "'" + path + "': unknown header flags " + std::to_string(h.flags) + " (offset 36)");
  if (pre[0] > 2) return Status(Code::kCorrupt, "'" + path + "': unknown profile " + std::to_string(pre[0]));
  if (pre[5] != 0) return Status(Code::kCorrupt, "'" + path + "': reserved field at offset 84 is not 0");
  p_.profile = static_cast<Profile>(pre[0]);
  p_.value_bytes = pre[1];
  p_.num_perm = pre[2];
  p_.b = pre[3];
  p_.r = pre[4];
  s = Validate(p_);
  if (!s.ok()) return Status(Code::kCorrupt, "'" + path + "': " + s.message());
  if (p_.num_perm > (1u << 16))  // the most LshIndex accepts when it is built
    return Status(Code::kCorrupt, "'" + path + "': num_perm " + std::to_string(p_.num_perm) + " exceeds 65536 (offset 72)");
  std::memcpy(&n_, p + 24, 8);
  if (h.params[0] != n_ || h.params[1] != p_.b)
    return Status(Code::kCorrupt, "'" + path + "': header params (offset 40) disagree with the payload's n and b");
  // n * (8 + 16 b) without overflow: n is at most the payload size, b at most num_perm (Validate).
  if (n_ > h.payload_size / (8 + 16 * uint64_t(p_.b)) || kPreamble + n_ * (8 + 16 * uint64_t(p_.b)) != h.payload_size)
    return Status(Code::kCorrupt, "'" + path + "': payload size does not match " + std::to_string(n_) + " ids");
  ids_ = reinterpret_cast<const uint64_t*>(p + kPreamble);
  tables_ = reinterpret_cast<const Slot*>(p + kPreamble + n_ * 8);
  if (verify_checksum) {
    // The whole file is read anyway: check the structure the writer guarantees, so that a file with valid
    // checksums cannot make queries return ids that were never inserted. Ids are unique; each table is
    // sorted by (key, id) and holds every id once (compared as a sum of mixed ids, a multiset hash).
    std::vector<uint64_t> sorted(ids_, ids_ + n_);
    std::sort(sorted.begin(), sorted.end());
    for (uint64_t i = 1; i < n_; i++)
      if (sorted[i] == sorted[i - 1])
        return Status(Code::kCorrupt, "'" + path + "': id " + std::to_string(sorted[i]) + " is listed twice");
    uint64_t want = 0;
    for (uint64_t i = 0; i < n_; i++) want += fast64::Mix64(ids_[i]);
    for (uint32_t j = 0; j < p_.b; j++) {
      const Slot* t = table(j);
      uint64_t have = 0;
      for (uint64_t i = 0; i < n_; i++) {
        if (i > 0 && (t[i].key < t[i - 1].key || (t[i].key == t[i - 1].key && t[i].id <= t[i - 1].id)))
          return Status(Code::kCorrupt, "'" + path + "': table " + std::to_string(j) + " is not sorted at entry " +
                                            std::to_string(i) + " (offset " +
                                            std::to_string(io::kHeaderSize + kPreamble + n_ * 8 + (uint64_t(j) * n_ + i) * 16) + ")");
        have += fast64::Mix64(t[i].id);
      }
      if (have != want)
        return Status(Code::kCorrupt, "'" + path + "': table " + std::to_string(j) + " does not hold exactly the index's ids");
    }
  }
  return Status::Ok();
}

void FrozenIndex::Query(const uint8_t* sig, std::vector<uint64_t>* out) const {
  out->clear();
  std::vector<uint64_t> keys(p_.b);
  BandKeys(p_, sig, keys.data());
  for (uint32_t j = 0; j < p_.b; j++) {
    const Slot* t = table(j);
    const Slot* it = std::lower_bound(t, t + n_, keys[j], [](const Slot& x, uint64_t k) { return x.key < k; });
    for (; it != t + n_ && it->key == keys[j]; ++it) out->push_back(it->id);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
}

Status FrozenIndex::CandidatePairs(std::vector<Pair>* out, uint64_t max_pairs) const {
  return PairsByBand(p_.b, max_pairs, out, [&](uint32_t j, std::vector<Pair>* band) {
    const Slot* t = table(j);
    uint64_t count = 0;
    ForEachBucket(&t[0].key, n_, 2, [&](size_t lo, size_t hi) {
      count += BucketPairs(hi - lo);
      if (!band) return;
      for (size_t x = lo; x < hi; x++)
        for (size_t y = x + 1; y < hi; y++) band->emplace_back(std::min(t[x].id, t[y].id), std::max(t[x].id, t[y].id));
    });
    return count;
  });
}

void FrozenIndex::Clusters(std::vector<uint64_t>* ids, std::vector<uint64_t>* reps) const {
  ids->assign(ids_, ids_ + n_);
  std::unordered_map<uint64_t, uint32_t> pos;
  for (uint64_t i = 0; i < n_; i++) pos[ids_[i]] = static_cast<uint32_t>(i);
  UnionFind uf(n_);
  for (uint32_t j = 0; j < p_.b; j++) {
    const Slot* t = table(j);
    ForEachBucket(&t[0].key, n_, 2, [&](size_t lo, size_t hi) {
      for (size_t x = lo + 1; x < hi; x++) uf.Union(pos[t[lo].id], pos[t[x].id]);
    });
  }
  reps->resize(n_);
  for (uint64_t i = 0; i < n_; i++) (*reps)[i] = ids_[uf.Find(static_cast<uint32_t>(i))];
}

// ---- PairStream --------------------------------------------------------------------------------------------

PairStream::PairStream(const Index& index) : index_(&index), version_(index.version()) {
  ids_.reserve(index.entries_.size());
  for (const auto& kv : index.entries_) ids_.push_back(kv.first);
  std::sort(ids_.begin(), ids_.end());
}

PairStream::PairStream(const FrozenIndex& frozen) : frozen_(&frozen) {
  const uint64_t n = frozen.n_;
  const uint32_t b = frozen.p_.b;
  ids_.assign(frozen.ids_, frozen.ids_ + n);
  std::sort(ids_.begin(), ids_.end());
  keys_.assign(n * b, 0);
  for (uint32_t j = 0; j < b; j++) {
    const FrozenIndex::Slot* t = frozen.table(j);
    for (uint64_t x = 0; x < n; x++) {
      const size_t i = std::lower_bound(ids_.begin(), ids_.end(), t[x].id) - ids_.begin();
      if (i < n && ids_[i] == t[x].id) keys_[i * b + j] = t[x].key;
    }
  }
}

void PairStream::Partners(size_t i) {
  partners_.clear();
  const uint64_t id = ids_[i];
  if (index_) {
    const auto& keys = index_->entries_.at(id).keys;
    for (uint32_t j = 0; j < index_->p_.b; j++) {
      auto it = index_->tables_[j].find(keys[j]);
      if (it == index_->tables_[j].end()) continue;
      for (uint64_t y : it->second)
        if (y > id) partners_.push_back(y);
    }
  } else {
    const uint32_t b = frozen_->p_.b;
    const uint64_t n = frozen_->n_;
    for (uint32_t j = 0; j < b; j++) {
      const FrozenIndex::Slot* t = frozen_->table(j);
      const uint64_t key = keys_[i * b + j];
      const FrozenIndex::Slot* it =
          std::lower_bound(t, t + n, key, [](const FrozenIndex::Slot& x, uint64_t k) { return x.key < k; });
      for (; it != t + n && it->key == key; ++it)
        if (it->id > id) partners_.push_back(it->id);
    }
  }
  std::sort(partners_.begin(), partners_.end());
  partners_.erase(std::unique(partners_.begin(), partners_.end()), partners_.end());
  partner_pos_ = 0;
}

Status PairStream::Next(size_t max_pairs, std::vector<Pair>* out, bool* done) {
  if (index_ && index_->version() != version_)
    return Status(Code::kInvalidArgument, "the index changed while its candidate pairs were being listed");
  size_t added = 0;
  while (added < max_pairs) {
    if (partner_pos_ == partners_.size()) {
      if (next_ == ids_.size()) break;
      Partners(next_++);
      continue;
    }
    const uint64_t a = ids_[next_ - 1];
    const size_t m = std::min(max_pairs - added, partners_.size() - partner_pos_);
    for (size_t k = 0; k < m; k++) out->emplace_back(a, partners_[partner_pos_ + k]);
    partner_pos_ += m;
    added += m;
  }
  *done = partner_pos_ == partners_.size() && next_ == ids_.size();
  return Status::Ok();
}

}  // namespace lsh
}  // namespace neardup
