#include "chunks/files.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hash/crc32c.h"
#include "io/header.h"
#include "io/os.h"
#include "util/endian.h"

namespace neardup {
namespace chunks {

namespace {

std::string Hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

void Put32(std::vector<uint8_t>* p, uint32_t v) {
  uint8_t b[4];
  StoreLe32(b, v);
  p->insert(p->end(), b, b + 4);
}
void Put64(std::vector<uint8_t>* p, uint64_t v) {
  uint8_t b[8];
  StoreLe64(b, v);
  p->insert(p->end(), b, b + 8);
}

// Reads a whole file written by WriteWhole and checks its header (kind, version, checksums).
Status ReadWhole(const std::string& path, const char kind[4], std::string* raw, io::FileHeader* h) {
  Status s = io::ReadFile(path, raw);
  if (!s.ok()) return s;
  return io::DecodeHeader(reinterpret_cast<const uint8_t*>(raw->data()), raw->size(), kind, kFormatVersion, true, path, h);
}

// Writes header + payload atomically.
Status WriteWhole(const std::string& path, const char kind[4], uint32_t flags, uint64_t p0, uint64_t p1,
                  const std::vector<uint8_t>& payload) {
  io::FileHeader h;
  std::memcpy(h.kind, kind, 4);
  h.version = kFormatVersion;
  h.flags = flags;
  h.params[0] = p0;
  h.params[1] = p1;
  h.payload_size = payload.size();
  h.payload_crc = Crc32c(payload.data(), payload.size());
  uint8_t hb[io::kHeaderSize];
  io::EncodeHeader(h, hb);
  io::AtomicFile f;
  Status s = f.Open(path);
  if (s.ok()) s = f.Write(hb, sizeof hb);
  if (s.ok() && !payload.empty()) s = f.Write(payload.data(), payload.size());
  if (s.ok()) s = f.Commit();
  return s;
}

// Ends a file written as a stream after a header-sized gap: writes its header (the payload is all that
// follows it, payload_crc its CRC-32C) at offset 0, then commits.
Status CommitStreamed(io::AtomicFile* out, const char kind[4], uint32_t flags, uint64_t p0, uint64_t p1,
                      uint32_t payload_crc) {
  io::FileHeader h;
  std::memcpy(h.kind, kind, 4);
  h.version = kFormatVersion;
  h.flags = flags;
  h.params[0] = p0;
  h.params[1] = p1;
  h.payload_size = out->written() - io::kHeaderSize;
  h.payload_crc = payload_crc;
  uint8_t hb[io::kHeaderSize];
  io::EncodeHeader(h, hb);
  Status s = out->WriteAt(0, hb, sizeof hb);
  if (!s.ok()) return s;
  return out->Commit();
}

constexpr uint32_t kLower = 1, kStrip = 2, kNonWord = 4, kShortNone = 8;  // text flags

}  // namespace

Status CorruptAt(const std::string& file, uint64_t offset, const std::string& what) {
  return Status(Code::kCorrupt, "'" + file + "' is corrupt at offset " + std::to_string(offset) + " (" + Hex(offset) +
                                    "): " + what);
}

Status ValidateParams(const IndexParams& p) {
  Status s = ValidateChunkOptions(p.chunk);
  if (!s.ok()) return s;
  if (p.parts < 1 || p.parts > kMaxParts)
    return Status(Code::kInvalidArgument, "parts must be from 1 to " + std::to_string(kMaxParts));
  if (p.top_k < 1 || p.top_k > kMaxTopK)
    return Status(Code::kInvalidArgument, "k must be from 1 to " + std::to_string(kMaxTopK));
  if (p.min_shared < 1) return Status(Code::kInvalidArgument, "min shared must be at least 1");
  if (!(p.min_similarity >= 0 && p.min_similarity <= 1))
    return Status(Code::kInvalidArgument, "min similarity must be from 0 to 1");
  return Status::Ok();
}

void PartRange(uint32_t bits, uint32_t parts, uint32_t p, uint64_t* lo, uint64_t* hi) {
  const unsigned __int128 space = static_cast<unsigned __int128>(1) << bits;
  const unsigned __int128 a = space * p / parts;
  const unsigned __int128 b = space * (p + 1) / parts;
  *lo = static_cast<uint64_t>(a);
  *hi = static_cast<uint64_t>(b - 1);
}

uint32_t PartOf(uint32_t bits, uint32_t parts, uint64_t key) {
  if (parts == 1) return 0;
  // The p with lo(p) <= key < lo(p + 1): p = floor(((key + 1) * P - 1) / 2^bits), checked against the bounds.
  const unsigned __int128 space = static_cast<unsigned __int128>(1) << bits;
  uint32_t p = static_cast<uint32_t>((static_cast<unsigned __int128>(key) * parts) / space);
  while (p + 1 < parts && static_cast<unsigned __int128>(key) >= space * (p + 1) / parts) p++;
  while (p > 0 && static_cast<unsigned __int128>(key) < space * p / parts) p--;
  return p;
}

// ------------------------------------------------------------------------------------------------ manifest

std::string DirectoryName(uint32_t file) { return "dir-" + std::to_string(file) + ".ckd"; }
std::string DocsName(uint32_t file) { return "docs-" + std::to_string(file) + ".ckr"; }
std::string TopsName(uint32_t file) { return "tops-" + std::to_string(file) + ".ckr"; }
std::string SegmentName(uint32_t part, uint32_t file) {
  return "seg-" + std::to_string(part) + "-" + std::to_string(file) + ".pst";
}

bool IsIndexFileName(const std::string& n) {
  auto digits = [](const std::string& s, size_t b, size_t e) {
    if (b >= e) return false;
    for (size_t i = b; i < e; i++)
      if (s[i] < '0' || s[i] > '9') return false;
    return true;
  };
  auto simple = [&](const char* prefix, const char* suffix) {
    const size_t a = std::strlen(prefix), b = std::strlen(suffix);
    return n.size() > a + b && n.compare(0, a, prefix) == 0 && n.compare(n.size() - b, b, suffix) == 0 &&
           digits(n, a, n.size() - b);
  };
  if (n == kManifestName || n == kPendingName || n == kStageName) return true;
  if (simple("dir-", ".ckd") || simple("docs-", ".ckr") || simple("tops-", ".ckr") || simple("pairs-", ".ckp")) return true;
  if (n.size() > 8 && n.compare(0, 4, "seg-") == 0 && n.compare(n.size() - 4, 4, ".pst") == 0) {
    const size_t dash = n.find('-', 4);
    return dash != std::string::npos && digits(n, 4, dash) && digits(n, dash + 1, n.size() - 4);
  }
  return false;
}

Status WriteManifest(const std::string& path, const Manifest& m) {
  std::vector<uint8_t> p;
  const IndexParams& q = m.params;
  Put32(&p, m.generation);
  Put32(&p, m.state);
  Put64(&p, m.build_id);
  Put32(&p, m.next_file);
  Put32(&p, m.directory);
  Put32(&p, m.next_id);
  Put32(&p, m.live);
  Put32(&p, q.parts);
  Put32(&p, q.chunk.bits);
  Put32(&p, q.chunk.text.n);
  Put32(&p, (q.chunk.text.lowercase ? kLower : 0) | (q.chunk.text.strip_punct ? kStrip : 0) |
                (q.chunk.text.split == WordSplit::kNonWord ? kNonWord : 0) |
                (q.chunk.text.short_text == ShortText::kNone ? kShortNone : 0));
  Put32(&p, q.top_k);
  Put32(&p, q.min_shared);
  Put64(&p, DoubleBits(q.min_similarity));
  Put64(&p, q.chunk.seed);
  Put32(&p, uint32_t(m.doc_files.size()));
  Put32(&p, uint32_t(m.top_files.size()));
  Put32(&p, uint32_t(m.segments.size()));
  Put32(&p, uint32_t(m.tombstones.size()));
  for (uint32_t f : m.doc_files) Put32(&p, f);
  for (uint32_t f : m.top_files) Put32(&p, f);
  for (const auto& s : m.segments) {
    Put32(&p, s.part);
    Put32(&p, s.file);
    Put32(&p, s.gen);
    Put32(&p, 0);
    Put64(&p, s.posts);
  }
  for (const auto& t : m.tombstones) {
    Put32(&p, t.id);
    Put32(&p, t.gen);
  }
  return WriteWhole(path, kManifestKind, m.state, m.generation, m.live, p);
}

Status ReadManifest(const std::string& path, Manifest* out) {
  std::string raw;
  io::FileHeader h;
  Status s = ReadWhole(path, kManifestKind, &raw, &h);
  if (!s.ok()) return s;
  const uint8_t* d = reinterpret_cast<const uint8_t*>(raw.data());
  const uint8_t* p = d + io::kHeaderSize;
  const size_t n = raw.size() - io::kHeaderSize;
  constexpr size_t kFixed = 88;
  if (n < kFixed) return CorruptAt(path, io::kHeaderSize, "manifest shorter than its fixed fields");
  Manifest m;
  m.generation = LoadLe32(p);
  m.state = LoadLe32(p + 4);
  m.build_id = LoadLe64(p + 8);
  m.next_file = LoadLe32(p + 16);
  m.directory = LoadLe32(p + 20);
  m.next_id = LoadLe32(p + 24);
  m.live = LoadLe32(p + 28);
  IndexParams& q = m.params;
  q.parts = LoadLe32(p + 32);
  q.chunk.bits = LoadLe32(p + 36);
  q.chunk.text.n = LoadLe32(p + 40);
  const uint32_t tf = LoadLe32(p + 44);
  q.chunk.text.lowercase = tf & kLower;
  q.chunk.text.strip_punct = tf & kStrip;
  q.chunk.text.split = (tf & kNonWord) ? WordSplit::kNonWord : WordSplit::kWhitespace;
  q.chunk.text.short_text = (tf & kShortNone) ? ShortText::kNone : ShortText::kWhole;
  q.top_k = LoadLe32(p + 48);
  q.min_shared = LoadLe32(p + 52);
  q.min_similarity = BitsDouble(LoadLe64(p + 56));
  q.chunk.seed = LoadLe64(p + 64);
  const uint64_t nd = LoadLe32(p + 72), nt = LoadLe32(p + 76), ns = LoadLe32(p + 80), nz = LoadLe32(p + 84);
  const uint64_t at = io::kHeaderSize;
  if (tf > 15) return CorruptAt(path, at + 44, "unknown text flags");
  if (h.flags != m.state || h.params[0] != m.generation || h.params[1] != m.live)
    return CorruptAt(path, 36, "header fields differ from the payload");
  if (m.state != kIndex && m.state != kStaged) return CorruptAt(path, at + 4, "unknown state");
  s = ValidateParams(q);
  if (!s.ok()) return CorruptAt(path, at + 32, s.message());
  if (m.live > m.next_id) return CorruptAt(path, at + 28, "more live documents than ids");
  if (m.directory == 0 || m.directory >= m.next_file) return CorruptAt(path, at + 20, "bad directory file number");
  if (n != kFixed + 4 * (nd + nt) + 24 * ns + 8 * nz) return CorruptAt(path, at + 72, "lists do not fill the manifest");
  const uint8_t* r = p + kFixed;
  std::vector<uint32_t> used{m.directory};
  auto file_no = [&](uint32_t f, uint64_t off) -> Status {
    if (f == 0 || f >= m.next_file) return CorruptAt(path, off, "bad file number " + std::to_string(f));
    used.push_back(f);
    return Status::Ok();
  };
  for (uint64_t i = 0; i < nd; i++, r += 4) {
    m.doc_files.push_back(LoadLe32(r));
    if (!(s = file_no(m.doc_files.back(), r - d)).ok()) return s;
  }
  for (uint64_t i = 0; i < nt; i++, r += 4) {
    m.top_files.push_back(LoadLe32(r));
    if (!(s = file_no(m.top_files.back(), r - d)).ok()) return s;
  }
  for (uint64_t i = 0; i < ns; i++, r += 24) {
    SegmentRef g;
    g.part = LoadLe32(r);
    g.file = LoadLe32(r + 4);
    g.gen = LoadLe32(r + 8);
    g.posts = LoadLe64(r + 16);
    if (g.part >= q.parts || LoadLe32(r + 12) != 0 || g.gen == 0 || g.gen > m.generation)
      return CorruptAt(path, r - d, "bad segment entry");
    if (!m.segments.empty() && (g.part < m.segments.back().part ||
                                (g.part == m.segments.back().part && g.file <= m.segments.back().file)))
      return CorruptAt(path, r - d, "segments not in (part, file) order");
    if (!(s = file_no(g.file, r - d + 4)).ok()) return s;
    m.segments.push_back(g);
  }
  for (uint64_t i = 0; i < nz; i++, r += 8) {
    Tombstone t{LoadLe32(r), LoadLe32(r + 4)};
    if (t.id >= m.next_id || t.gen == 0 || t.gen >= m.generation || (!m.tombstones.empty() && t.id <= m.tombstones.back().id))
      return CorruptAt(path, r - d, "bad tombstone");
    m.tombstones.push_back(t);
  }
  std::sort(used.begin(), used.end());
  if (std::adjacent_find(used.begin(), used.end()) != used.end())
    return CorruptAt(path, at + 72, "a file number is used twice");
  *out = std::move(m);
  return Status::Ok();
}

// ----------------------------------------------------------------------------------------------- directory

int64_t Directory::Find(std::string_view e) const {
  size_t lo = 0, hi = order_.size();
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (ExtLess(ext(order_[mid]), e))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < order_.size() && ext(order_[lo]) == e) return order_[lo];
  return -1;
}

void Directory::Reset(size_t reserve_slots) {
  entries_.clear();
  entries_.reserve(reserve_slots);
  ext_off_.assign(1, 0);
  ext_off_.reserve(reserve_slots + 1);
  heap_.clear();
  order_.clear();
  live_ = 0;
}

void Directory::Append(const DocEntry& e, std::string_view ext) {
  entries_.push_back(e);
  if (e.live()) {
    heap_.append(ext.data(), ext.size());
    live_++;
  }
  ext_off_.push_back(heap_.size());
}

Status Directory::Seal() {
  order_.clear();
  order_.reserve(live_);
  for (uint32_t i = 0; i < entries_.size(); i++)
    if (entries_[i].live()) order_.push_back(i);
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) {
    const std::string_view x = ext(a), y = ext(b);
    return x != y ? ExtLess(x, y) : a < b;
  });
  for (size_t i = 1; i < order_.size(); i++)
    if (ext(order_[i]) == ext(order_[i - 1]))
      return Status(Code::kInvalidInput, "the id " + std::string(ext(order_[i])) + " is given to two documents");
  Rank();
  return Status::Ok();
}

