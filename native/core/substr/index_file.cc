#include "substr/index_file.h"

#include <algorithm>
#include <cstring>

#include "hash/crc32c.h"
#include "io/header.h"
#include "util/endian.h"

namespace neardup {
namespace substr {
namespace {

const char kKind[4] = {'S', 'U', 'B', 'X'};
constexpr uint32_t kVersion = 1;
constexpr uint32_t kWide = 1;  // flags: 8-byte suffix-array entries

uint64_t Pad8(uint64_t n) { return (n + 7) & ~uint64_t(7); }

// Payload bytes go through here: written and added to the CRC.
struct Sink {
  io::AtomicFile* f;
  uint32_t crc = 0;
  Status Put(const void* p, size_t n) {
    crc = Crc32c(p, n, crc);
    return f->Write(p, n);
  }
};

}  // namespace

Status WriteIndex(const std::string& path, const uint8_t* text, uint64_t n, const std::vector<uint64_t>& starts,
                  const int32_t* sa32, const int64_t* sa64, const std::atomic<bool>* stop) {
  const bool wide = sa64 != nullptr;
  io::AtomicFile f;
  Status s = f.Open(path);
  if (!s.ok()) return s;
  uint8_t head[io::kHeaderSize] = {0};
  s = f.Write(head, sizeof head);  // the real header at the end, when the CRC is known
  if (!s.ok()) return s;
  Sink out{&f};
  for (uint64_t at = 0; at < n && s.ok(); at += 1 << 24) s = out.Put(text + at, size_t(std::min<uint64_t>(1 << 24, n - at)));
  const uint8_t zeros[8] = {0};
  if (s.ok()) s = out.Put(zeros, size_t(Pad8(n) - n));
  std::vector<uint8_t> buf(1 << 20);
  size_t used = 0;
  const auto flush = [&]() {
    Status r = out.Put(buf.data(), used);
    used = 0;
    return r;
  };
  for (uint64_t d = 0; d < starts.size() && s.ok(); d++) {
    if (used + 8 > buf.size()) s = flush();
    StoreLe64(buf.data() + used, starts[d]);
    used += 8;
  }
  const size_t w = wide ? 8 : 4;
  for (uint64_t i = 0; i < n && s.ok(); i++) {
    if (used + w > buf.size()) {
      s = flush();
      if (stop != nullptr && stop->load()) return Status(Code::kCancelled, "cancelled");
    }
    if (wide) StoreLe64(buf.data() + used, uint64_t(sa64[i]));
    else StoreLe32(buf.data() + used, uint32_t(sa32[i]));
    used += w;
  }
  if (s.ok() && used > 0) s = flush();
  if (!s.ok()) return s;
  io::FileHeader h;
  std::memcpy(h.kind, kKind, 4);
  h.version = kVersion;
  h.payload_size = Pad8(n) + 8 * uint64_t(starts.size()) + w * n;
  h.payload_crc = out.crc;
  h.flags = wide ? kWide : 0;
  h.params[0] = n;
  h.params[1] = starts.size();
  io::EncodeHeader(h, head);
  s = f.WriteAt(0, head, sizeof head);
  if (!s.ok()) return s;
  return f.Commit();
}

Status SubstringIndex::Open(const std::string& path, bool verify) {
  Status s = file_.Open(path);
  if (!s.ok()) return s;
  return Attach(file_.data(), file_.size(), path, verify);
}

Status SubstringIndex::Attach(const uint8_t* data, size_t size, const std::string& path, bool verify) {
  name_ = path;
  io::FileHeader h;
  Status s = io::DecodeHeader(data, size, kKind, kVersion, verify, path, &h);
  if (!s.ok()) return s;
  const auto corrupt = [&](const std::string& why) { return Status(Code::kCorrupt, "'" + path + "': " + why); };
  if ((h.flags & ~kWide) != 0) return corrupt("unknown flags " + std::to_string(h.flags));
  wide_ = (h.flags & kWide) != 0;
  n_ = h.params[0];
  docs_ = h.params[1];
  const uint64_t w = wide_ ? 8 : 4;
  if (n_ > (uint64_t(1) << 48) || docs_ > n_ || (!wide_ && n_ >= (uint64_t(1) << 31)))
    return corrupt("text of " + std::to_string(n_) + " bytes, " + std::to_string(docs_) + " documents");
  if (h.payload_size != Pad8(n_) + 8 * docs_ + w * n_) return corrupt("payload size does not match its text and documents");
  text_ = data + io::kHeaderSize;
  sa_ = text_ + Pad8(n_) + 8 * docs_;
  const uint8_t* st = text_ + Pad8(n_);
  uint64_t prev = 0;
  for (uint64_t d = 0; d < docs_; d++) {
    const uint64_t at = LoadLe64(st + 8 * d);
    if (at >= n_ || (d == 0 && at != 0) || (d > 0 && (at <= prev || text_[at - 1] != 0xFF)))
      return corrupt("document " + std::to_string(d) + " starts at " + std::to_string(at));
    prev = at;
  }
  if (n_ > 0 && text_[n_ - 1] != 0xFF) return corrupt("the text does not end with a separator");
  if ((docs_ == 0) != (n_ == 0)) return corrupt("text without documents");
  return Status::Ok();
}

uint64_t SubstringIndex::Entry(uint64_t i) const { return wide_ ? LoadLe64(sa_ + 8 * i) : LoadLe32(sa_ + 4 * i); }

Status SubstringIndex::Count(const uint8_t* pattern, size_t m, uint64_t* count) const {
  *count = 0;
  if (m == 0) return Status(Code::kInvalidArgument, "an empty string");
  bool bad = false;
  // <0: the suffix at entry i sorts before every string starting with the pattern; 0: it starts with it
  const auto cmp = [&](uint64_t i) -> int {
    const uint64_t p = Entry(i);
    if (p >= n_) {
      bad = true;
      return 0;
    }
    const uint64_t k = std::min<uint64_t>(m, n_ - p);
    const int c = std::memcmp(text_ + p, pattern, size_t(k));
    if (c != 0) return c;
    return k < m ? -1 : 0;
  };
  uint64_t lo = 0, hi = n_;
  while (lo < hi) {  // the first entry not before the pattern
    const uint64_t mid = lo + (hi - lo) / 2;
    if (cmp(mid) < 0) lo = mid + 1;
    else hi = mid;
  }
  const uint64_t first = lo;
  hi = n_;
  while (lo < hi) {  // the first entry after every string starting with the pattern
    const uint64_t mid = lo + (hi - lo) / 2;
    if (cmp(mid) <= 0) lo = mid + 1;
    else hi = mid;
  }
  if (bad) return Status(Code::kCorrupt, "'" + name_ + "': a suffix-array entry beyond the text");
  *count = lo - first;
  return Status::Ok();
}

}  // namespace substr
}  // namespace neardup
