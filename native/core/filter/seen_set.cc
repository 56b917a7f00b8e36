#include "filter/seen_set.h"
#include "util/endian.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#if defined(_WIN32)
#include <malloc.h>  // _aligned_malloc
#endif

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "io/file.h"
#include "io/header.h"
#include "io/os.h"

namespace neardup {
namespace filter {
namespace {

constexpr char kKind[4] = {'P', 'S', 'E', 'N'};
constexpr uint32_t kVersion = 2;  // 2: approximate stages record their bit-position scheme (v1 still read)
constexpr double kFirstShare = 0.1;       // design rate of stage 0: p / 10
constexpr double kProjectedShare = 0.9;   // a stage sized from the input rate: 0.9 of the unspent budget
constexpr double kGrowthShare = 0.75;     // a stage 4x the previous one: 0.75 of the unspent budget
constexpr double kRateDiscount = 2.0 / 3.0;

inline void Prefetch(const void* p) { __builtin_prefetch(p, 0, 1); }

// Position of a key in a stage: the block (multiply-shift range reduction of the high bits of the stage
// hash) and k bit positions inside it (ForPositions below).
// Zeroed, cache-line aligned memory for `blocks` 64-byte blocks.
std::unique_ptr<uint64_t[], FreeDeleter> AllocBlocks(uint64_t blocks) {
  void* mem = nullptr;
#if defined(_WIN32)
  mem = _aligned_malloc(blocks * 64, 64);  // freed with _aligned_free (FreeDeleter)
  if (mem == nullptr) throw std::bad_alloc();
#else
  if (posix_memalign(&mem, 64, blocks * 64) != 0 || mem == nullptr) throw std::bad_alloc();
#endif
  std::memset(mem, 0, blocks * 64);
  return std::unique_ptr<uint64_t[], FreeDeleter>(static_cast<uint64_t*>(mem));
}

inline uint64_t StageHash(uint64_t key, uint64_t seed) { return fast64::Mix64(key ^ seed); }
inline uint64_t BlockOf(uint64_t h, uint64_t blocks) {
  return static_cast<uint64_t>((static_cast<__uint128_t>(h) * blocks) >> 64);
}

}  // namespace

#if defined(_WIN32)
void FreeDeleter::operator()(uint64_t* p) const { _aligned_free(p); }
#else
void FreeDeleter::operator()(uint64_t* p) const { std::free(p); }
#endif

void PayloadWriter::Put64(uint64_t v) {
  if (n_ == sizeof buf_) Flush();
  StoreLe64(buf_ + n_, v);
  n_ += 8;
}

void PayloadWriter::Flush() {
  crc_ = Crc32c(buf_, n_, crc_);
  size_ += n_;
  if (st_.ok()) st_ = f_->Write(buf_, n_);
  n_ = 0;
}

Status PayloadWriter::Finish() {
  Flush();
  return st_;
}

// ---------------------------------------------------------------------------------------------- exact

namespace {
constexpr uint32_t kInitialShardBits = 4;  // 16 home slots a shard at first (256 shards: 4 Ki keys)
constexpr uint32_t kMaxDistance = 254;     // the distance byte holds distance + 1
constexpr size_t kPageBlockBytes = 64 << 10;  // shard tables this large come from io::os::AllocatePages

inline uint64_t LoadSlot(const uint8_t* mem, uint32_t width, uint64_t i) {
  uint64_t v;
  std::memcpy(&v, mem + i * width, 8);  // host order: the table never leaves memory as such
  return width == 8 ? v : v & ((uint64_t(1) << (8 * width)) - 1);
}
inline void StoreSlot(uint8_t* mem, uint32_t width, uint64_t i, uint64_t v) {
  if (width == 8) {
    std::memcpy(mem + i * width, &v, 8);
    return;
  }
  uint64_t cur;
  std::memcpy(&cur, mem + i * width, 8);
  const uint64_t m = (uint64_t(1) << (8 * width)) - 1;
  cur = (cur & ~m) | (v & m);
  std::memcpy(mem + i * width, &cur, 8);
}
}  // namespace

ExactSeenSet::ExactSeenSet() : shards_(kShards) {
  for (Shard& sh : shards_) {
    InitShard(&sh, kInitialShardBits);
    bytes_ += ShardBytes(sh);
  }
}

uint64_t ExactSeenSet::ShardBytes(const Shard& sh) {
  return ((uint64_t(1) << sh.q) + sh.extra) * sh.width + 8 + sh.stash.size() * kStashKeyBytes;
}

void ExactSeenSet::InitShard(Shard* sh, uint32_t q) {
  const uint32_t rbits = 64 - kShardBits - q;
  sh->q = q;
  sh->width = (rbits + 8 + 7) / 8;
  const uint64_t homes = uint64_t(1) << q;
  sh->extra = static_cast<uint32_t>(std::min<uint64_t>(kMaxDistance + 1, std::max<uint64_t>(16, homes / 4)));
  sh->count = 0;
  sh->limit = static_cast<uint64_t>(kExactMaxLoad * static_cast<double>(homes));
  sh->mem = Block(static_cast<size_t>(ShardBytes(*sh)));
}

ExactSeenSet::Block::Block(size_t n) : bytes(n) {
  if (n >= kPageBlockBytes) {
    p = static_cast<uint8_t*>(io::os::AllocatePages(n));
    if (p == nullptr) throw std::bad_alloc();
    pages = true;  // zeroed by the system
  } else {
    p = new uint8_t[n];
    std::memset(p, 0, n);
  }
}

ExactSeenSet::Block& ExactSeenSet::Block::operator=(Block&& o) noexcept {
  if (this != &o) {
    this->~Block();
    p = o.p;
    bytes = o.bytes;
    pages = o.pages;
    o.p = nullptr;
  }
  return *this;
}

ExactSeenSet::Block::~Block() {
  if (p == nullptr) return;
  if (pages)
    io::os::FreePages(p, bytes);
  else
    delete[] p;
  p = nullptr;
}

bool ExactSeenSet::Find(const Shard& sh, uint64_t key) {
  if (!sh.stash.empty() && sh.stash.count(key)) return true;
  const uint32_t rbits = 64 - kShardBits - sh.q;
  const uint64_t home = (key >> rbits) & ((uint64_t(1) << sh.q) - 1);
  const uint64_t rem = rbits == 0 ? 0 : key & ((uint64_t(1) << rbits) - 1);
  for (uint64_t d = 0;; d++) {
    const uint64_t v = LoadSlot(sh.mem.get(), sh.width, home + d);
    const uint64_t sd = v & 0xff;
    if (sd == 0 || sd - 1 < d) break;  // empty, or a key nearer its home: ours would be before it
    if (sd - 1 == d) {                 // same home: the cluster is sorted by remainder
      const uint64_t r = v >> 8;
      if (r == rem) return true;
      if (r > rem) break;
    }
  }
  return false;
}

bool ExactSeenSet::Place(Shard* sh, uint64_t key, uint64_t* carried) {
  const uint32_t rbits = 64 - kShardBits - sh->q;
  const uint64_t home = (key >> rbits) & ((uint64_t(1) << sh->q) - 1);
  uint64_t rem = rbits == 0 ? 0 : key & ((uint64_t(1) << rbits) - 1);
  uint64_t d = 0;
  uint8_t* mem = sh->mem.get();
  const uint64_t max_d = sh->extra - 1;
  for (uint64_t at = home;; at++, d++) {
    if (d > max_d) {  // the key in hand is rebuilt from its home (at - d) and remainder
      *carried = (key >> (64 - kShardBits) << (64 - kShardBits)) | ((at - d) << rbits) | rem;
      return false;
    }
    const uint64_t v = LoadSlot(mem, sh->width, at);
    const uint64_t sd = v & 0xff;
    if (sd == 0) {
      StoreSlot(mem, sh->width, at, rem << 8 | (d + 1));
      sh->count++;
      return true;
    }
    const uint64_t r = v >> 8;
    if (sd - 1 < d || (sd - 1 == d && r > rem)) {  // ours goes here; the resident moves on
      StoreSlot(mem, sh->width, at, rem << 8 | (d + 1));
      rem = r;
      d = sd - 1;
    }
  }
}

void ExactSeenSet::Rebuild(size_t s, uint32_t q, const uint64_t* extra_key) {
  Shard& old = shards_[s];
  Shard sh;
  InitShard(&sh, q);
  uint64_t carried = 0;
  auto put = [&](uint64_t key) {
    if (!Place(&sh, key, &carried)) sh.stash.insert(carried);
  };
  const uint32_t orbits = 64 - kShardBits - old.q;
  const uint64_t top = uint64_t(s) << (64 - kShardBits);
  const uint64_t slots = (uint64_t(1) << old.q) + old.extra;
  for (uint64_t i = 0; i < slots; i++) {  // ascending order: each key lands at its cluster's end
    const uint64_t v = LoadSlot(old.mem.get(), old.width, i);
    if ((v & 0xff) == 0) continue;
    const uint64_t home = i - ((v & 0xff) - 1);
    put(top | (home << orbits) | (v >> 8));
  }
  for (uint64_t k : old.stash) put(k);
  if (extra_key) put(*extra_key);
  bytes_ -= ShardBytes(old);
  bytes_ += ShardBytes(sh);
  old = std::move(sh);
}

void ExactSeenSet::Add(uint64_t key) {
  const size_t s = static_cast<size_t>(key >> (64 - kShardBits));
  Shard& sh = shards_[s];
  if (Find(sh, key)) return;
  count_++;
  if (sh.count + sh.stash.size() + 1 > sh.limit) {
    Rebuild(s, sh.q + 1, &key);
    return;
  }
  uint64_t carried;
  if (!Place(&sh, key, &carried)) {
    sh.stash.insert(carried);
    bytes_ += kStashKeyBytes;
  }
}

void ExactSeenSet::Reserve(uint64_t keys) {
  const double per = static_cast<double>(keys) / kShards / kExactMaxLoad;
  uint32_t q = kInitialShardBits;
  while (q < 56 && static_cast<double>(uint64_t(1) << q) < per) q++;
  for (size_t s = 0; s < kShards; s++)
    if (shards_[s].q < q) Rebuild(s, q, nullptr);
}

uint32_t ExactSeenSet::max_distance() const {
  uint32_t m = 0;
  for (const Shard& sh : shards_) {
    const uint64_t slots = (uint64_t(1) << sh.q) + sh.extra;
    for (uint64_t i = 0; i < slots; i++) {
      const uint64_t sd = LoadSlot(sh.mem.get(), sh.width, i) & 0xff;
      if (sd > 0) m = std::max<uint32_t>(m, static_cast<uint32_t>(sd - 1));
    }
  }
  return m;
}

void ExactSeenSet::ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const {
  constexpr size_t kAhead = 8;
  auto prefetch = [&](uint64_t key) {
    const Shard& sh = shards_[key >> (64 - kShardBits)];
    const uint64_t home = (key >> (64 - kShardBits - sh.q)) & ((uint64_t(1) << sh.q) - 1);
    Prefetch(sh.mem.get() + home * sh.width);
  };
  for (size_t i = 0; i < n && i < kAhead; i++) prefetch(keys[i]);
  for (size_t i = 0; i < n; i++) {
    if (i + kAhead < n) prefetch(keys[i + kAhead]);
    out[i] = Find(shards_[keys[i] >> (64 - kShardBits)], keys[i]) ? 1 : 0;
  }
}

void ExactSeenSet::InsertBatch(const uint64_t* keys, size_t n) {
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < n; i++) {
    if (i + kAhead < n) {
      const uint64_t key = keys[i + kAhead];
      const Shard& sh = shards_[key >> (64 - kShardBits)];
      Prefetch(sh.mem.get() + ((key >> (64 - kShardBits - sh.q)) & ((uint64_t(1) << sh.q) - 1)) * sh.width);
    }
    Add(keys[i]);
  }
}

// Payload: u64 count, then the keys (u64 LE) in table order: ascending (files of older versions: any order).
void ExactSeenSet::Serialize(PayloadWriter* out) const {
  out->Put64(size());
  for (size_t s = 0; s < kShards; s++) {
    const Shard& sh = shards_[s];
    const uint32_t rbits = 64 - kShardBits - sh.q;
    const uint64_t top = uint64_t(s) << (64 - kShardBits);
    const uint64_t slots = (uint64_t(1) << sh.q) + sh.extra;
    auto st = sh.stash.begin();  // merged in: the output stays ascending
    for (uint64_t i = 0; i < slots; i++) {
      const uint64_t v = LoadSlot(sh.mem.get(), sh.width, i);
      if ((v & 0xff) == 0) continue;
      const uint64_t key = top | ((i - ((v & 0xff) - 1)) << rbits) | (v >> 8);
      for (; st != sh.stash.end() && *st < key; ++st) out->Put64(*st);
      out->Put64(key);
    }
    for (; st != sh.stash.end(); ++st) out->Put64(*st);
  }
}

Status ExactSeenSet::Deserialize(const uint8_t* p, size_t n, const std::string& file) {
  if (n < 8) return Status(Code::kCorrupt, "'" + file + "': exact seen-set payload shorter than 8 bytes");
  const uint64_t count = LoadLe64(p);
  if (count > (n - 8) / 8 || 8 + 8 * count != n)
    return Status(Code::kCorrupt, "'" + file + "': exact seen-set announces " + std::to_string(count) +
                                      " keys but its payload holds " + std::to_string(n - 8) + " bytes");
  *this = ExactSeenSet();
  Reserve(count);  // sized once (keys are uniform over the shards)
  uint64_t keys[1024];  // decoded a block at a time (no copy of the whole payload)
  for (uint64_t i = 0; i < count;) {
    const size_t m = static_cast<size_t>(std::min<uint64_t>(1024, count - i));
    for (size_t j = 0; j < m; j++) keys[j] = LoadLe64(p + 8 + 8 * (i + j));
    InsertBatch(keys, m);
    i += m;
  }
  if (size() != count) return Status(Code::kCorrupt, "'" + file + "': exact seen-set holds repeated keys");
  return Status::Ok();
}

// --------------------------------------------------------------------------------------------- approx

double ApproxSeenSet::BlockedFpRate(double bits_per_key, uint32_t k) {
  const double lambda = 512.0 / bits_per_key;  // mean keys per block
  const double miss = std::log1p(-1.0 / 512.0);
  const int hi = static_cast<int>(lambda + 12 * std::sqrt(lambda) + 30);
  double fp = 0;
  for (int j = 0; j <= hi; j++) {
    const double logp = -lambda + j * std::log(lambda) - std::lgamma(j + 1.0);
    const double fill = 1.0 - std::exp(miss * j * k);
    fp += std::exp(logp + k * std::log(std::max(fill, 1e-300)));
  }
  return fp;
}

namespace {
// Design() scans bits per key from 3 to 64 in steps of 1/8, and k near bpk * ln 2 (k <= 32): BlockedFpRate
// at those points does not depend on the target, so each is computed once per process and kept (128 KiB).
constexpr int kDesignSteps = 488;
struct RateTable {
  std::mutex mu;
  std::vector<double> rate = std::vector<double>(size_t(kDesignSteps) * 33, -1.0);
};
RateTable& Rates() {
  static RateTable* t = new RateTable;  // never destroyed: usable from any static destructor
  return *t;
}
}  // namespace

void ApproxSeenSet::Design(double target, double* bits_per_key, uint32_t* k) {
  RateTable& t = Rates();
  std::lock_guard<std::mutex> g(t.mu);
  for (int step = 0; step < kDesignSteps; step++) {
    const double bpk = 3.0 + step * 0.125;
    // The best k for a given load is near bpk * ln 2; search around it.
    const int k0 = std::max(1, static_cast<int>(bpk * 0.693) - 3);
    for (int kk = k0; kk <= std::min(32, k0 + 6); kk++) {
      double& r = t.rate[size_t(step) * 33 + kk];
      if (r < 0) r = BlockedFpRate(bpk, static_cast<uint32_t>(kk));
      if (r <= 0.95 * target) {  // 5 % margin
        *bits_per_key = bpk;
        *k = static_cast<uint32_t>(kk);
        return;
      }
    }
  }
  *bits_per_key = 64.0;
  *k = 32;
}

ApproxSeenSet::ApproxSeenSet(double fp_rate, uint64_t initial_capacity)
    : fp_rate_(fp_rate), initial_capacity_(std::max<uint64_t>(initial_capacity, 1024)) {}

void ApproxSeenSet::AddStage() {
  Stage s;
  const size_t i = stages_.size();
  const double unspent = fp_rate_ - fp_bound();
  if (i == 0) {
    s.capacity = initial_capacity_;
    s.target = fp_rate_ * kFirstShare;
  } else if (total_ > 0 && done_ > 0 && done_ < total_) {
    // Keys the rest of the input would add at the rate so far, discounted.
    const uint64_t have = size();
    const double f = static_cast<double>(done_) / static_cast<double>(total_);
    const double projected = static_cast<double>(have) * (1 - f) / f * kRateDiscount;
    s.capacity = static_cast<uint64_t>(std::min(std::max({projected, have / 2.0, double(initial_capacity_)}), 1e12));
    s.target = unspent * kProjectedShare;
  } else {
    s.capacity = std::min<uint64_t>(stages_.back().capacity * 4, uint64_t(1) << 40);
    s.target = unspent * kGrowthShare;
  }
  double bpk;
  Design(s.target, &bpk, &s.k);
  s.scheme = 2;
  s.blocks = std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(s.capacity * bpk / 512.0)));
  s.seed = fast64::Mix64(0x6f6e696f6e000000ull + i);  // "onion" + stage number
  s.bits = AllocBlocks(s.blocks);
  stages_.push_back(std::move(s));
}

