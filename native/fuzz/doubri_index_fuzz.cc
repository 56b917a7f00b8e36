// Fuzz target: doubri 1.0 files as `neardup doubri other` reads them (a .hash file, its .f flags and the 40
// index files PREFIX.00000..00039), as images in memory: the same checks and the same marking as
// doubri::Other (which only adds opening the files and writing the flags back), without 42 files per input.
// Input byte 0 picks the mode: bit 0 set: the rest is the .hash file as is (header parsing); clear: a
// well-formed .hash of (byte 1 % 3) records filled from the input, and the rest of the input spread over the
// index images (a size that is not a multiple of 80 or unsorted entries must be refused). Bit 1 set: the
// flags come from the input too (bytes other than '0'/'1' must be refused). Nothing may crash, and the
// stats must add up.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "minhash/doubri_hashfile_reader.h"
#include "minhash/doubri_index.h"
#include "util/endian.h"

using namespace neardup;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint8_t* rest = data + 2;
  size_t rest_n = size - 2;
  std::vector<uint8_t> h;
  if (data[0] & 1) {
    h.assign(data + 1, data + size);
    rest_n = 0;
  } else {
    const uint64_t records = data[1] % 3;
    h.resize(24 + records * 3200);
    std::memcpy(h.data(), "MinHash", 7);
    h[7] = 4;
    StoreLe64(h.data() + 8, records);
    StoreLe64(h.data() + 16, 800);
    for (size_t i = 24; i < h.size(); i++) h[i] = rest_n ? rest[(i - 24) % rest_n] : 0;
  }
  doubri::HashFile hf;
  Status s = hf.Attach(h.data(), h.size(), "a.hash");
  if (!s.ok()) {
    if (s.message().find("a.hash") == std::string::npos) std::abort();
    return 0;
  }
  std::vector<uint8_t> flag_bytes(hf.size(), '1');
  if ((data[0] & 2) && rest_n > 0)
    for (size_t i = 0; i < flag_bytes.size(); i++) flag_bytes[i] = rest[i % rest_n] & 1 ? '1' : (rest[i % rest_n] & 2 ? '0' : rest[i % rest_n]);
  doubri::FlagFile ff;
  s = ff.Parse(flag_bytes.data(), flag_bytes.size(), "a.hash.f", hf.size());
  if (!s.ok()) {
    if (s.message().find("a.hash.f") == std::string::npos) std::abort();
    return 0;
  }
  std::vector<doubri::IndexBand> index(doubri::kBands);
  const size_t per = rest_n / doubri::kBands;
  for (uint32_t j = 0; j < doubri::kBands; j++) {
    const size_t n = j == doubri::kBands - 1 ? rest_n - per * (doubri::kBands - 1) : per;
    const std::string name = doubri::IndexFileName("idx", j);
    s = doubri::CheckIndexBand(rest + per * j, n, name, &index[j]);
    if (!s.ok()) {
      if (s.message().find(name) == std::string::npos) std::abort();
      return 0;
    }
  }
  uint64_t skips = 0;
  for (uint8_t c : ff.flags()) skips += c == '0';
  doubri::Stats st;
  s = doubri::MarkOther(index, hf, &ff.flags(), 1, nullptr, &st);
  if (!s.ok()) std::abort();
  uint64_t zeros = 0;
  for (uint8_t c : ff.flags()) zeros += c == '0';
  if (st.total != hf.size() || st.skips != skips || st.active + st.skips + st.drops != st.total || zeros != st.skips + st.drops)
    std::abort();
  return 0;
}
