#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "io/file.h"
#include "io/header.h"
#include "parallel/pool.h"

using namespace neardup;

TEST(parallel_for_covers_range_once) {
  parallel::SetConcurrency(4);
  const size_t slots = parallel::MaxSlots();
  std::vector<std::atomic<int>> hits(10007);
  std::vector<std::atomic<int>> slot_busy(slots);
  std::atomic<bool> overlap{false};
  parallel::ParallelFor(hits.size(), 13, slots, [&](size_t b, size_t e, size_t slot) {
    if (slot >= slots || slot_busy[slot].fetch_add(1) != 0) overlap = true;
    for (size_t i = b; i < e; i++) hits[i]++;
    slot_busy[slot]--;
  });
  bool once = true;
  for (auto& h : hits) once &= h.load() == 1;
  EXPECT(once);
  EXPECT(!overlap.load());
}

TEST(parallel_for_concurrent_callers_and_errors) {
  parallel::SetConcurrency(3);
  std::vector<std::thread> callers;
  std::atomic<size_t> total{0};
  for (int t = 0; t < 6; t++)
    callers.emplace_back([&] {
      parallel::ParallelFor(1000, 7, parallel::MaxSlots(), [&](size_t b, size_t e, size_t) { total += e - b; });
    });
  for (auto& c : callers) c.join();
  EXPECT_EQ(total.load(), 6000u);
  bool thrown = false;
  try {
    parallel::ParallelFor(100, 1, 3, [&](size_t b, size_t, size_t) {
      if (b == 50) throw std::runtime_error("boom");
    });
  } catch (const std::runtime_error& e) {
    thrown = std::strcmp(e.what(), "boom") == 0;
  }
  EXPECT(thrown);
  std::atomic<bool> stop{true};
  std::atomic<int> ran{0};
  parallel::ParallelFor(100, 1, 3, [&](size_t, size_t, size_t) { ran++; }, &stop);
  EXPECT_EQ(ran.load(), 0);
  parallel::SetConcurrency(0);
}

static std::string TempDir() {
  char tmpl[] = "/tmp/neardup-test-XXXXXX";
  return std::string(mkdtemp(tmpl));
}

TEST(atomic_file_and_header) {
  const std::string dir = TempDir();
  const std::string path = dir + "/x.bin";
  {
    io::AtomicFile f;
    EXPECT(f.Open(path).ok());
    EXPECT(f.Write("hello", 5).ok());
    // Not committed: nothing under the final name, and the temporary file is removed.
  }
  EXPECT(access(path.c_str(), F_OK) != 0);
  const std::string payload = "payload bytes";
  io::FileHeader h;
  std::memcpy(h.kind, "TEST", 4);
  h.version = 2;
  h.payload_size = payload.size();
  h.params[0] = 42;
  uint8_t hdr[io::kHeaderSize];
  {
    io::AtomicFile f;
    EXPECT(f.Open(path).ok());
    EXPECT(f.Write(hdr, sizeof hdr).ok());  // placeholder, rewritten below
    EXPECT(f.Write(payload.data(), payload.size()).ok());
    extern uint32_t TestCrc(const std::string&);
    h.payload_crc = TestCrc(payload);
    io::EncodeHeader(h, hdr);
    EXPECT(f.WriteAt(0, hdr, sizeof hdr).ok());
    EXPECT(f.Commit().ok());
  }
  io::MappedFile m;
  EXPECT(m.Open(path).ok());
  EXPECT_EQ(m.size(), io::kHeaderSize + payload.size());
  io::FileHeader got;
  Status s = io::DecodeHeader(m.data(), m.size(), "TEST", 2, true, path, &got);
  EXPECT(s.ok());
  EXPECT_EQ(got.params[0], 42u);
  EXPECT_EQ(got.payload_size, payload.size());
  // Newer version, wrong kind, flipped header byte, flipped payload byte, truncation: all refused.
  EXPECT(io::DecodeHeader(m.data(), m.size(), "TEST", 1, true, path, &got).code() == Code::kUnsupported);
  EXPECT(io::DecodeHeader(m.data(), m.size(), "OTHR", 2, true, path, &got).code() == Code::kCorrupt);
  std::vector<uint8_t> copy(m.data(), m.data() + m.size());
  copy[45] ^= 1;
  EXPECT(io::DecodeHeader(copy.data(), copy.size(), "TEST", 2, true, path, &got).code() == Code::kCorrupt);
  copy[45] ^= 1;
  copy[70] ^= 1;
  EXPECT(io::DecodeHeader(copy.data(), copy.size(), "TEST", 2, true, path, &got).code() == Code::kCorrupt);
  EXPECT(io::DecodeHeader(copy.data(), copy.size(), "TEST", 2, false, path, &got).ok());
  EXPECT(io::DecodeHeader(m.data(), m.size() - 1, "TEST", 2, false, path, &got).code() == Code::kCorrupt);
  EXPECT(io::DecodeHeader(m.data(), 10, "TEST", 2, false, path, &got).code() == Code::kCorrupt);
  EXPECT(s.message().empty());
  io::MappedFile missing;
  Status ms = missing.Open(dir + "/nope");
  EXPECT(ms.code() == Code::kIo && ms.message().find("nope") != std::string::npos);
  m.Close();
  unlink(path.c_str());
  rmdir(dir.c_str());
}

#include "hash/crc32c.h"
uint32_t TestCrc(const std::string& s) { return Crc32c(s.data(), s.size()); }

TEST_MAIN("pool_io")