uint64_t ApproxSeenSet::size() const {
  uint64_t n = 0;
  for (const Stage& s : stages_) n += s.count;
  return n;
}

uint64_t ApproxSeenSet::memory_bytes() const {
  uint64_t n = 0;
  for (const Stage& s : stages_) n += s.blocks * 64;
  return n;
}

double ApproxSeenSet::fp_bound() const {
  double p = 0;
  for (const Stage& s : stages_) p += s.target;
  return p;
}

namespace {
// PSEN v1 bit positions: independent 9-bit fields of a remix of the stage hash, then of further remixes.
template <typename F>
inline bool ForPositionsV1(uint64_t h, uint32_t k, F&& f) {
  h = fast64::Mix64(h ^ 0x243f6a8885a308d3ull);
  uint64_t bits = h;
  uint32_t left = 6;
  for (uint32_t j = 0; j < k; j++) {
    if (left == 0) {
      h = fast64::Mix64(h + 0x9e3779b97f4a7c15ull);
      bits = h;
      left = 7;
    }
    if (!f(static_cast<uint32_t>(bits & 511))) return false;
    bits >>= 9;
    left--;
  }
  return true;
}
// v2 bit positions: the 9-bit fields of the key from bit 0 (7 per word), then of Mix64(key ^ C), of
// Mix64 of that, ... The block is chosen by the stage hash Mix64(key ^ seed), independent of the key's bits.
template <typename F>
inline bool ForPositionsV2(uint64_t key, uint32_t k, F&& f) {
  uint64_t w = key, bits = key;
  uint32_t left = 7;
  for (uint32_t j = 0; j < k; j++) {
    if (left == 0) {
      w = fast64::Mix64(w ^ 0x243f6a8885a308d3ull);
      bits = w;
      left = 7;
    }
    if (!f(static_cast<uint32_t>(bits & 511))) return false;
    bits >>= 9;
    left--;
  }
  return true;
}
inline bool TestStage(const ApproxSeenSet::Stage& st, uint64_t key) {
  const uint64_t h = StageHash(key, st.seed);
  const uint64_t* block = st.bits.get() + 8 * BlockOf(h, st.blocks);
  auto test = [&](uint32_t a) { return ((block[a >> 6] >> (a & 63)) & 1) != 0; };
  if (st.scheme == 2) {
    if (st.k <= 7) {  // common case, unrolled: one word of fields
      uint64_t bits = key;
      for (uint32_t j = 0; j < st.k; j++, bits >>= 9)
        if (!test(static_cast<uint32_t>(bits & 511))) return false;
      return true;
    }
    return ForPositionsV2(key, st.k, test);
  }
  return ForPositionsV1(h, st.k, test);
}
inline void SetStage(ApproxSeenSet::Stage& st, uint64_t key) {
  const uint64_t h = StageHash(key, st.seed);
  uint64_t* block = st.bits.get() + 8 * BlockOf(h, st.blocks);
  auto set = [&](uint32_t a) {
    block[a >> 6] |= uint64_t(1) << (a & 63);
    return true;
  };
  if (st.scheme == 2)
    ForPositionsV2(key, st.k, set);
  else
    ForPositionsV1(h, st.k, set);
}
}  // namespace

