#include "minhash/lsh_file.h"

#include <algorithm>
#include <cstring>

#include "hash/crc32c.h"
#include "hash/fast64.h"
#include "io/header.h"
#include "text/utf8.h"
#include "util/endian.h"

namespace neardup {
namespace lsh {
namespace {

constexpr char kKind[4] = {'L', 'S', 'H', 'I'};
constexpr uint32_t kVersion = 2;
constexpr uint64_t kPreamble = 64;    // version 2
constexpr uint64_t kPreambleV1 = 32;  // version 1
constexpr uint32_t kStoreSignatures = 1, kStoreData = 2;

inline uint64_t Pad8(uint64_t x) { return (x + 7) & ~uint64_t(7); }
// Bytes of a sorted table (or the key directory): n u64 keys, n u32 slots, padding.
inline uint64_t TableBytes(uint64_t n) { return 8 * n + Pad8(4 * n); }

bool AllZero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

// Set bits of `bits` (one per slot) seen twice or not at all: a per-table "each slot exactly once" check.
class SlotSet {
 public:
  explicit SlotSet(uint64_t n) : bits_((n + 63) / 64) {}
  void Clear() { std::fill(bits_.begin(), bits_.end(), 0); }
  bool Add(uint64_t s) {  // false when already there
    uint64_t& w = bits_[s >> 6];
    const uint64_t m = uint64_t(1) << (s & 63);
    if (w & m) return false;
    w |= m;
    return true;
  }

