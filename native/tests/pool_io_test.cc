#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
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
#include "io/os.h"
#include "io/temp_names.h"
#include "parallel/pool.h"
#include "parallel/sort.h"

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

// SortOnPool gives std::sort's order for every number of parts (odd ones leave a part unmerged until the
// last round), repeats and sizes that do not divide.
TEST(sort_on_pool_equals_std_sort) {
  parallel::SetConcurrency(4);
  const size_t slots = parallel::MaxSlots();
  uint64_t x = 88172645463325252ull;
  for (size_t n : {0, 1, 2, 7, 100, 1001, 65537}) {
    for (size_t min_part : {1, 3, 50, 65536}) {
      std::vector<uint64_t> v(n);
      for (auto& e : v) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        e = x % (n / 2 + 1);  // repeats
      }
      std::vector<uint64_t> want = v;
      std::sort(want.begin(), want.end());
      for (size_t s : {size_t(1), size_t(2), size_t(3), slots}) {
        std::vector<uint64_t> got = v;
        parallel::SortOnPool(&got, s, nullptr, min_part);
        EXPECT(got == want);
      }
    }
  }
  parallel::SetConcurrency(0);
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

static std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d))
      if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

static std::string Slurp(const std::string& path) {
  std::string s;
  EXPECT(io::ReadFile(path, &s).ok());
  return s;
}

static Status SaveText(const std::string& path, const std::string& text) {
  io::AtomicFile f;
  Status s = f.Open(path);
  if (s.ok()) s = f.Write(text.data(), text.size());
  if (s.ok()) s = f.Commit();
  return s;
}

// Sets a path's modification time `seconds` into the past (stale entries must be older than kMinStaleAge).
static void Age(const std::string& path, double seconds) {
  struct timeval now;
  gettimeofday(&now, nullptr);
  struct timeval tv[2] = {now, now};
  tv[0].tv_sec -= static_cast<time_t>(seconds);
  tv[1].tv_sec -= static_cast<time_t>(seconds);
  EXPECT(utimes(path.c_str(), tv) == 0);
}

static long DeadPid() {
  const pid_t p = fork();
  if (p == 0) _exit(0);
  int st = 0;
  waitpid(p, &st, 0);
  return static_cast<long>(p);
}