void ApproxSeenSet::ContainsBatch(const uint64_t* keys, size_t n, uint8_t* out) const {
  const size_t ns = stages_.size();
  if (ns == 0) {
    std::memset(out, 0, n);
    return;
  }
  // The newest stage is the largest: test it first. Prefetch every stage's block of key i + kAhead while
  // testing key i (the small early stages stay in cache).
  constexpr size_t kAhead = 8;
  const Stage* stages = stages_.data();
  auto prefetch = [&](uint64_t key) {
    for (size_t s = 0; s < ns; s++)
      Prefetch(stages[s].bits.get() + 8 * BlockOf(StageHash(key, stages[s].seed), stages[s].blocks));
  };
  for (size_t i = 0; i < n && i < kAhead; i++) prefetch(keys[i]);
  for (size_t i = 0; i < n; i++) {
    if (i + kAhead < n) prefetch(keys[i + kAhead]);
    uint8_t found = 0;
    for (size_t s = ns; s-- > 0;) {
      if (TestStage(stages[s], keys[i])) {
        found = 1;
        break;
      }
    }
    out[i] = found;
  }
}

void ApproxSeenSet::InsertBatch(const uint64_t* keys, size_t n) {
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < n; i++) {
    if (stages_.empty() || stages_.back().count >= stages_.back().capacity) AddStage();
    Stage& st = stages_.back();
    if (i + kAhead < n) Prefetch(st.bits.get() + 8 * BlockOf(StageHash(keys[i + kAhead], st.seed), st.blocks));
    SetStage(st, keys[i]);
    st.count++;
  }
}