 private:
  std::vector<uint64_t> bits_;
};

// The parameters both versions start their payload with: profile, value bytes, num_perm, b, r (u32 each).
// False, with the reason, for values no writer produces.
bool ReadParams(const uint8_t* p, Params* out, std::string* why) {
  const uint32_t profile = LoadLe32(p);
  if (profile > 2) {
    *why = "unknown profile " + std::to_string(profile) + " (offset 64)";
    return false;
  }
  out->profile = static_cast<Profile>(profile);
  out->value_bytes = LoadLe32(p + 4);
  out->num_perm = LoadLe32(p + 8);
  out->b = LoadLe32(p + 12);
  out->r = LoadLe32(p + 16);
  Status s = Validate(*out);
  if (!s.ok()) *why = s.message() + " (offset 64)";
  else if (out->num_perm > (1u << 16)) *why = "num_perm " + std::to_string(out->num_perm) + " exceeds 65536 (offset 72)";
  return why->empty();
}

}  // namespace

uint64_t KeyHash(const Key& k) { return k.type == KeyType::kInt ? k.i : fast64::Hash(k.s.data(), k.s.size(), 0); }

std::string KeyText(const Key& k) {
  if (k.type == KeyType::kInt) return std::to_string(k.i);
  std::string out = "\"";
  const size_t n = std::min<size_t>(k.s.size(), 200);
  for (size_t i = 0; i < n; i++) {
    const unsigned char c = static_cast<unsigned char>(k.s[i]);
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c < 0x20 ? '?' : static_cast<char>(c));
  }
  out += n < k.s.size() ? "...\"" : "\"";
  return out;
}

Status VectorSink::Write(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  bytes.insert(bytes.end(), p, p + n);
  return Status::Ok();
}

Status VectorSink::WriteAt(uint64_t offset, const void* data, size_t n) {
  if (offset > bytes.size() || n > bytes.size() - offset) return Status(Code::kInternal, "VectorSink: write past the end");
  std::memcpy(bytes.data() + offset, data, n);
  return Status::Ok();
}

// ---- reading ------------------------------------------------------------------------------------------------

Status Segment::Corrupt(const std::string& what) const { return Status(Code::kCorrupt, "'" + name_ + "': " + what); }

Status Segment::Open(const std::string& path, bool verify) {
  Status s = map_.Open(path);
  if (!s.ok()) return s;
  return OpenBytes(map_.data(), map_.size(), path, verify);
}

namespace {

// Version 1 (docs/FORMAT.md, "version 1"): ids (u64) in insertion order and b tables of {u64 key, u64 id}
// sorted by (key, id). Read whole, checked (unique ids, every table holding each id once, sorted) and
// rewritten as a version 2 image with the ids as integer keys.
class V1Source : public AppendSource {
 public:
  V1Source(const uint64_t* ids, const uint8_t* tables, uint64_t n) : ids_(ids), tables_(tables), n_(n) {}
  // (id, slot) sorted by id; fails on a repeated id.
  Status Index(const std::string& name) {
    by_id_.resize(n_);
    for (uint64_t i = 0; i < n_; i++) by_id_[i] = {LoadLe64(reinterpret_cast<const uint8_t*>(ids_ + i)), i};
    std::sort(by_id_.begin(), by_id_.end());
    for (uint64_t i = 1; i < n_; i++)
      if (by_id_[i].first == by_id_[i - 1].first)
        return Status(Code::kCorrupt, "'" + name + "': id " + std::to_string(by_id_[i].first) + " is listed twice");
    return Status::Ok();
  }
  // Checks table j (sorted by (key, id), each id once) and maps it to slots.
  Status CheckTable(uint32_t j, const std::string& name) {
    const uint8_t* t = tables_ + 16 * n_ * j;
    SlotSet seen(n_);
    for (uint64_t i = 0; i < n_; i++) {
      const uint64_t key = LoadLe64(t + 16 * i), id = LoadLe64(t + 16 * i + 8);
      const uint64_t offset = io::kHeaderSize + kPreambleV1 + 8 * n_ + 16 * (n_ * j + i);
      if (i > 0) {
        const uint64_t pk = LoadLe64(t + 16 * (i - 1)), pid = LoadLe64(t + 16 * (i - 1) + 8);
        if (key < pk || (key == pk && id <= pid))
          return Status(Code::kCorrupt, "'" + name + "': table " + std::to_string(j) + " is not sorted at entry " +
                                            std::to_string(i) + " (offset " + std::to_string(offset) + ")");
      }
      uint64_t slot;
      if (!SlotOf(id, &slot) || !seen.Add(slot))
        return Status(Code::kCorrupt, "'" + name + "': table " + std::to_string(j) + " does not hold exactly the index's ids (offset " +
                                          std::to_string(offset) + ")");
    }
    return Status::Ok();
  }
  uint64_t count() const override { return n_; }
  Status Keys(const std::function<Status(const Key&)>& fn) override {
    for (uint64_t i = 0; i < n_; i++) {
      Status s = fn(Key::Int(LoadLe64(reinterpret_cast<const uint8_t*>(ids_ + i))));
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }
  Status BandKeys(uint32_t j, uint64_t* out) override {
    const uint8_t* t = tables_ + 16 * n_ * j;
    for (uint64_t i = 0; i < n_; i++) {
      uint64_t slot = 0;
      SlotOf(LoadLe64(t + 16 * i + 8), &slot);  // checked by CheckTable
      out[slot] = LoadLe64(t + 16 * i);
    }
    return Status::Ok();
  }
  Status Signatures(const std::function<Status(const uint8_t*)>&) override { return Status::Ok(); }
  Status DataSizes(uint64_t*) override { return Status::Ok(); }
  Status Data(const std::function<Status(const uint8_t*, size_t)>&) override { return Status::Ok(); }

 private:
  bool SlotOf(uint64_t id, uint64_t* slot) const {
    auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, uint64_t(0)));
    if (it == by_id_.end() || it->first != id) return false;
    *slot = it->second;
    return true;
  }
  const uint64_t* ids_;
  const uint8_t* tables_;
  uint64_t n_;
  std::vector<std::pair<uint64_t, uint64_t>> by_id_;
};

Status ConvertV1(const uint8_t* data, const io::FileHeader& h, const std::string& name, std::vector<uint8_t>* image) {
  auto corrupt = [&](const std::string& why) { return Status(Code::kCorrupt, "'" + name + "': " + why); };
  const uint8_t* p = data + io::kHeaderSize;
  if (h.payload_size < kPreambleV1) return corrupt("payload too short");
  if (h.flags != 0) return corrupt("unknown header flags " + std::to_string(h.flags) + " (offset 36)");
  Params prm;
  std::string why;
  if (!ReadParams(p, &prm, &why)) return corrupt(why);
  if (LoadLe32(p + 20) != 0) return corrupt("reserved field at offset 84 is not 0");
  const uint64_t n = LoadLe64(p + 24);
  if (h.params[0] != n || h.params[1] != prm.b) return corrupt("header params (offset 40) disagree with the payload's n and b");
  // n * (8 + 16 b) without overflow: n is at most the payload size, b at most num_perm (Validate).
  if (n > h.payload_size / (8 + 16 * uint64_t(prm.b)) || kPreambleV1 + n * (8 + 16 * uint64_t(prm.b)) != h.payload_size)
    return corrupt("payload size does not match " + std::to_string(n) + " ids");
  if (n >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "'" + name + "': more than 2^32-1 entries");
  V1Source src(reinterpret_cast<const uint64_t*>(p + kPreambleV1), p + kPreambleV1 + 8 * n, n);
  Status s = src.Index(name);
  for (uint32_t j = 0; j < prm.b && s.ok(); j++) s = src.CheckTable(j, name);
  if (!s.ok()) return s;
  WriteSpec spec;
  spec.params = prm;
  VectorSink sink;
  s = WriteIndex(spec, nullptr, {}, {&src}, &sink);
  if (!s.ok()) return s;
  *image = std::move(sink.bytes);
  return Status::Ok();
}

}  // namespace

