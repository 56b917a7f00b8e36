#include "minhash/lsh.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
constexpr double kPi = 3.14159265358979323846;  // M_PI is POSIX, not C++ (absent with -std=c++17 on mingw, MSVC)

// Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n), computed once.
struct GaussLegendre {
  static constexpr int kN = 64;
  double x[kN], w[kN];
  GaussLegendre() {
    for (int i = 0; i < kN; i++) {
      double z = std::cos(kPi * (i + 0.75) / (kN + 0.5)), dp = 0;
      for (int it = 0; it < 100; it++) {
        double p0 = 1, p1 = z;
        for (int k = 2; k <= kN; k++) {
          const double p2 = ((2.0 * k - 1) * z * p1 - (k - 1.0) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = kN * (z * p1 - p0) / (z * z - 1);
        const double dz = p1 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2 / ((1 - z * z) * dp * dp);
    }
  }
};

const GaussLegendre& Rule() {
  static const GaussLegendre rule;
  return rule;
}

// Composite Gauss-Legendre with 64 points per panel. The integrands are polynomials of degree b*r, and an
// n-point rule is exact for degree <= 2n-1, so ceil((b*r+1)/128) panels integrate them exactly up to
// rounding (~1e-16), far below the 1.49e-8 tolerance of the scipy.integrate.quad that datasketch uses (its
// results for these smooth integrands agree to that accuracy). Two extra panels guard against rounding.
template <typename F>
double Integrate(F f, double lo, double hi, uint64_t degree) {
  const GaussLegendre& g = Rule();
  const int kPanels = static_cast<int>(degree / (2 * GaussLegendre::kN)) + 2;
  const double h = (hi - lo) / kPanels;
  double total = 0;
  for (int p = 0; p < kPanels; p++) {
    const double a = lo + p * h, mid = a + h / 2, half = h / 2;
    double s = 0;
    for (int i = 0; i < GaussLegendre::kN; i++) s += g.w[i] * f(mid + half * g.x[i]);
    total += s * half;
  }
  return total;
}

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

double FalsePositiveArea(double t, uint32_t b, uint32_t r) {
  return Integrate([&](double s) { return 1 - std::pow(1 - std::pow(s, r), b); }, 0.0, t, uint64_t(b) * r);
}

double FalseNegativeArea(double t, uint32_t b, uint32_t r) {
  return Integrate([&](double s) { return std::pow(1 - std::pow(s, r), b); }, t, 1.0, uint64_t(b) * r);
}

Status OptimalParam(double threshold, uint32_t num_perm, double fp_weight, double fn_weight, uint32_t* b,
                    uint32_t* r) {
  if (!(threshold > 0 && threshold < 1)) return Status(Code::kInvalidArgument, "threshold must be in (0, 1)");
  if (num_perm == 0) return Status(Code::kInvalidArgument, "num_perm must be at least 1");
  if (!(fp_weight >= 0 && fn_weight >= 0) || std::fabs(fp_weight + fn_weight - 1.0) > 1e-9)
    return Status(Code::kInvalidArgument, "the weights must be non-negative and sum to 1");
  double best = INFINITY;
  *b = 1;
  *r = num_perm;
  for (uint32_t bb = 1; bb <= num_perm; bb++) {
    const uint32_t max_r = num_perm / bb;
    for (uint32_t rr = 1; rr <= max_r; rr++) {
      const double err = fp_weight * FalsePositiveArea(threshold, bb, rr) + fn_weight * FalseNegativeArea(threshold, bb, rr);
      if (err < best) {
        best = err;
        *b = bb;
        *r = rr;
      }
    }
  }
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
  return true;
}

void Index::CandidatePairs(std::vector<Pair>* out) const {
  out->clear();
  std::vector<uint64_t> ids;
  for (const auto& table : tables_) {
    for (const auto& kv : table) {
      if (kv.second.size() < 2) continue;
      ids.assign(kv.second.begin(), kv.second.end());
      std::sort(ids.begin(), ids.end());
      for (size_t x = 0; x < ids.size(); x++)
        for (size_t y = x + 1; y < ids.size(); y++) out->emplace_back(ids[x], ids[y]);
    }
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
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
  io::FileHeader h;
  s = io::DecodeHeader(map_.data(), map_.size(), kKind, kVersion, verify_checksum, path, &h);
  if (!s.ok()) return s;
  const uint8_t* p = map_.data() + io::kHeaderSize;
  if (h.payload_size < kPreamble) return Status(Code::kCorrupt, "'" + path + "': payload too short");
  uint32_t pre[6];
  std::memcpy(pre, p, sizeof pre);
  if (pre[0] > 2) return Status(Code::kCorrupt, "'" + path + "': unknown profile " + std::to_string(pre[0]));
  p_.profile = static_cast<Profile>(pre[0]);
  p_.value_bytes = pre[1];
  p_.num_perm = pre[2];
  p_.b = pre[3];
  p_.r = pre[4];
  s = Validate(p_);
  if (!s.ok()) return Status(Code::kCorrupt, "'" + path + "': " + s.message());
  std::memcpy(&n_, p + 24, 8);
  const uint64_t expect = kPreamble + n_ * 8 + uint64_t(p_.b) * n_ * 16;
  if (n_ > h.payload_size || expect != h.payload_size)
    return Status(Code::kCorrupt, "'" + path + "': payload size does not match " + std::to_string(n_) + " ids");
  ids_ = reinterpret_cast<const uint64_t*>(p + kPreamble);
  tables_ = reinterpret_cast<const Slot*>(p + kPreamble + n_ * 8);
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

void FrozenIndex::CandidatePairs(std::vector<Pair>* out) const {
  out->clear();
  for (uint32_t j = 0; j < p_.b; j++) {
    const Slot* t = table(j);
    ForEachBucket(&t[0].key, n_, 2, [&](size_t lo, size_t hi) {
      for (size_t x = lo; x < hi; x++)
        for (size_t y = x + 1; y < hi; y++) out->emplace_back(std::min(t[x].id, t[y].id), std::max(t[x].id, t[y].id));
    });
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
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

}  // namespace lsh
}  // namespace neardup