// Payload: u64 stage count, u64 initial capacity, then per stage a 48-byte record
// (u64 capacity, u64 count, u64 blocks, u32 k, u32 scheme, f64 target, u64 seed) followed by blocks * 64 bytes.
void ApproxSeenSet::Serialize(PayloadWriter* out) const {
  out->Put64(stages_.size());
  out->Put64(initial_capacity_);
  for (const Stage& s : stages_) {
    out->Put64(s.capacity);
    out->Put64(s.count);
    out->Put64(s.blocks);
    out->Put64(s.k | uint64_t(s.scheme) << 32);
    out->Put64(DoubleBits(s.target));
    out->Put64(s.seed);
    for (uint64_t w = 0; w < s.blocks * 8; w++) out->Put64(s.bits[w]);
  }
}

Status ApproxSeenSet::Deserialize(const uint8_t* p, size_t n, const std::string& file, uint32_t version) {
  auto corrupt = [&](const std::string& why) { return Status(Code::kCorrupt, "'" + file + "': " + why); };
  if (n < 16) return corrupt("approximate seen-set payload shorter than 16 bytes");
  const uint64_t ns = LoadLe64(p);
  initial_capacity_ = LoadLe64(p + 8);
  // The writer stores the capacity its first stage was (or will be) made with: 2^15 by default, never above
  // kMaxInitialCapacity. Larger values would make the first insert into a loaded set allocate without bound.
  if (initial_capacity_ < 1024 || initial_capacity_ > kMaxInitialCapacity)
    return corrupt("bad initial capacity " + std::to_string(initial_capacity_) + " (offset 72; 1024.." +
                   std::to_string(kMaxInitialCapacity) + ")");
  if (ns > 64) return corrupt("bad stage count " + std::to_string(ns));
  size_t at = 16;
  stages_.clear();
  for (uint64_t i = 0; i < ns; i++) {
    if (n - at < 48) return corrupt("truncated at stage " + std::to_string(i) + " (offset " + std::to_string(64 + at) + ")");
    Stage s;
    s.capacity = LoadLe64(p + at);
    s.count = LoadLe64(p + at + 8);
    s.blocks = LoadLe64(p + at + 16);
    const uint64_t kfield = LoadLe64(p + at + 24);
    const uint64_t k = kfield & 0xffffffffu;
    const uint64_t scheme = version == 1 ? 1 : kfield >> 32;
    if (version == 1 ? (kfield >> 32) != 0 : (scheme != 1 && scheme != 2))
      return corrupt("bad bit-position scheme in stage " + std::to_string(i));
    s.scheme = static_cast<uint32_t>(scheme);
    s.target = BitsDouble(LoadLe64(p + at + 32));
    s.seed = LoadLe64(p + at + 40);
    at += 48;
    if (k < 1 || k > 32 || s.blocks == 0 || s.count > s.capacity || !(s.target > 0 && s.target < 1))
      return corrupt("bad parameters in stage " + std::to_string(i));
    // The writer sizes a stage at 1..64 bits per key of capacity (Design), capacity <= 2^40: so the
    // capacity is bounded by the bits actually in the file, and growing from it (x4, capped) stays bounded.
    if (s.capacity > (uint64_t(1) << 40) || s.capacity > s.blocks * 512 ||
        s.blocks > std::max<uint64_t>(1, (s.capacity + 7) / 8))
      return corrupt("stage " + std::to_string(i) + " capacity " + std::to_string(s.capacity) +
                     " does not match its " + std::to_string(s.blocks) + " blocks");
    s.k = static_cast<uint32_t>(k);
    if (s.blocks > (n - at) / 64) return corrupt("truncated in the bits of stage " + std::to_string(i));
    s.bits = AllocBlocks(s.blocks);
    for (uint64_t w = 0; w < s.blocks * 8; w++) s.bits[w] = LoadLe64(p + at + 8 * w);
    at += s.blocks * 64;
    stages_.push_back(std::move(s));
  }
  if (at != n) return corrupt(std::to_string(n - at) + " unexpected bytes after the last stage");
  return Status::Ok();
}