Status Segment::OpenBytes(const uint8_t* data, size_t size, const std::string& name, bool verify) {
  name_ = name;
  io::FileHeader h;
  Status s = io::DecodeHeader(data, size, kKind, kVersion, verify, name, &h);
  if (!s.ok()) return s;
  if (h.version == 1) {
    s = ConvertV1(data, h, name, &owned_);
    if (!s.ok()) return s;
    data_ = owned_.data();
    size_ = owned_.size();
    file_version_ = 1;
    return Parse(false);  // our own image
  }
  data_ = data;
  size_ = size;
  file_version_ = 2;
  return Parse(verify);
}

Status Segment::Parse(bool verify) {
  const uint8_t* p = data_ + io::kHeaderSize;
  const uint64_t ps = size_ - io::kHeaderSize;  // DecodeHeader checked the payload size against the file
  const uint32_t flags = LoadLe32(data_ + 36);
  if (flags != 0) return Corrupt("unknown header flags " + std::to_string(flags) + " (offset 36)");
  if (ps < kPreamble) return Corrupt("payload too short (" + std::to_string(ps) + " bytes)");
  const uint32_t key_type = LoadLe32(p + 20), store = LoadLe32(p + 24);
  std::string why;
  if (!ReadParams(p, &p_, &why)) return Corrupt(why);
  if (key_type > 1) return Corrupt("unknown key type " + std::to_string(key_type) + " (offset 84)");
  if (store & ~(kStoreSignatures | kStoreData)) return Corrupt("unknown store flags " + std::to_string(store) + " (offset 88)");
  if (LoadLe32(p + 28) != 0) return Corrupt("reserved field at offset 92 is not 0");
  key_type_ = static_cast<KeyType>(key_type);
  store_.signatures = store & kStoreSignatures;
  store_.data = store & kStoreData;
  n_ = LoadLe64(p + 32);
  key_bytes_ = LoadLe64(p + 40);
  data_bytes_ = LoadLe64(p + 48);
  const uint64_t meta_bytes = LoadLe64(p + 56);
  const uint64_t hp0 = LoadLe64(data_ + 40), hp1 = LoadLe64(data_ + 48);
  if (hp0 != n_ || hp1 != p_.b) return Corrupt("header params (offset 40) disagree with the payload's n and b");
  if (n_ >= (uint64_t(1) << 32)) return Corrupt(std::to_string(n_) + " entries (offset 96): at most 2^32-1");
  if (key_type_ == KeyType::kInt && key_bytes_ != 0) return Corrupt("key bytes (offset 104) must be 0 for integer keys");
  if (!store_.data && data_bytes_ != 0) return Corrupt("data bytes (offset 112) must be 0 when no data is stored");
  if (key_bytes_ > ps || data_bytes_ > ps || meta_bytes > ps) return Corrupt("section sizes exceed the payload");
  // Every term below is < 2^52 (n < 2^32, b <= 65536, 8-byte values): the sum cannot overflow.
  const uint64_t keys_sz = key_type_ == KeyType::kInt ? 8 * n_ : 8 * (n_ + 1) + Pad8(key_bytes_);
  const uint64_t sig_sz = store_.signatures ? Pad8(n_ * p_.signature_bytes()) : 0;
  const uint64_t data_sz = store_.data ? 8 * (n_ + 1) + Pad8(data_bytes_) : 0;
  table_words_ = TableBytes(n_) / 8;
  const uint64_t want = kPreamble + keys_sz + TableBytes(n_) * (1 + uint64_t(p_.b)) + sig_sz + data_sz + Pad8(meta_bytes);
  if (want != ps)
    return Corrupt("payload is " + std::to_string(ps) + " bytes, the sections it announces take " + std::to_string(want));
  const uint8_t* at = p + kPreamble;
  keys_ = reinterpret_cast<const uint64_t*>(at);
  key_chars_ = key_type_ == KeyType::kString ? at + 8 * (n_ + 1) : nullptr;
  at += keys_sz;
  dir_hash_ = reinterpret_cast<const uint64_t*>(at);
  dir_slot_ = reinterpret_cast<const uint32_t*>(at + 8 * n_);
  at += TableBytes(n_);
  tables_ = reinterpret_cast<const uint64_t*>(at);
  at += TableBytes(n_) * p_.b;
  sigs_ = store_.signatures ? at : nullptr;
  at += sig_sz;
  data_off_ = store_.data ? reinterpret_cast<const uint64_t*>(at) : nullptr;
  data_bytes_p_ = store_.data ? at + 8 * (n_ + 1) : nullptr;
  at += data_sz;
  meta_ = std::string_view(reinterpret_cast<const char*>(at), size_t(meta_bytes));
  return verify ? Verify() : Status::Ok();
}