void Directory::Rank() {
  std::vector<uint64_t> key(order_.size());
  for (uint32_t i = 0; i < order_.size(); i++) key[i] = uint64_t(entries_[order_[i]].chunks) << 32 | i;
  std::sort(key.begin(), key.end());
  rank_.assign(entries_.size(), UINT32_MAX);
  by_rank_.resize(key.size());
  for (uint32_t i = 0; i < key.size(); i++) {
    by_rank_[i] = order_[uint32_t(key[i])];
    rank_[by_rank_[i]] = i;
  }
}

Status Directory::Save(const std::string& path) const {
  std::vector<uint8_t> p;
  const size_t n = entries_.size();
  p.reserve(16 + n * (kDocEntrySize + 12) + heap_.size() + 16);
  Put32(&p, uint32_t(n));
  Put32(&p, live_);
  Put64(&p, heap_.size());
  for (const auto& e : entries_) {
    Put32(&p, e.flags);
    Put32(&p, e.chunks);
    Put32(&p, e.doc_file);
    Put32(&p, e.top_file);
    Put64(&p, e.doc_off);
    Put64(&p, e.top_off);
    Put32(&p, e.top_count);
    Put32(&p, e.tail_other);
    Put32(&p, e.tail_shared);
    Put32(&p, 0);
  }
  for (uint64_t o : ext_off_) Put64(&p, o);
  p.insert(p.end(), heap_.begin(), heap_.end());
  while (p.size() % 8) p.push_back(0);
  for (uint32_t id : order_) Put32(&p, id);
  while (p.size() % 8) p.push_back(0);
  return WriteWhole(path, kDirectoryKind, 0, n, live_, p);
}

