// The temporary-name scheme shared by every platform: ".NAME.neardup-tmp-PID-RANDOM" beside the target.
// The platform parts (random bits, process liveness, folder walks) are in temp_names.cc and temp_names_win.cc.
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

#include "io/os.h"
#include "io/temp_names.h"

namespace neardup {
namespace io {
namespace {

constexpr const char* kTag = ".neardup-tmp-";
constexpr size_t kMaxBase = 100;

}  // namespace

std::string TempNameFor(const std::string& target) {
  const size_t start = os::BaseNameStart(target);
  std::string base = target.substr(start);
  if (base.size() > kMaxBase) base.resize(kMaxBase);
  char rnd[17];
  std::snprintf(rnd, sizeof rnd, "%016llx", static_cast<unsigned long long>(TempRandomBits()));
  return target.substr(0, start) + "." + base + kTag + std::to_string(os::ProcessId()) + "-" + rnd;
}

bool ParseTempName(const std::string& name, long* pid) {
  if (name.size() < 2 || name[0] != '.') return false;
  const size_t at = name.rfind(kTag);
  if (at == std::string::npos || at == 0) return false;
  size_t i = at + std::strlen(kTag);
  long v = 0;
  size_t digits = 0;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 10; i++, digits++) v = v * 10 + (name[i] - '0');
  if (digits == 0 || i >= name.size() || name[i] != '-') return false;
  size_t hex = 0;
  for (i++; i < name.size(); i++, hex++)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  if (hex == 0) return false;
  *pid = v;
  return true;
}

bool IsStale(long pid, double age_seconds, const std::string& lock_path) {
  if (!(age_seconds >= kMinStaleAge)) return false;
  const os::LockState lock = os::ProbeLock(lock_path);
  if (lock == os::LockState::kHeld) return false;
  if (!ProcessAlive(pid)) return true;
  return lock == os::LockState::kFree && age_seconds >= kReusedPidAge;
}

}  // namespace io
}  // namespace neardup