// Everything the writer guarantees, so that a file with valid checksums can neither make a query report an
// entry twice or one that is not there, nor make an access leave its section.
Status Segment::Verify() const {
  auto off = [&](const void* q) { return std::to_string(static_cast<const uint8_t*>(q) - data_); };
  // padding
  auto pad_ok = [&](const void* end_of_data, uint64_t used) {
    const uint8_t* e = static_cast<const uint8_t*>(end_of_data);
    return AllZero(e, size_t(Pad8(used) - used));
  };
  if (key_type_ == KeyType::kString) {
    if (keys_[0] != 0 || keys_[n_] != key_bytes_) return Corrupt("string key offsets must run from 0 to the key bytes (offset " + off(keys_) + ")");
    for (uint64_t i = 0; i < n_; i++) {
      if (keys_[i] > keys_[i + 1] || keys_[i + 1] > key_bytes_)
        return Corrupt("string key offsets decrease or pass the key bytes at entry " + std::to_string(i) + " (offset " + off(keys_ + i) + ")");
      if (!utf8::IsValid(key_chars_ + keys_[i], size_t(keys_[i + 1] - keys_[i])))
        return Corrupt("key of entry " + std::to_string(i) + " is not valid UTF-8 (offset " + off(key_chars_ + keys_[i]) + ")");
    }
    if (!pad_ok(key_chars_ + key_bytes_, key_bytes_)) return Corrupt("non-zero padding after the keys");
  }
  SlotSet seen(n_);
  // the key directory: sorted by (hash, slot), each slot once, hashes matching the keys, no key twice
  for (uint64_t i = 0; i < n_; i++) {
    const uint64_t slot = dir_slot_[i];
    if (slot >= n_ || !seen.Add(slot)) return Corrupt("the key directory does not hold each entry once (offset " + off(dir_slot_ + i) + ")");
    Key k;
    Status s = KeyAt(slot, &k);
    if (!s.ok()) return s;
    if (KeyHash(k) != dir_hash_[i]) return Corrupt("key directory entry " + std::to_string(i) + " does not match its key (offset " + off(dir_hash_ + i) + ")");
    if (i > 0 && (dir_hash_[i] < dir_hash_[i - 1] || (dir_hash_[i] == dir_hash_[i - 1] && slot <= dir_slot_[i - 1])))
      return Corrupt("the key directory is not sorted at entry " + std::to_string(i) + " (offset " + off(dir_hash_ + i) + ")");
    for (uint64_t x = i; x > 0 && dir_hash_[x - 1] == dir_hash_[i]; x--) {
      Key other;
      s = KeyAt(dir_slot_[x - 1], &other);
      if (!s.ok()) return s;
      if (other == k) return Corrupt("key " + KeyText(k) + " is listed twice");
    }
  }
  if (!pad_ok(dir_slot_ + n_, 4 * n_)) return Corrupt("non-zero padding after the key directory");
  for (uint32_t j = 0; j < p_.b; j++) {
    const uint64_t* k = band_keys(j);
    const uint32_t* sl = band_slots(j);
    seen.Clear();
    for (uint64_t i = 0; i < n_; i++) {
      if (sl[i] >= n_ || !seen.Add(sl[i]))
        return Corrupt("band table " + std::to_string(j) + " does not hold each entry once (offset " + off(sl + i) + ")");
      if (i > 0 && (k[i] < k[i - 1] || (k[i] == k[i - 1] && sl[i] <= sl[i - 1])))
        return Corrupt("band table " + std::to_string(j) + " is not sorted at entry " + std::to_string(i) + " (offset " + off(k + i) + ")");
    }
    if (!pad_ok(sl + n_, 4 * n_)) return Corrupt("non-zero padding after band table " + std::to_string(j));
  }
  if (sigs_ && !pad_ok(sigs_ + n_ * p_.signature_bytes(), n_ * p_.signature_bytes())) return Corrupt("non-zero padding after the signatures");
  if (data_off_) {
    if (data_off_[0] != 0 || data_off_[n_] != data_bytes_) return Corrupt("data offsets must run from 0 to the data bytes (offset " + off(data_off_) + ")");
    for (uint64_t i = 0; i < n_; i++)
      if (data_off_[i] > data_off_[i + 1] || data_off_[i + 1] > data_bytes_)
        return Corrupt("data offsets decrease or pass the data bytes at entry " + std::to_string(i) + " (offset " + off(data_off_ + i) + ")");
    if (!pad_ok(data_bytes_p_ + data_bytes_, data_bytes_)) return Corrupt("non-zero padding after the data");
  }
  if (!utf8::IsValid(reinterpret_cast<const uint8_t*>(meta_.data()), meta_.size())) return Corrupt("the metadata is not valid UTF-8");
  if (!pad_ok(meta_.data() + meta_.size(), meta_.size())) return Corrupt("non-zero padding after the metadata");
  return Status::Ok();
}