// ------------------------------------------------------------------------------------------- files

std::unique_ptr<SeenSet> MakeSeenSet(SeenKind kind, double fp_rate) {
  if (kind == SeenKind::kApprox) return std::unique_ptr<SeenSet>(new ApproxSeenSet(fp_rate));
  return std::unique_ptr<SeenSet>(new ExactSeenSet());
}

Status SaveSeenSet(const SeenSet& set, uint32_t n, const std::string& path) {
  io::AtomicFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  uint8_t hb[io::kHeaderSize] = {0};
  if (!(s = f.Write(hb, sizeof hb)).ok()) return s;  // rewritten once the payload's size and CRC are known
  auto w = std::unique_ptr<PayloadWriter>(new PayloadWriter(&f));  // 64 KiB buffer: not on the stack
  set.Serialize(w.get());
  if (!(s = w->Finish()).ok()) return s;
  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = w->size();
  h.payload_crc = w->crc();
  h.flags = static_cast<uint32_t>(set.kind());
  h.params[0] = n;
  h.params[1] = set.kind() == SeenKind::kApprox ? DoubleBits(static_cast<const ApproxSeenSet&>(set).fp_rate()) : 0;
  io::EncodeHeader(h, hb);
  if (!(s = f.WriteAt(0, hb, sizeof hb)).ok()) return s;
  return f.Commit();
}