Status Directory::Load(const std::string& path, bool verify) {
  (void)verify;  // the directory is always read whole and checked (it is small next to the records)
  std::string raw;
  io::FileHeader h;
  Status s = ReadWhole(path, kDirectoryKind, &raw, &h);
  if (!s.ok()) return s;
  const uint8_t* d = reinterpret_cast<const uint8_t*>(raw.data());
  const uint8_t* p = d + io::kHeaderSize;
  const uint64_t size = raw.size() - io::kHeaderSize;
  const uint64_t at = io::kHeaderSize;
  if (size < 16) return CorruptAt(path, at, "directory shorter than its counts");
  const uint64_t n = LoadLe32(p), live = LoadLe32(p + 4), heap = LoadLe64(p + 8);
  if (h.flags != 0 || h.params[0] != n || h.params[1] != live) return CorruptAt(path, 36, "header fields differ from the payload");
  auto pad8 = [](uint64_t x) { return (x + 7) & ~uint64_t(7); };
  const uint64_t entries_at = 16, off_at = entries_at + n * kDocEntrySize, heap_at = off_at + 8 * (n + 1);
  if (heap > size) return CorruptAt(path, at + 8, "heap larger than the file");
  const uint64_t order_at = pad8(heap_at + heap);
  if (live > n || pad8(order_at + 4 * live) != size) return CorruptAt(path, at, "section sizes do not add up to the file size");
  entries_.resize(n);
  ext_off_.resize(n + 1);
  uint32_t live_seen = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint8_t* e = p + entries_at + i * kDocEntrySize;
    DocEntry& x = entries_[i];
    x.flags = LoadLe32(e);
    x.chunks = LoadLe32(e + 4);
    x.doc_file = LoadLe32(e + 8);
    x.top_file = LoadLe32(e + 12);
    x.doc_off = LoadLe64(e + 16);
    x.top_off = LoadLe64(e + 24);
    x.top_count = LoadLe32(e + 32);
    x.tail_other = LoadLe32(e + 36);
    x.tail_shared = LoadLe32(e + 40);
    const uint64_t eat = at + entries_at + i * kDocEntrySize;
    if (x.flags > 3 || x.flags == 2 || LoadLe32(e + 44) != 0)
      return CorruptAt(path, eat, "bad flags of document " + std::to_string(i));
    if (x.live()) {
      live_seen++;
      if (x.doc_file == 0) return CorruptAt(path, eat + 8, "live document " + std::to_string(i) + " has no record");
      if ((x.top_file == 0) != (x.top_count == 0) || x.tail_other >= n || (x.top_count > 0 && x.tail_shared == 0))
        return CorruptAt(path, eat + 12, "bad top list reference of document " + std::to_string(i));
    } else if (x.chunks || x.doc_file || x.top_file || x.doc_off || x.top_off || x.top_count || x.tail_other || x.tail_shared) {
      return CorruptAt(path, eat, "free slot " + std::to_string(i) + " is not empty");
    }
  }
  if (live_seen != live) return CorruptAt(path, at + 4, "live count differs from the entries");
  for (uint64_t i = 0; i <= n; i++) {
    ext_off_[i] = LoadLe64(p + off_at + 8 * i);
    if (ext_off_[i] > heap || (i == 0 && ext_off_[0] != 0) || (i > 0 && ext_off_[i] < ext_off_[i - 1]) ||
        (i == n && ext_off_[n] != heap))
      return CorruptAt(path, at + off_at + 8 * i, "bad id offset");
    if (i > 0) {
      const uint64_t len = ext_off_[i] - ext_off_[i - 1];
      if (entries_[i - 1].live() ? (len == 0 || len > kMaxExtIdBytes) : len != 0)
        return CorruptAt(path, at + off_at + 8 * i, "bad id length of document " + std::to_string(i - 1));
    }
  }
  heap_.assign(reinterpret_cast<const char*>(p + heap_at), heap);
  live_ = uint32_t(live);
  order_.resize(live);
  for (uint64_t i = 0; i < live; i++) {
    order_[i] = LoadLe32(p + order_at + 4 * i);
    if (order_[i] >= n || !entries_[order_[i]].live() || (i > 0 && !ExtLess(ext(order_[i - 1]), ext(order_[i]))))
      return CorruptAt(path, at + order_at + 4 * i, "id order broken");
  }
  Rank();
  return Status::Ok();
}