Status Segment::KeyAt(uint64_t slot, Key* k) const {
  if (slot >= n_) return Corrupt("entry " + std::to_string(slot) + " out of range");
  if (key_type_ == KeyType::kInt) {
    *k = Key::Int(keys_[slot]);
    return Status::Ok();
  }
  const uint64_t a = keys_[slot], b = keys_[slot + 1];
  if (a > b || b > key_bytes_)
    return Corrupt("the key offsets of entry " + std::to_string(slot) + " are damaged (load with verification)");
  *k = Key::Str(std::string_view(reinterpret_cast<const char*>(key_chars_ + a), size_t(b - a)));
  return Status::Ok();
}

bool Segment::Find(const Key& k, uint64_t* slot) const {
  if (k.type != key_type_) return false;
  const uint64_t h = KeyHash(k);
  size_t lo = 0, hi = n_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (dir_hash_[mid] < h) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n_ && dir_hash_[lo] == h; lo++) {
    Key other;
    if (KeyAt(dir_slot_[lo], &other).ok() && other == k) {
      *slot = dir_slot_[lo];
      return true;
    }
  }
  return false;
}

const uint8_t* Segment::Signature(uint64_t slot) const {
  return sigs_ && slot < n_ ? sigs_ + slot * p_.signature_bytes() : nullptr;
}

Status Segment::Data(uint64_t slot, const uint8_t** p, uint64_t* n) const {
  if (!data_off_) return Status(Code::kUnsupported, "'" + name_ + "' stores no per-entry data");
  if (slot >= n_) return Corrupt("entry " + std::to_string(slot) + " out of range");
  const uint64_t a = data_off_[slot], b = data_off_[slot + 1];
  if (a > b || b > data_bytes_) return Corrupt("the data offsets of entry " + std::to_string(slot) + " are damaged (load with verification)");
  *p = data_bytes_p_ + a;
  *n = b - a;
  return Status::Ok();
}

uint64_t Segment::DataSize(uint64_t slot) const {
  const uint8_t* p;
  uint64_t n = 0;
  return Data(slot, &p, &n).ok() ? n : 0;
}

// ---- writing ------------------------------------------------------------------------------------------------

