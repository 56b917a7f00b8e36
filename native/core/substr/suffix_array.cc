#include "substr/suffix_array.h"

#include <mutex>
#include <string>

#include "io/os.h"

namespace neardup {
namespace substr {
namespace {

// libdivsufsort's entry points (divsufsort.h, divsufsort64.h): 0 on success, -1 for bad arguments, -2 when
// it could not allocate its buckets.
using Sort32 = int32_t (*)(const uint8_t* text, int32_t* sa, int32_t n);
using Sort64 = int32_t (*)(const uint8_t* text, int64_t* sa, int64_t n);

struct Library {
  Status status;
  Sort32 sort32 = nullptr;
  Sort64 sort64 = nullptr;
};

const char kInstall[] =
    " (neardup substrings needs libdivsufsort at run time: on Debian or Ubuntu 'apt-get install libdivsufsort3', "
    "elsewhere the libdivsufsort package of your system, built with its 64-bit variant)";

const Library& Lib() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
#if defined(_WIN32)
    const char* const n32[] = {"divsufsort.dll", "libdivsufsort.dll", "libdivsufsort-3.dll"};
    const char* const n64[] = {"divsufsort64.dll", "libdivsufsort64.dll", "libdivsufsort64-3.dll"};
#elif defined(__APPLE__)
    const char* const n32[] = {"libdivsufsort.3.dylib", "libdivsufsort.dylib"};
    const char* const n64[] = {"libdivsufsort64.3.dylib", "libdivsufsort64.dylib"};
#else
    const char* const n32[] = {"libdivsufsort.so.3", "libdivsufsort.so"};
    const char* const n64[] = {"libdivsufsort64.so.3", "libdivsufsort64.so"};
#endif
    void* h32 = nullptr;
    void* h64 = nullptr;
    Status s = io::os::LoadSharedLibrary(n32, sizeof(n32) / sizeof(n32[0]), &h32);
    if (s.ok()) s = io::os::LoadSharedLibrary(n64, sizeof(n64) / sizeof(n64[0]), &h64);
    if (!s.ok()) {
      lib.status = Status(Code::kUnsupported, s.message() + kInstall);
      return;
    }
    lib.sort32 = reinterpret_cast<Sort32>(io::os::FindSymbol(h32, "divsufsort"));
    lib.sort64 = reinterpret_cast<Sort64>(io::os::FindSymbol(h64, "divsufsort64"));
    if (lib.sort32 == nullptr || lib.sort64 == nullptr)
      lib.status = Status(Code::kUnsupported, std::string("libdivsufsort was loaded but has no divsufsort/divsufsort64") + kInstall);
  });
  return lib;
}

Status SortFailed(int32_t r) {
  if (r == -2) return Status(Code::kInternal, "out of memory (libdivsufsort could not allocate its buckets)");
  return Status(Code::kInternal, "libdivsufsort refused the text (code " + std::to_string(r) + ")");
}

}  // namespace

Status LoadSuffixSort() { return Lib().status; }

Status BuildSuffixArray32(const uint8_t* text, int32_t* sa, uint64_t n) {
  const Library& l = Lib();
  if (!l.status.ok()) return l.status;
  if (n >= (uint64_t(1) << 31)) return Status(Code::kInvalidArgument, "a text of 2^31 bytes or more needs 8-byte suffix-array entries");
  if (n == 0) return Status::Ok();
  const int32_t r = l.sort32(text, sa, static_cast<int32_t>(n));
  return r == 0 ? Status::Ok() : SortFailed(r);
}

Status BuildSuffixArray64(const uint8_t* text, int64_t* sa, uint64_t n) {
  const Library& l = Lib();
  if (!l.status.ok()) return l.status;
  if (n == 0) return Status::Ok();
  const int32_t r = l.sort64(text, sa, static_cast<int64_t>(n));
  return r == 0 ? Status::Ok() : SortFailed(r);
}

}  // namespace substr
}  // namespace neardup