// ------------------------------------------------------------------------------------------------- records

Status RecordWriter::Open(const std::string& path, RecordKind kind, uint32_t item_bytes) {
  kind_ = kind;
  item_bytes_ = item_bytes;
  records_ = 0;
  crc_ = 0;
  Status s = out_.Open(path);
  if (!s.ok()) return s;
  uint8_t zero[io::kHeaderSize] = {0};
  return out_.Write(zero, sizeof zero);
}

Status RecordWriter::Add(uint32_t id, const uint8_t* items, uint32_t count, uint64_t* offset) {
  *offset = out_.written();
  const size_t body = 8 + size_t(count) * item_bytes_;
  const size_t total = (body + 4 + 7) & ~size_t(7);
  buf_.assign(total, 0);
  StoreLe32(buf_.data(), id);
  StoreLe32(buf_.data() + 4, count);
  if (count) std::memcpy(buf_.data() + 8, items, size_t(count) * item_bytes_);
  StoreLe32(buf_.data() + body, Crc32c(buf_.data(), body));
  crc_ = Crc32c(buf_.data(), total, crc_);
  records_++;
  return out_.Write(buf_.data(), total);
}

Status RecordWriter::Commit() {
  return CommitStreamed(&out_, kRecordKind, kind_, records_, item_bytes_, crc_);
}