namespace {

// Buffered writes with the payload CRC-32C kept as they go.
class Emitter {
 public:
  explicit Emitter(ByteSink* out) : out_(out) { buf_.reserve(kBuf); }
  void Put(const void* data, size_t n) {
    if (!s_.ok()) return;
    const uint8_t* p = static_cast<const uint8_t*>(data);
    if (buf_.size() + n > kBuf) Flush();
    if (n >= kBuf) {
      crc_ = Crc32c(p, n, crc_);
      s_ = out_->Write(p, n);
      written_ += n;
      return;
    }
    buf_.insert(buf_.end(), p, p + n);
  }
  void U32(uint32_t v) { Put(&v, 4); }
  void U64(uint64_t v) { Put(&v, 8); }
  void Pad(uint64_t used) {
    static const uint8_t zeros[8] = {0};
    Put(zeros, size_t(Pad8(used) - used));
  }
  void Flush() {
    if (!s_.ok() || buf_.empty()) return;
    crc_ = Crc32c(buf_.data(), buf_.size(), crc_);
    s_ = out_->Write(buf_.data(), buf_.size());
    written_ += buf_.size();
    buf_.clear();
  }
  Status& status() { return s_; }
  uint32_t crc() const { return crc_; }
  uint64_t written() const { return written_; }

 private:
  static constexpr size_t kBuf = 1 << 20;
  ByteSink* out_;
  std::vector<uint8_t> buf_;
  Status s_;
  uint32_t crc_ = 0;
  uint64_t written_ = 0;
};

// Base slot -> slot in the written file (live slots only): s minus the dead slots before it.
class Renumber {
 public:
  Renumber(const std::vector<uint64_t>& dead, uint64_t n) : dead_(dead) {
    if (dead.empty()) return;
    rank_.resize(dead.size() + 1);
    for (size_t w = 0; w < dead.size(); w++) rank_[w + 1] = rank_[w] + uint64_t(__builtin_popcountll(dead[w]));
    const uint64_t words = (n + 63) / 64;
    live_ = n - rank_[std::min<size_t>(words, dead.size())];
  }
  bool dead(uint64_t s) const { return DeadBit(dead_, s); }
  uint64_t operator()(uint64_t s) const {
    if (dead_.empty()) return s;
    const uint64_t w = s >> 6, bit = s & 63;
    return s - rank_[w] - uint64_t(__builtin_popcountll(dead_[w] & ((uint64_t(1) << bit) - 1)));
  }
  uint64_t live(uint64_t n) const { return dead_.empty() ? n : live_; }

 private:
  const std::vector<uint64_t>& dead_;
  std::vector<uint64_t> rank_;
  uint64_t live_ = 0;
};

using SortedEntry = std::pair<uint64_t, uint64_t>;  // (key, slot in the written file)

// Merges the live entries of one sorted base table (keys k, slots s) with the sorted appended entries, by
// (key, slot): every base slot precedes every appended one, so equal keys keep the base's entries first.
// Emits the merged keys, then the merged slots (two passes). Fails on a base slot out of range or a count
// that does not match the live entries (a damaged base loaded without verification).
Status EmitTable(Emitter* e, const uint64_t* k, const uint32_t* s, uint64_t base_n, const Renumber& rn, uint64_t base_live,
                 const std::vector<SortedEntry>& add, const std::string& what) {
  for (int pass = 0; pass < 2; pass++) {
    size_t a = 0;
    uint64_t emitted = 0;
    auto put_add = [&](const SortedEntry& x) {
      if (pass == 0) e->U64(x.first);
      else e->U32(static_cast<uint32_t>(x.second));
    };
    for (uint64_t i = 0; i < base_n; i++) {
      const uint64_t slot = s[i];
      if (slot >= base_n) return Status(Code::kCorrupt, what + ": damaged (a slot out of range); load it with verification");
      if (rn.dead(slot)) continue;
      while (a < add.size() && add[a].first < k[i]) put_add(add[a++]);
      if (pass == 0) e->U64(k[i]);
      else e->U32(static_cast<uint32_t>(rn(slot)));
      emitted++;
    }
    while (a < add.size()) put_add(add[a++]);
    if (emitted != base_live) return Status(Code::kCorrupt, what + ": damaged (entries missing or repeated); load it with verification");
    if (pass == 1) e->Pad(4 * (base_live + add.size()));
    if (!e->status().ok()) return e->status();
  }
  return Status::Ok();
}

}  // namespace

