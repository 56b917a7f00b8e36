#include "exact/exact_index.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "hash/crc32c.h"
#include "io/header.h"

namespace neardup {
namespace exact {
namespace {

constexpr char kKind[4] = {'E', 'X', 'I', 'X'};
constexpr uint32_t kVersion = 1;

Status Corrupt(const std::string& path, const std::string& what) {
  return Status(Code::kCorrupt, "'" + path + "' is not a valid exact index: " + what);
}

bool Less(uint64_t ahi, uint64_t alo, uint64_t bhi, uint64_t blo) { return ahi != bhi ? ahi < bhi : alo < blo; }

// Appends bytes to the file and to the payload CRC.
struct Payload {
  io::AtomicFile* f;
  uint32_t crc = 0;
  uint64_t size = 0;
  Status Put(const void* p, size_t n) {
    crc = Crc32c(p, n, crc);
    size += n;
    return f->Write(p, n);
  }
};

}  // namespace

Status ExactIndex::Load(const std::string& path) {
  Status s = map_.Open(path);
  if (!s.ok()) return s;
  io::FileHeader h;
  s = io::DecodeHeader(map_.data(), map_.size(), kKind, kVersion, true, path, &h);
  if (!s.ok()) return s;
  const uint8_t* p = map_.data() + io::kHeaderSize;
  const uint64_t size = h.payload_size;
  n_ = h.params[0];
  documents_ = h.params[1];
  const bool ids = (h.flags & 1) != 0;
  if (size < 4) return Corrupt(path, "the payload is shorter than its meta length");
  uint32_t m;
  std::memcpy(&m, p, 4);
  const uint64_t meta_end = (4 + uint64_t(m) + 7) / 8 * 8;
  if (meta_end > size) return Corrupt(path, "the meta runs past the payload");
  meta_.assign(reinterpret_cast<const char*>(p + 4), m);
  if (n_ > (size - meta_end) / 24) return Corrupt(path, "more entries than the payload holds");
  const uint64_t rec_end = meta_end + 24 * n_;
  rec_ = reinterpret_cast<const uint64_t*>(p + meta_end);  // the header is 64 bytes and meta_end a multiple of 8
  if (ids) {
    if ((size - rec_end) / 8 < n_ + 1) return Corrupt(path, "the id offsets run past the payload");
    off_ = reinterpret_cast<const uint64_t*>(p + rec_end);
    const uint64_t ids_at = rec_end + 8 * (n_ + 1);
    if (off_[0] != 0) return Corrupt(path, "the first id offset is not 0");
    for (uint64_t e = 0; e < n_; e++)
      if (off_[e + 1] < off_[e]) return Corrupt(path, "the id offsets are not ascending at entry " + std::to_string(e));
    if (off_[n_] != size - ids_at) return Corrupt(path, "the ids do not end where the payload ends");
    ids_ = p + ids_at;
  } else if (rec_end != size) {
    return Corrupt(path, "the entries do not end where the payload ends");
  }
  dir_.assign(65537, n_);
  for (uint64_t e = n_; e-- > 0;) {
    if (e + 1 < n_ && !Less(rec_[3 * e], rec_[3 * e + 1], rec_[3 * e + 3], rec_[3 * e + 4]))
      return Corrupt(path, "the hashes are not strictly ascending at entry " + std::to_string(e));
    dir_[rec_[3 * e] >> 48] = e;
  }
  for (size_t k = 65536; k-- > 0;) dir_[k] = std::min(dir_[k], dir_[k + 1]);
  return Status::Ok();
}

bool ExactIndex::Find(const Hash128& h, uint64_t* entry) const {
  if (n_ == 0) return false;
  uint64_t lo = dir_[h.hi >> 48], hi = dir_[(h.hi >> 48) + 1];
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (Less(rec_[3 * mid], rec_[3 * mid + 1], h.hi, h.lo)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < n_ && rec_[3 * lo] == h.hi && rec_[3 * lo + 1] == h.lo) {
    *entry = lo;
    return true;
  }
  return false;
}

Status WriteExactIndex(const std::string& path, const IndexWrite& w, const NewEntry* fresh, size_t n_fresh) {
  if (w.prior && w.with_ids != w.prior->has_ids())
    return Status(Code::kInvalidArgument, "an index with ids is extended with ids, one without ids without them");
  if (w.meta.size() > 0xffffffffu) return Status(Code::kInvalidArgument, "the index's meta is too long");
  for (size_t i = 0; i < n_fresh; i++)
    if (w.with_ids && fresh[i].doc >= w.ids.n) return Status(Code::kInvalidArgument, "a document without an id");
  io::AtomicFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  uint8_t head[io::kHeaderSize] = {0};
  s = f.Write(head, sizeof head);  // rewritten at the end
  Payload pay{&f};
  const uint32_t m = static_cast<uint32_t>(w.meta.size());
  if (s.ok()) s = pay.Put(&m, 4);
  if (s.ok()) s = pay.Put(w.meta.data(), m);
  const uint64_t zero = 0;
  if (s.ok()) s = pay.Put(&zero, (8 - (4 + m) % 8) % 8);
  const uint64_t n_prior = w.prior ? w.prior->size() : 0;
  // the merge of the two sorted lists: (source, index) in hash order, written as records, then again for ids
  auto each = [&](const std::function<Status(bool fresh_entry, uint64_t i)>& fn) -> Status {
    uint64_t a = 0, b = 0;
    while (a < n_prior || b < n_fresh) {
      bool take_fresh;
      if (a == n_prior) take_fresh = true;
      else if (b == n_fresh) take_fresh = false;
      else {
        const Hash128 x = w.prior->hash(a);
        take_fresh = Less(fresh[b].hi, fresh[b].lo, x.hi, x.lo);
      }
      Status st = take_fresh ? fn(true, b++) : fn(false, a++);
      if (!st.ok()) return st;
    }
    return Status::Ok();
  };
  std::string buf;
  auto flush = [&](bool force) -> Status {
    if (buf.size() < (1 << 20) && !force) return Status::Ok();
    Status st = pay.Put(buf.data(), buf.size());
    buf.clear();
    return st;
  };
  auto put64 = [&](uint64_t v) { buf.append(reinterpret_cast<const char*>(&v), 8); };
  if (s.ok()) s = each([&](bool fr, uint64_t i) {
    if (fr) {
      put64(fresh[i].hi);
      put64(fresh[i].lo);
      put64(w.first_doc + fresh[i].doc);
    } else {
      const Hash128 x = w.prior->hash(i);
      put64(x.hi);
      put64(x.lo);
      put64(w.prior->doc(i));
    }
    return flush(false);
  });
  if (s.ok()) s = flush(true);
  if (s.ok() && w.with_ids) {
    uint64_t at = 0;
    put64(0);
    s = each([&](bool fr, uint64_t i) {
      at += fr ? w.ids.len[fresh[i].doc] : w.prior->id(i).size();
      put64(at);
      return flush(false);
    });
    if (s.ok()) s = each([&](bool fr, uint64_t i) {
      if (fr) buf.append(reinterpret_cast<const char*>(w.ids.ptr[fresh[i].doc]), w.ids.len[fresh[i].doc]);
      else buf.append(w.prior->id(i));
      return flush(false);
    });
    if (s.ok()) s = flush(true);
  }
  if (!s.ok()) return s;
  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = pay.size;
  h.payload_crc = pay.crc;
  h.flags = w.with_ids ? 1 : 0;
  h.params[0] = n_prior + n_fresh;
  h.params[1] = w.documents;
  io::EncodeHeader(h, head);
  s = f.WriteAt(0, head, sizeof head);
  if (s.ok()) s = f.Commit();
  return s;
}

}  // namespace exact
}  // namespace neardup