Status LoadSeenSet(const std::string& path, std::unique_ptr<SeenSet>* out, uint32_t* n_out) {
  io::MappedFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  return ParseSeenSet(f.data(), f.size(), path, out, n_out);  // copies what it keeps: the map may go
}

Status ParseSeenSet(const uint8_t* data, size_t size, const std::string& path, std::unique_ptr<SeenSet>* out,
                    uint32_t* n_out) {
  io::FileHeader h;
  Status s = io::DecodeHeader(data, size, kKind, kVersion, /*verify_payload=*/true, path, &h);
  if (!s.ok()) return s;
  if (h.params[0] < 1 || h.params[0] > 4096)
    return Status(Code::kCorrupt, "'" + path + "': bad n-gram length " + std::to_string(h.params[0]));
  const uint8_t* payload = data + io::kHeaderSize;
  if (h.flags == static_cast<uint32_t>(SeenKind::kExact)) {
    if (h.params[1] != 0) return Status(Code::kCorrupt, "'" + path + "': params[1] (offset 48) of an exact set is not 0");
    auto set = std::unique_ptr<ExactSeenSet>(new ExactSeenSet());
    s = set->Deserialize(payload, h.payload_size, path);
    if (!s.ok()) return s;
    *out = std::move(set);
  } else if (h.flags == static_cast<uint32_t>(SeenKind::kApprox)) {
    const double p = BitsDouble(h.params[1]);
    if (!(p > 0 && p <= 0.5)) return Status(Code::kCorrupt, "'" + path + "': bad false-positive rate in the header");
    auto set = std::unique_ptr<ApproxSeenSet>(new ApproxSeenSet(p));
    s = set->Deserialize(payload, h.payload_size, path, h.version);
    if (!s.ok()) return s;
    *out = std::move(set);
  } else {
    return Status(Code::kUnsupported, "'" + path + "': unknown seen-set kind " + std::to_string(h.flags));
  }
  *n_out = static_cast<uint32_t>(h.params[0]);
  return Status::Ok();
}

}  // namespace filter
}  // namespace neardup