Status WriteIndex(const WriteSpec& spec, const Segment* base, const std::vector<uint64_t>& dead,
                  const std::vector<AppendSource*>& sources, ByteSink* out) {
  const Params& p = spec.params;
  if (base && (!(base->params() == p) || base->key_type() != spec.key_type || !(base->store() == spec.store)))
    return Status(Code::kInternal, "WriteIndex: the base segment has other parameters");
  const uint64_t base_n = base ? base->size() : 0;
  const Renumber rn(dead, base_n);
  const uint64_t base_live = rn.live(base_n);
  const std::string what = base ? "the loaded index '" + base->name() + "'" : "";
  uint64_t n_add = 0;
  for (AppendSource* src : sources) n_add += src->count();
  const uint64_t n = base_live + n_add;
  if (n >= (uint64_t(1) << 32)) return Status(Code::kUnsupported, "an index holds at most 2^32-1 entries");

  // Pass over the appended keys: directory entries, key bytes. Then the base's key and data bytes.
  std::vector<SortedEntry> dir_add;
  dir_add.reserve(size_t(n_add));
  uint64_t key_bytes = 0, data_bytes = 0;
  for (AppendSource* src : sources) {
    Status s = src->Keys([&](const Key& k) {
      if (k.type != spec.key_type) return Status(Code::kInternal, "WriteIndex: a key of the wrong type");
      dir_add.emplace_back(KeyHash(k), base_live + dir_add.size());
      key_bytes += k.s.size();
      return Status::Ok();
    });
    if (!s.ok()) return s;
  }
  if (dir_add.size() != n_add) return Status(Code::kInternal, "WriteIndex: a source gave the wrong number of keys");
  std::vector<uint64_t> add_data_sizes;
  if (spec.store.data) {
    add_data_sizes.resize(size_t(n_add));
    uint64_t at = 0;
    for (AppendSource* src : sources) {
      Status s = src->DataSizes(add_data_sizes.data() + at);
      if (!s.ok()) return s;
      at += src->count();
    }
    for (uint64_t v : add_data_sizes) data_bytes += v;
  }
  for (uint64_t slot = 0; slot < base_n; slot++) {
    if (rn.dead(slot)) continue;
    if (spec.key_type == KeyType::kString) {
      Key k;
      Status s = base->KeyAt(slot, &k);
      if (!s.ok()) return s;
      key_bytes += k.s.size();
    }
    if (spec.store.data) {
      const uint8_t* d;
      uint64_t m;
      Status s = base->Data(slot, &d, &m);
      if (!s.ok()) return s;
      data_bytes += m;
    }
  }

  Emitter e(out);
  uint8_t header[io::kHeaderSize] = {0};
  Status s = out->Write(header, sizeof header);  // placeholder, rewritten once the CRC is known
  if (!s.ok()) return s;
  // preamble
  e.U32(static_cast<uint32_t>(p.profile));
  e.U32(p.value_bytes);
  e.U32(p.num_perm);
  e.U32(p.b);
  e.U32(p.r);
  e.U32(static_cast<uint32_t>(spec.key_type));
  e.U32((spec.store.signatures ? kStoreSignatures : 0) | (spec.store.data ? kStoreData : 0));
  e.U32(0);
  e.U64(n);
  e.U64(key_bytes);
  e.U64(data_bytes);
  e.U64(spec.meta.size());

  // keys
  auto base_keys = [&](const std::function<void(const Key&)>& fn) {
    for (uint64_t slot = 0; slot < base_n; slot++) {
      if (rn.dead(slot)) continue;
      Key k;
      base->KeyAt(slot, &k);  // checked above for strings; integers cannot fail
      fn(k);
    }
  };
  auto add_keys = [&](const std::function<void(const Key&)>& fn) {
    for (AppendSource* src : sources) {
      Status st = src->Keys([&](const Key& k) {
        fn(k);
        return e.status();
      });
      if (!st.ok()) return st;
    }
    return Status::Ok();
  };
  if (spec.key_type == KeyType::kInt) {
    base_keys([&](const Key& k) { e.U64(k.i); });
    s = add_keys([&](const Key& k) { e.U64(k.i); });
  } else {
    uint64_t at = 0;
    e.U64(0);
    auto put_end = [&](const Key& k) {
      at += k.s.size();
      e.U64(at);
    };
    base_keys(put_end);
    s = add_keys(put_end);
    if (s.ok() && at != key_bytes) s = Status(Code::kInternal, "WriteIndex: the keys changed between passes");
    auto put_bytes = [&](const Key& k) { e.Put(k.s.data(), k.s.size()); };
    if (s.ok()) {
      base_keys(put_bytes);
      s = add_keys(put_bytes);
    }
    e.Pad(key_bytes);
  }
  if (!s.ok()) return s;

  // key directory: sorted like a band table, by (hash, slot)
  std::sort(dir_add.begin(), dir_add.end());
  s = EmitTable(&e, base ? base->dir_hashes() : nullptr, base ? base->dir_slots() : nullptr, base_n, rn, base_live, dir_add,
                what);
  if (!s.ok()) return s;
  dir_add = std::vector<SortedEntry>();

  // band tables, one at a time: the appended entries' keys of band j, sorted, merged with the base's table j
  {
    std::vector<SortedEntry> add(static_cast<size_t>(n_add));
    std::vector<uint64_t> keys;
    for (uint32_t j = 0; j < p.b; j++) {
      uint64_t at = 0;
      for (AppendSource* src : sources) {
        keys.resize(size_t(src->count()));
        s = src->BandKeys(j, keys.data());
        if (!s.ok()) return s;
        for (size_t i = 0; i < keys.size(); i++, at++) add[size_t(at)] = {keys[i], base_live + at};
      }
      std::sort(add.begin(), add.end());
      s = EmitTable(&e, base ? base->band_keys(j) : nullptr, base ? base->band_slots(j) : nullptr, base_n, rn, base_live,
                    add, what);
      if (!s.ok()) return s;
    }
  }

  // signatures
  if (spec.store.signatures) {
    const size_t sb = p.signature_bytes();
    for (uint64_t slot = 0; slot < base_n; slot++)
      if (!rn.dead(slot)) e.Put(base->Signature(slot), sb);
    uint64_t count = 0;
    for (AppendSource* src : sources) {
      s = src->Signatures([&](const uint8_t* sig) {
        e.Put(sig, sb);
        count++;
        return e.status();
      });
      if (!s.ok()) return s;
    }
    if (count != n_add) return Status(Code::kInternal, "WriteIndex: a source gave the wrong number of signatures");
    e.Pad(n * sb);
  }

  // data: offsets, then bytes
  if (spec.store.data) {
    uint64_t at = 0;
    e.U64(0);
    for (uint64_t slot = 0; slot < base_n; slot++) {
      if (rn.dead(slot)) continue;
      at += base->DataSize(slot);
      e.U64(at);
    }
    for (uint64_t v : add_data_sizes) {
      at += v;
      e.U64(at);
    }
    for (uint64_t slot = 0; slot < base_n; slot++) {
      if (rn.dead(slot)) continue;
      const uint8_t* d;
      uint64_t m;
      s = base->Data(slot, &d, &m);
      if (!s.ok()) return s;
      e.Put(d, size_t(m));
    }
    uint64_t added = 0, idx = 0;
    bool sizes_ok = true;
    for (AppendSource* src : sources) {
      s = src->Data([&](const uint8_t* d, size_t m) {
        if (idx >= add_data_sizes.size() || add_data_sizes[idx++] != m) sizes_ok = false;
        e.Put(d, m);
        added += m;
        return e.status();
      });
      if (!s.ok()) return s;
    }
    if (!sizes_ok || idx != n_add || at != data_bytes)
      return Status(Code::kInternal, "WriteIndex: the data changed between passes");
    e.Pad(data_bytes);
  }

  e.Put(spec.meta.data(), spec.meta.size());
  e.Pad(spec.meta.size());
  e.Flush();
  if (!e.status().ok()) return e.status();

  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = e.written();
  h.payload_crc = e.crc();
  h.params[0] = n;
  h.params[1] = p.b;
  io::EncodeHeader(h, header);
  return out->WriteAt(0, header, sizeof header);
}

}  // namespace lsh
}  // namespace neardup
