// Fuzz target: the posting-segment loader (postings::Segment, Segment64) on arbitrary files. Bit 1 of the
// first byte picks the key width (32 or 64 bits). Mode 0 (bit 0 clear) takes the input as the whole file
// (header checks). Mode 1 wraps the input in a valid header and a trailer that agrees with it (input =
// lists bytes + a key table of k entries), so the key-table and list decoding run on hostile offsets,
// counts and varints. Invariants: no crash or out-of-bounds read (ASan), every error is
// ERR_NEARDUP_CORRUPT naming the file, and every list that decodes has `count` strictly ascending ids.
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
static int Run(const uint8_t* data, size_t size) {
  using Segment = postings::BasicSegment<Key>;
  constexpr size_t kEntry = postings::KeyEntrySize<Key>();
  const std::string path = Path();
  std::vector<uint8_t> file;
  if ((data[0] & 1) == 0) {
    file.assign(data + 1, data + size);
  } else {
    const uint8_t* p = data + 1;
    const size_t n = size - 1;
    const size_t k = std::min<size_t>(data[0] >> 2, n / kEntry);
    const size_t lists = n - k * kEntry;
    uint64_t posts = 0;
    for (size_t i = 0; i < k; i++) posts += LoadLe32(p + lists + i * kEntry + sizeof(Key));
    file.resize(io::kHeaderSize);
    file.insert(file.end(), p, p + n);
    uint8_t t[postings::kTrailerSize] = {0};
    StoreLe64(t, k);
    StoreLe64(t + 8, posts);
    StoreLe64(t + 16, lists);
    file.insert(file.end(), t, t + sizeof t);
    io::FileHeader h;
    std::memcpy(h.kind, postings::kSegmentKind, 4);
    h.version = postings::kSegmentVersion;
    h.flags = sizeof(Key) * 8;
    h.payload_size = file.size() - io::kHeaderSize;
    h.payload_crc = Crc32c(file.data() + io::kHeaderSize, h.payload_size);
    h.params[0] = k;
    h.params[1] = posts;
    io::EncodeHeader(h, file.data());
  }
  Segment seg;
  Status s = seg.Attach(file.data(), file.size(), path, false);
  Check(s, path);
  if (!s.ok()) return 0;
  std::vector<uint32_t> ids;
  for (uint64_t i = 0; i < seg.num_keys(); i++) {
    ids.clear();
    Status d = seg.Decode(i, &ids);
    Check(d, path);
    if (d.ok()) {
      if (ids.size() != seg.entry(i).count) std::abort();
      for (size_t j = 1; j < ids.size(); j++)
        if (ids[j] <= ids[j - 1]) std::abort();
    } else if (d.code() != Code::kCorrupt || d.message().find("offset") == std::string::npos) {
      std::abort();
    }
    (void)seg.Find(seg.entry(i).key);
  }
  Segment v;
  Check(v.Attach(file.data(), file.size(), path, true), path);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  return (data[0] & 2) ? Run<uint64_t>(data, size) : Run<uint32_t>(data, size);
}
