// Fuzz target: doubri 1.0 files as `neardup doubri other` reads them (a .hash file, its .f flags and the 40
// index files PREFIX.00000..00039), written to a private temporary folder. Input byte 0 picks the mode:
// bit 0 set: the rest is the .hash file as is (header parsing); clear: a well-formed .hash of
// (byte 1 % 3) records filled from the input, and the rest of the input spread over the index files (a
// size that is not a multiple of 80 or unsorted entries must be refused). Nothing may crash, and the
// stats must add up.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "minhash/doubri_index.h"
#include "util/endian.h"

using namespace neardup;

namespace {
// A private folder, removed at exit (a plain array: it outlives every static destructor).
// /dev/shm when there is one: the flag file is fsync'ed on every run, which is slow on a disk.
char g_dir[64] = "/dev/shm/neardup-doubri-fuzz-XXXXXX";

std::string Dir() {
  static const bool made = [] {
    if (::mkdtemp(g_dir) == nullptr) {
      std::strcpy(g_dir, "/tmp/neardup-doubri-fuzz-XXXXXX");
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

void Write(const std::string& path, const uint8_t* p, size_t n) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (n > 0 && std::fwrite(p, 1, n, f) != n) std::abort();
  std::fclose(f);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string dir = Dir();
  const std::string hash = dir + "/a.hash", prefix = dir + "/idx";
  uint64_t records = 0;
  const uint8_t* rest = data + 2;
  size_t rest_n = size - 2;
  if (data[0] & 1) {
    Write(hash, data + 1, size - 1);
    rest_n = 0;
    if (size - 1 >= 24) records = LoadLe64(data + 1 + 8);
    if (records > 1000) records = 0;
  } else {
    records = data[1] % 3;
    std::vector<uint8_t> h(24 + records * 3200);
    std::memcpy(h.data(), "MinHash", 7);
    h[7] = 4;
    StoreLe64(h.data() + 8, records);
    StoreLe64(h.data() + 16, 800);
    for (size_t i = 24; i < h.size(); i++) h[i] = rest_n ? rest[(i - 24) % rest_n] : 0;
    Write(hash, h.data(), h.size());
  }
  std::string flags(records, '1');
  Write(hash + ".f", reinterpret_cast<const uint8_t*>(flags.data()), flags.size());
  const size_t per = rest_n / 40;
  for (uint32_t j = 0; j < 40; j++) {
    const size_t n = j == 39 ? rest_n - per * 39 : per;
    Write(doubri::IndexFileName(prefix, j), rest + per * j, n);
  }
  std::vector<doubri::Stats> stats;
  Status s = doubri::Other(prefix, {hash}, 1, nullptr, &stats);
  if (!s.ok()) {
    if (s.message().empty()) std::abort();
    return 0;
  }
  if (stats.size() != 1 || stats[0].active > stats[0].total || stats[0].total != records) std::abort();
  return 0;
}