Status RecordFile::Open(const std::string& path, RecordKind kind, uint32_t item_bytes, bool verify) {
  Status s = file_.Open(path);
  if (!s.ok()) return s;
  io::FileHeader h;
  s = io::DecodeHeader(file_.data(), file_.size(), kRecordKind, kFormatVersion, verify, path, &h);
  if (!s.ok()) return s;
  if (h.flags != kind) return CorruptAt(path, 36, kind == kDocRecords ? "not a chunk-list file" : "not a top-list file");
  if (h.params[1] != item_bytes) return CorruptAt(path, 48, "item size " + std::to_string(h.params[1]) + ", expected " + std::to_string(item_bytes));
  if (h.payload_size % 8) return CorruptAt(path, 24, "payload size not a multiple of 8");
  item_bytes_ = item_bytes;
  return Status::Ok();
}

Status RecordFile::Read(uint64_t off, uint32_t id, const uint8_t** items, uint32_t* count) const {
  const uint64_t size = file_.size();
  if (off < io::kHeaderSize || off % 8 || off + 12 > size) return CorruptAt(path(), off, "record offset out of range");
  const uint8_t* r = file_.data() + off;
  if (LoadLe32(r) != id)
    return CorruptAt(path(), off, "record of document " + std::to_string(LoadLe32(r)) + ", expected " + std::to_string(id));
  const uint64_t c = LoadLe32(r + 4);
  const uint64_t body = 8 + c * item_bytes_;
  if (body + 4 > size - off) return CorruptAt(path(), off + 4, "record longer than the file");
  if (Crc32c(r, body) != LoadLe32(r + body)) return CorruptAt(path(), off, "record checksum mismatch");
  // the zero padding to 8 after the checksum (not under it)
  for (uint64_t p = body + 4; p % 8 && p < size - off; p++)
    if (r[p] != 0) return CorruptAt(path(), off + p, "record padding not zero");
  *items = r + 8;
  *count = uint32_t(c);
  return Status::Ok();
}