TEST(atomic_file_keeps_mode_and_follows_links) {
  const std::string dir = TempDir();
  const std::string path = dir + "/data.bin";
  // A re-save keeps the mode of the file it replaces (0600 stays 0600; 0640 stays 0640).
  EXPECT(SaveText(path, "one").ok());
  chmod(path.c_str(), 0600);
  EXPECT(SaveText(path, "two").ok());
  struct stat st;
  EXPECT(stat(path.c_str(), &st) == 0 && (st.st_mode & 07777) == 0600);
  chmod(path.c_str(), 0640);
  EXPECT(SaveText(path, "three").ok());
  EXPECT(stat(path.c_str(), &st) == 0 && (st.st_mode & 07777) == 0640);
  EXPECT(Slurp(path) == "three");
  // A new file gets 0666 minus the umask.
  const mode_t um = umask(022);
  EXPECT(SaveText(dir + "/new.bin", "n").ok());
  EXPECT(stat((dir + "/new.bin").c_str(), &st) == 0 && (st.st_mode & 07777) == 0644);
  umask(um);
  // Saving through a symbolic link (relative, two hops) writes the target; the links stay links.
  EXPECT(symlink("data.bin", (dir + "/link1").c_str()) == 0);
  EXPECT(symlink((dir + "/link1").c_str(), (dir + "/link2").c_str()) == 0);
  EXPECT(SaveText(dir + "/link2", "via link").ok());
  EXPECT(lstat((dir + "/link2").c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT(lstat((dir + "/link1").c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT(Slurp(path) == "via link");
  EXPECT(stat(path.c_str(), &st) == 0 && (st.st_mode & 07777) == 0640);
  // A dangling link: the file is created where it points.
  EXPECT(symlink("later.bin", (dir + "/dangling").c_str()) == 0);
  EXPECT(SaveText(dir + "/dangling", "created").ok());
  EXPECT(lstat((dir + "/dangling").c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT(Slurp(dir + "/later.bin") == "created");
  // A FIFO is not replaced by a regular file: refused.
  EXPECT(mkfifo((dir + "/fifo").c_str(), 0600) == 0);
  Status fs = SaveText(dir + "/fifo", "x");
  EXPECT(!fs.ok() && fs.message().find("not a regular file") != std::string::npos);
  EXPECT(lstat((dir + "/fifo").c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  // A link loop is an error, not a hang.
  EXPECT(symlink("loop", (dir + "/loop").c_str()) == 0);
  EXPECT(!SaveText(dir + "/loop", "x").ok());
  for (const std::string& e : Entries(dir)) unlink((dir + "/" + e).c_str());
  EXPECT(rmdir(dir.c_str()) == 0);
}

TEST(atomic_file_temp_names_and_stale_cleanup) {
  const std::string dir = TempDir();
  const std::string path = dir + "/out.bin";
  const long dead = DeadPid();
  const std::string stale = dir + "/.out.bin.neardup-tmp-" + std::to_string(dead) + "-00112233aabbccdd";
  const std::string stale_other = dir + "/.other.neardup-tmp-" + std::to_string(dead) + "-0f";
  const std::string live = dir + "/.other.neardup-tmp-1-0123456789abcdef";  // PID 1 runs
  const std::string not_ours = dir + "/.out.bin.tmp-" + std::to_string(dead) + "-3";  // another naming: kept
  for (const std::string& p : {stale, stale_other, live, not_ours}) {
    FILE* f = fopen(p.c_str(), "w");
    EXPECT(f != nullptr);
    if (f) fclose(f);
    Age(p, 60);
  }
  long pid = 0;
  EXPECT(io::ParseTempName(".out.bin.neardup-tmp-123-ab", &pid) && pid == 123);
  EXPECT(!io::ParseTempName("out.bin.neardup-tmp-123-ab", &pid));
  EXPECT(!io::ParseTempName(".out.bin.neardup-tmp-123-", &pid));
  EXPECT(!io::ParseTempName(".out.bin.neardup-tmp-x-ab", &pid));
  EXPECT(!io::ProcessAlive(dead));
  EXPECT(io::ProcessAlive(static_cast<long>(getpid())));
  {
    io::AtomicFile f;
    EXPECT(f.Open(path).ok());
    // The stale temporary files of the dead process are gone; the live one and foreign names stay.
    EXPECT(access(stale.c_str(), F_OK) != 0);
    EXPECT(access(stale_other.c_str(), F_OK) != 0);
    EXPECT(access(live.c_str(), F_OK) == 0);
    EXPECT(access(not_ours.c_str(), F_OK) == 0);
    // Our own: ".out.bin.neardup-tmp-<our pid>-<16 hex>", mode 0600, a regular file.
    size_t ours = 0;
    const std::string prefix = ".out.bin.neardup-tmp-" + std::to_string(getpid()) + "-";
    for (const std::string& e : Entries(dir)) {
      if (e.compare(0, prefix.size(), prefix) != 0) continue;
      ours++;
      EXPECT_EQ(e.size(), prefix.size() + 16);
      struct stat st;
      EXPECT(lstat((dir + "/" + e).c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
    }
    EXPECT_EQ(ours, 1u);
    EXPECT(f.Write("x", 1).ok());
    // Not committed: removed.
  }
  EXPECT(access(path.c_str(), F_OK) != 0);
  EXPECT_EQ(Entries(dir).size(), 2u);
  // Long names: the temporary name stays within NAME_MAX.
  const std::string longname = dir + "/" + std::string(250, 'a');
  EXPECT(SaveText(longname, "long").ok());
  EXPECT(Slurp(longname) == "long");
  for (const std::string& e : Entries(dir)) unlink((dir + "/" + e).c_str());
  EXPECT(rmdir(dir.c_str()) == 0);
}

TEST(spill_dir_created_removed_and_stale_cleaned) {
  const std::string parent = TempDir();
  const long dead = DeadPid();
  const std::string stale = parent + "/neardup-spill-" + std::to_string(dead) + "-abc123";
  const std::string live = parent + "/neardup-spill-1-abc123";
  EXPECT(mkdir(stale.c_str(), 0700) == 0);
  EXPECT(mkdir(live.c_str(), 0700) == 0);
  FILE* f = fopen((stale + "/neardup-lsh-run-x").c_str(), "w");
  if (f) fclose(f);
  Age(stale, 60);
  Age(live, 60);
  std::string made;
  {
    io::SpillDir d;
    EXPECT(d.Create(parent).ok());
    made = d.path();
    EXPECT(made.find("/neardup-spill-" + std::to_string(getpid()) + "-") != std::string::npos);
    EXPECT(access(stale.c_str(), F_OK) != 0);  // the dead process's folder, with its file
    EXPECT(access(live.c_str(), F_OK) == 0);
    f = fopen((made + "/neardup-sigs-x").c_str(), "w");
    if (f) fclose(f);
  }
  EXPECT(access(made.c_str(), F_OK) != 0);
  io::SpillDir bad;
  Status s = bad.Create(parent + "/missing");
  EXPECT(!s.ok() && s.message().find("missing") != std::string::npos);
  rmdir(live.c_str());
  EXPECT(rmdir(parent.c_str()) == 0);
}

// Stale or not (io::IsStale): a lock decides over the PID, a young entry is never removed, an unlocked old
// entry of a running PID is (PID reuse).
TEST(stale_entries_locks_ages_and_pids) {
  const std::string dir = TempDir();
  const long dead = DeadPid();
  auto name = [&](long pid, const char* tag) { return dir + "/.out.bin.neardup-tmp-" + std::to_string(pid) + "-" + tag; };
  const std::string locked_dead = name(dead, "0a"), young_dead = name(dead, "0b"), old_dead = name(dead, "0c");
  const std::string young_live = name(1, "0d"), ancient_live = name(1, "0e"), child_locked = name(dead + 1000000, "0f");
  for (const std::string& p : {locked_dead, young_dead, old_dead, young_live, ancient_live, child_locked}) {
    FILE* f = fopen(p.c_str(), "w");
    if (f) fclose(f);
  }
  for (const std::string& p : {locked_dead, old_dead, child_locked}) Age(p, 60);
  Age(ancient_live, 2 * io::kReusedPidAge);
  // "another PID namespace": a PID that does not exist here, a lock that is held (another open file
  // description of this process conflicts like another process would)
  const int held = open(locked_dead.c_str(), O_RDONLY);
  EXPECT(held >= 0 && flock(held, LOCK_EX) == 0);
  // a real other process holding the lock
  int ready[2], quit[2];
  EXPECT(pipe(ready) == 0 && pipe(quit) == 0);
  const pid_t child = fork();
  if (child == 0) {
    const int fd = open(child_locked.c_str(), O_RDONLY);
    char c = (fd >= 0 && flock(fd, LOCK_EX) == 0) ? 'y' : 'n';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    if (read(quit[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  char c = 0;
  EXPECT(read(ready[0], &c, 1) == 1 && c == 'y');
  EXPECT_EQ(io::os::ProbeLock(locked_dead), io::os::LockState::kHeld);
  EXPECT_EQ(io::os::ProbeLock(old_dead), io::os::LockState::kFree);
  EXPECT_EQ(io::os::ProbeLock(dir + "/missing"), io::os::LockState::kUnknown);
  EXPECT_EQ(io::CleanStaleTemps(dir), 2u);  // old_dead and ancient_live
  EXPECT(access(locked_dead.c_str(), F_OK) == 0);
  EXPECT(access(child_locked.c_str(), F_OK) == 0);
  EXPECT(access(young_dead.c_str(), F_OK) == 0);
  EXPECT(access(young_live.c_str(), F_OK) == 0);
  EXPECT(access(old_dead.c_str(), F_OK) != 0);
  EXPECT(access(ancient_live.c_str(), F_OK) != 0);
  // the writers end: their files become stale (the child's PID never existed here)
  close(held);
  EXPECT(write(quit[1], "q", 1) == 1);
  int st = 0;
  waitpid(child, &st, 0);
  Age(young_dead, 60);
  EXPECT_EQ(io::CleanStaleTemps(dir), 3u);
  EXPECT(access(young_live.c_str(), F_OK) == 0);  // young, and PID 1 runs
  for (int fd : {ready[0], ready[1], quit[0], quit[1]}) close(fd);
  // An AtomicFile holds its temporary file locked while it is open.
  {
    io::AtomicFile f;
    EXPECT(f.Open(dir + "/x.bin").ok());
    for (const std::string& e : Entries(dir))
      if (e.rfind(".x.bin.neardup-tmp-", 0) == 0) EXPECT_EQ(io::os::ProbeLock(dir + "/" + e), io::os::LockState::kHeld);
  }
  // A spill folder's LOCK file is held while it exists; a locked folder of a "dead" PID stays.
  {
    io::SpillDir d;
    EXPECT(d.Create(dir).ok());
    EXPECT_EQ(io::os::ProbeLock(d.path() + "/" + io::kSpillLockName), io::os::LockState::kHeld);
    const std::string other = dir + "/neardup-spill-" + std::to_string(dead) + "-locked";
    EXPECT(mkdir(other.c_str(), 0700) == 0);
    const int fd = open((other + "/" + io::kSpillLockName).c_str(), O_CREAT | O_WRONLY, 0600);
    EXPECT(fd >= 0 && flock(fd, LOCK_EX) == 0);
    Age(other, 60);
    EXPECT_EQ(io::CleanStaleSpillDirs(dir), 0u);
    close(fd);
    EXPECT_EQ(io::CleanStaleSpillDirs(dir), 1u);
    EXPECT(access(other.c_str(), F_OK) != 0);
  }
  for (const std::string& e : Entries(dir)) unlink((dir + "/" + e).c_str());
  EXPECT(rmdir(dir.c_str()) == 0);
}

// What the chunk builds subtract from --memory: the resident anonymous memory grows by what is touched.
TEST(anonymous_memory_counts_touched_heap) {
#if defined(__linux__)
  const uint64_t before = io::os::AnonymousMemoryBytes();
  EXPECT(before > 0);
  const size_t n = size_t(64) << 20;
  char* p = static_cast<char*>(std::malloc(n));
  EXPECT(p != nullptr);
  std::memset(p, 1, n);
  const uint64_t after = io::os::AnonymousMemoryBytes();
  EXPECT(after >= before + (uint64_t(48) << 20));
  volatile char sink = p[n - 1];
  (void)sink;
  std::free(p);
#else
  EXPECT_EQ(io::os::AnonymousMemoryBytes(), 0u);
#endif
}

TEST_MAIN("pool_io")
