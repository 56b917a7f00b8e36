// Fuzz target: the chunk-index loaders (chunks/files.h) on arbitrary files, written to a private folder.
// Input byte 0 picks the file kind (manifest, directory, chunk-list records of 4- or 8-byte ids, top-list
// records, pairs); bit 7 set: the rest is the file as is (header checks); clear: its common header is made
// self-consistent (fuzz_image.h) so the structure checks are reached. Every record file is walked record
// by record; a directory is searched for each of its ids; a pairs file is read to its end. Invariants: no
// crash or out-of-bounds read (ASan), every error is ERR_NEARDUP_CORRUPT / UNSUPPORTED naming the file, and
// what loads satisfies the documented structure (ascending ids, ids below the slot count, ...).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "chunks/files.h"
#include "fuzz_image.h"
#include "io/header.h"
#include "util/endian.h"

using namespace neardup;
using namespace neardup::chunks;

namespace {
char g_dir[64] = "/dev/shm/neardup-chunks-fuzz-XXXXXX";

std::string Dir() {
  static const bool made = [] {
    if (::mkdtemp(g_dir) == nullptr) {
      std::strcpy(g_dir, "/tmp/neardup-chunks-fuzz-XXXXXX");
      if (::mkdtemp(g_dir) == nullptr) std::abort();
    }
    std::atexit([] {
      const std::string cmd = std::string("rm -rf '") + g_dir + "'";
      if (std::system(cmd.c_str()) != 0) {
      }
    });
    return true;
  }();
  (void)made;
  return g_dir;
}

void Write(const std::string& path, const std::vector<uint8_t>& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!b.empty() && std::fwrite(b.data(), 1, b.size(), f) != b.size()) std::abort();
  std::fclose(f);
}

void Check(const Status& s, const std::string& path) {
  if (s.ok()) return;
  if (s.code() != Code::kCorrupt && s.code() != Code::kUnsupported) std::abort();
  if (s.message().find(path) == std::string::npos) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const unsigned mode = (data[0] & 0x7f) % 6;
  const bool raw = data[0] & 0x80;
  static const char* kKinds[] = {"CKMF", "CKDI", "CKRC", "CKRC", "CKRC", "CKPR"};
  std::vector<uint8_t> file = raw ? std::vector<uint8_t>(data + 1, data + size)
                                  : fuzz::FixedImage(data + 1, size - 1, kKinds[mode], kFormatVersion);
  const std::string path = Dir() + "/f" + std::to_string(mode);
  Write(path, file);
  switch (mode) {
    case 0: {
      Manifest m;
      Status s = ReadManifest(path, &m);
      Check(s, path);
      if (s.ok()) {
        if (m.live > m.next_id || m.params.parts == 0 || m.params.top_k == 0) std::abort();
        for (size_t i = 1; i < m.tombstones.size(); i++)
          if (m.tombstones[i].id <= m.tombstones[i - 1].id) std::abort();
        for (const auto& g : m.segments)
          if (g.part >= m.params.parts || g.file >= m.next_file) std::abort();
      }
      break;
    }
    case 1: {
      Directory d;
      Status s = d.Load(path, true);
      Check(s, path);
      if (s.ok()) {
        uint32_t live = 0;
        for (uint32_t id = 0; id < d.slots(); id++) {
          if (!d.entry(id).live()) continue;
          live++;
          if (d.Find(d.ext(id)) != int64_t(id)) std::abort();
          if (d.entry(id).tail_other >= d.slots()) std::abort();
        }
        if (live != d.live() || d.order().size() != live) std::abort();
      }
      break;
    }
    case 2:
    case 3:
    case 4: {
      const RecordKind kind = mode == 4 ? kTopRecords : kDocRecords;
      const uint32_t w = mode == 2 ? 4 : 8;
      if (!raw && file.size() >= io::kHeaderSize) {
        // The kind, item size and record count the loader expects, with the CRCs made right again.
        StoreLe32(file.data() + 36, kind);
        StoreLe64(file.data() + 48, w);
        file = fuzz::FixedImage(file.data(), file.size(), kKinds[mode], kFormatVersion);
        Write(path, file);
      }
      RecordFile f;
      Status s = f.Open(path, kind, w, true);
      Check(s, path);
      if (!s.ok()) break;
      uint64_t off = io::kHeaderSize;
      std::vector<uint64_t> chunks;
      while (off < f.size()) {
        const uint32_t id = off + 4 <= file.size() ? LoadLe32(file.data() + off) : 0;
        const uint8_t* items;
        uint32_t n;
        s = f.Read(off, id, &items, &n);
        Check(s, path);
        if (!s.ok()) break;
        if (kind == kDocRecords) {
          s = DecodeChunks(items, n, w, path, off, &chunks);
          Check(s, path);
          if (s.ok())
            for (size_t i = 1; i < chunks.size(); i++)
              if (chunks[i] <= chunks[i - 1]) std::abort();
        }
        off += (8 + uint64_t(n) * w + 4 + 7) & ~uint64_t(7);
      }
      break;
    }
    case 5: {
      PairsReader r;
      Status s = r.Open(path);
      Check(s, path);
      if (!s.ok()) break;
      uint32_t a = 0;
      int64_t last = -1;
      std::vector<std::pair<uint32_t, uint32_t>> e;
      while (r.Next(&a, &e, &s)) {
        if (int64_t(a) <= last || a >= r.info().slots || e.empty()) std::abort();
        last = a;
        for (size_t i = 0; i < e.size(); i++)
          if (e[i].first >= r.info().slots || e[i].second == 0 || (i > 0 && e[i].first <= e[i - 1].first)) std::abort();
      }
      Check(s, path);
      break;
    }
  }
  return 0;
}