Status DecodeChunks(const uint8_t* items, uint32_t count, uint32_t item_bytes, const std::string& file, uint64_t offset,
                    std::vector<uint64_t>* out) {
  out->resize(count);
  for (uint32_t i = 0; i < count; i++) {
    (*out)[i] = item_bytes == 8 ? LoadLe64(items + 8 * size_t(i)) : LoadLe32(items + 4 * size_t(i));
    if (i > 0 && (*out)[i] <= (*out)[i - 1]) return CorruptAt(file, offset + 8 + i * item_bytes, "chunk ids not ascending");
  }
  return Status::Ok();
}

// --------------------------------------------------------------------------------------------------- pairs

namespace {
constexpr size_t kPairsFixed = 40;
}

Status PairsWriter::Open(const std::string& path, const PairsInfo& info) {
  crc_ = 0;
  records_ = entries_ = 0;
  last_a_ = -1;
  Status s = out_.Open(path);
  if (!s.ok()) return s;
  uint8_t zero[io::kHeaderSize] = {0};
  s = out_.Write(zero, sizeof zero);
  if (!s.ok()) return s;
  buf_.clear();
  Put64(&buf_, info.build_id);
  Put32(&buf_, info.part);
  Put32(&buf_, info.parts);
  Put32(&buf_, info.slots);
  Put32(&buf_, 0);
  Put64(&buf_, info.lo);
  Put64(&buf_, info.hi);
  crc_ = Crc32c(buf_.data(), buf_.size(), crc_);
  return out_.Write(buf_.data(), buf_.size());
}

