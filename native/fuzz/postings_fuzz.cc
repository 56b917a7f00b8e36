// Fuzz target: the posting-segment loader (postings::Segment, Segment64) on arbitrary files. Bit 1 of the
// first byte picks the key width (32 or 64 bits). Mode 0 (bit 0 clear) takes the rest of the input as the
// whole file (header checks).
// Mode 1 (bit 0 set) wraps the rest of the input in a valid header and a trailer that agrees with it: bits
// 2..7 of the first byte are the number of key blocks B, the next 10 bytes give the key count (within B
// blocks), the post count, the doc id range and how many bits of the last body byte are unused; the input's
// last B directory entries follow the body, then B key block checksums (version 3). The directory checksum
// in the trailer is made to match, and the input is run twice: with the key block checksums it carries (each
// block read then fails its checksum, or decodes as it should), and with the checksums of the blocks as they
// decode (DecodeBlock, BlockCrc). So the key-block and list decoding run on hostile directory entries, Rice
// codes and Elias-Fano lists. Invariants: no crash or out-of-bounds read (ASan), every
// error is ERR_NEARDUP_CORRUPT naming the file and an offset, and every list that decodes has `count`
// strictly ascending ids inside the segment's id range.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hash/crc32c.h"
#include "io/header.h"
#include "postings/store.h"
#include "util/endian.h"

using namespace neardup;

static std::string Path() { return "fuzz.pst"; }

static void Check(const Status& s, const std::string& path) {
  if (!s.ok() && (s.message().find(path) == std::string::npos)) std::abort();
}

template <typename Key>
static bool Scan(const std::vector<uint8_t>& file, const std::string& path);

template <typename Key>
static int Run(const uint8_t* data, size_t size) {
  using Segment = postings::BasicSegment<Key>;
  constexpr size_t kEntry = postings::DirEntrySize<Key>();
  const std::string path = Path();
  std::vector<uint8_t> file;
  if ((data[0] & 1) == 0) {
    file.assign(data + 1, data + size);
  } else {
    if (size < 11) return 0;
    const uint8_t* q = data + 1;
    const uint8_t* p = data + 11;
    const size_t n = size - 11;
    const size_t blocks = std::min<size_t>(data[0] >> 2, n / (kEntry + 4));
    const size_t body = n - blocks * (kEntry + 4);
    const uint64_t keys = blocks == 0 ? 0 : (blocks - 1) * postings::kBlockKeys + 1 + q[0] % postings::kBlockKeys;
    const uint64_t universe = 1 + (uint64_t(LoadLe32(q + 1)) & 0xffffff);
    const uint64_t posts = keys + LoadLe32(q + 5) % (keys * 4 + 1);
    const unsigned unused = body ? q[9] % 8 : 0;
    file.resize(io::kHeaderSize);
    file.insert(file.end(), p, p + n);
    uint8_t t[postings::kTrailerSize] = {0};
    StoreLe64(t, keys);
    StoreLe64(t + 8, posts);
    StoreLe64(t + 16, body * 8 - unused);
    StoreLe64(t + 24, q[9] >> 3);
    StoreLe64(t + 32, universe);
    StoreLe32(t + 40, Crc32c(p, body));
    StoreLe32(t + 44, Crc32c(p + body, blocks * (kEntry + 4)));
    file.insert(file.end(), t, t + sizeof t);
    io::FileHeader h;
    std::memcpy(h.kind, postings::kSegmentKind, 4);
    h.version = postings::kSegmentVersion;
    h.flags = sizeof(Key) * 8;
    h.payload_size = file.size() - io::kHeaderSize;
    h.payload_crc = Crc32c(file.data() + io::kHeaderSize, h.payload_size);
    h.params[0] = keys;
    h.params[1] = posts;
    io::EncodeHeader(h, file.data());
  }
  if (Scan<Key>(file, path) && (data[0] & 1)) {
    // the key block checksums of the blocks as they decode, then again
    Segment seg;
    if (!seg.Attach(file.data(), file.size(), path, false).ok()) std::abort();
    const size_t blocks = seg.num_blocks(), body = (seg.body_bits() + 7) / 8;
    uint8_t* crcs = file.data() + io::kHeaderSize + body + blocks * kEntry;
    typename Segment::Block blk;
    for (uint64_t b = 0; b < blocks; b++)
      if (seg.DecodeBlock(b, &blk).ok()) StoreLe32(crcs + 4 * b, seg.BlockCrc(blk));
    uint8_t* t = file.data() + file.size() - postings::kTrailerSize;
    StoreLe32(t + 44, Crc32c(file.data() + io::kHeaderSize + body, blocks * (kEntry + 4)));
    io::FileHeader h;
    if (!io::DecodeHeaderOnly(file.data(), file.size(), file.size(), postings::kSegmentKind, postings::kSegmentVersion, path, &h).ok())
      std::abort();
    h.payload_crc = Crc32c(file.data() + io::kHeaderSize, file.size() - io::kHeaderSize);
    io::EncodeHeader(h, file.data());
    Scan<Key>(file, path);
  }
  return 0;
}

// Reads every key block and list of the image; true when it attaches.
template <typename Key>
static bool Scan(const std::vector<uint8_t>& file, const std::string& path) {
  using Segment = postings::BasicSegment<Key>;
  Segment seg;
  Status s = seg.Attach(file.data(), file.size(), path, false);
  Check(s, path);
  if (!s.ok()) return false;
  std::vector<uint32_t> ids;
  typename Segment::Block blk;
  for (uint64_t b = 0; b < seg.num_blocks(); b++) {
    Status d = seg.ReadBlock(b, &blk);
    Check(d, path);
    if (!d.ok()) {
      if (d.code() != Code::kCorrupt || d.message().find("offset") == std::string::npos) std::abort();
      continue;
    }
    for (size_t j = 0; j < blk.n; j++) {
      ids.clear();
      d = seg.DecodeList(blk, j, &ids);
      Check(d, path);
      if (d.ok()) {
        if (ids.size() != blk.counts[j]) std::abort();
        for (size_t i = 0; i < ids.size(); i++)
          if ((i > 0 && ids[i] <= ids[i - 1]) || ids[i] < seg.id_base() || ids[i] - seg.id_base() >= seg.id_universe())
            std::abort();
      } else if (d.code() != Code::kCorrupt || d.message().find("offset") == std::string::npos) {
        std::abort();
      }
      // Find reads and checks the whole key block again: done for the block's first, middle and last key
      // only, which keeps the scan linear in the image (on every key it was quadratic, ~40x slower)
      if (j == 0 || j == blk.n / 2 || j + 1 == blk.n) {
        int64_t at = -1;
        if (seg.Find(blk.keys[j], &at).ok() && at != int64_t(blk.first + j)) std::abort();
      }
    }
  }
  Segment v;
  Check(v.Attach(file.data(), file.size(), path, true), path);
  return true;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  return (data[0] & 2) ? Run<uint64_t>(data, size) : Run<uint32_t>(data, size);
}