Status PairsWriter::Add(uint32_t a, const std::vector<std::pair<uint32_t, uint32_t>>& entries) {
  const size_t m = entries.size();
  if (int64_t(a) <= last_a_ || m == 0) return Status(Code::kInternal, "pairs out of order");
  last_a_ = a;
  buf_.resize(8 + 8 * m);
  StoreLe32(buf_.data(), a);
  StoreLe32(buf_.data() + 4, uint32_t(m));
  for (size_t i = 0; i < m; i++) {
    StoreLe32(buf_.data() + 8 + 8 * i, entries[i].first);
    StoreLe32(buf_.data() + 12 + 8 * i, entries[i].second);
  }
  crc_ = Crc32c(buf_.data(), buf_.size(), crc_);
  records_++;
  entries_ += m;
  return out_.Write(buf_.data(), buf_.size());
}

Status PairsWriter::Commit() {
  return CommitStreamed(&out_, kPairsKind, 0, records_, entries_, crc_);
}

PairsReader::~PairsReader() {
  if (f_) std::fclose(f_);
}

bool PairsReader::Fill(size_t n, Status* s) {
  // Makes n bytes available at buf_[pos_..].
  if (buf_.size() - pos_ >= n) return true;
  buf_.erase(buf_.begin(), buf_.begin() + pos_);
  pos_ = 0;
  const size_t want = std::max<size_t>(n - buf_.size(), 256 << 10);
  const size_t old = buf_.size();
  const uint64_t left = payload_ - read_;
  const size_t k = size_t(std::min<uint64_t>(want, left));
  buf_.resize(old + k);
  const size_t got = k ? std::fread(buf_.data() + old, 1, k, f_) : 0;
  buf_.resize(old + got);
  read_ += got;
  crc_ = Crc32c(buf_.data() + old, got, crc_);
  if (buf_.size() < n) {
    *s = got < k ? Status(Code::kIo, "cannot read '" + path_ + "'")
                 : CorruptAt(path_, io::kHeaderSize + read_, "pairs file ends inside a record");
    return false;
  }
  return true;
}

Status PairsReader::Open(const std::string& path) {
  path_ = path;
  uint64_t end = 0;
  {
    io::os::Fd fd = io::os::kNoFd;
    Status s = io::os::OpenRead(path, &fd);
    if (!s.ok()) return s;
    bool regular = false;
    s = io::os::FileSize(fd, path, &end, &regular);
    io::os::CloseQuietly(fd);
    if (!s.ok()) return s;
  }
  Status s = io::os::OpenStreamRead(path, &f_);
  if (!s.ok()) return s;
  uint8_t hb[io::kHeaderSize];
  const size_t got = std::fread(hb, 1, sizeof hb, f_);
  io::FileHeader h;
  s = io::DecodeHeaderOnly(hb, got, end, kPairsKind, kFormatVersion, path, &h);
  if (!s.ok()) return s;
  if (h.flags != 0) return CorruptAt(path, 36, "unknown flags");
  payload_ = h.payload_size;
  records_ = h.params[0];
  entries_ = h.params[1];
  expect_crc_ = h.payload_crc;
  if (!Fill(kPairsFixed, &s)) return s;
  const uint8_t* p = buf_.data();
  info_.build_id = LoadLe64(p);
  info_.part = LoadLe32(p + 8);
  info_.parts = LoadLe32(p + 12);
  info_.slots = LoadLe32(p + 16);
  info_.lo = LoadLe64(p + 24);
  info_.hi = LoadLe64(p + 32);
  if (LoadLe32(p + 20) != 0 || info_.parts == 0 || info_.part >= info_.parts || info_.lo > info_.hi)
    return CorruptAt(path, io::kHeaderSize, "bad pairs header");
  pos_ += kPairsFixed;
  return Status::Ok();
}

bool PairsReader::Next(uint32_t* a, std::vector<std::pair<uint32_t, uint32_t>>* entries, Status* s) {
  *s = Status::Ok();
  if (pos_ == buf_.size() && read_ == payload_) {
    if (seen_records_ != records_ || seen_entries_ != entries_)
      *s = CorruptAt(path_, 40, "record counts differ from the header");
    else if (crc_ != expect_crc_)
      *s = Status(Code::kCorrupt, "'" + path_ + "': payload checksum mismatch");
    return false;
  }
  const uint64_t at = io::kHeaderSize + read_ - (buf_.size() - pos_);
  if (!Fill(8, s)) return false;
  *a = LoadLe32(buf_.data() + pos_);
  const uint32_t m = LoadLe32(buf_.data() + pos_ + 4);
  const uint64_t left = payload_ - (at - io::kHeaderSize);  // bytes from this record to the end
  if (int64_t(*a) <= last_a_ || *a >= info_.slots || m == 0 || m > info_.slots || 8 + 8 * uint64_t(m) > left) {
    *s = CorruptAt(path_, at, "bad record");
    return false;
  }
  if (!Fill(8 + 8 * size_t(m), s)) return false;
  const uint8_t* p = buf_.data() + pos_ + 8;
  entries->resize(m);
  for (uint32_t i = 0; i < m; i++) {
    const uint32_t b = LoadLe32(p + 8 * size_t(i)), c = LoadLe32(p + 8 * size_t(i) + 4);
    if (b >= info_.slots || b == *a || c == 0 || (i > 0 && b <= (*entries)[i - 1].first)) {
      *s = CorruptAt(path_, at + 8 + 8 * uint64_t(i), "bad pair entry");
      return false;
    }
    (*entries)[i] = {b, c};
  }
  pos_ += 8 + 8 * size_t(m);
  last_a_ = *a;
  seen_records_++;
  seen_entries_ += m;
  return true;
}

}  // namespace chunks
}  // namespace neardup
