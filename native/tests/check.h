// A minimal test harness for the core's C++ tests (no third-party framework to install).
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace check {

struct Case {
  const char* name;
  std::function<void()> fn;
};
inline std::vector<Case>& Cases() {
  static std::vector<Case> c;
  return c;
}
inline int& Failures() {
  static int f = 0;
  return f;
}
struct Register {
  Register(const char* name, std::function<void()> fn) { Cases().push_back({name, std::move(fn)}); }
};

inline int RunAll(const char* suite) {
  int failed_cases = 0;
  const bool times = std::getenv("CHECK_TIMES") != nullptr;  // CHECK_TIMES=1: each case's seconds on stderr
  for (auto& c : Cases()) {
    const int before = Failures();
    const auto t0 = std::chrono::steady_clock::now();
    c.fn();
    if (times) {
      std::fprintf(stderr, "%s/%s: %.2f s\n", suite, c.name,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (Failures() != before) {
      failed_cases++;
      std::fprintf(stderr, "FAIL %s/%s\n", suite, c.name);
    }
  }
  std::printf("%s: %d passed, %d failed\n", suite, int(Cases().size()) - failed_cases, failed_cases);
  return failed_cases == 0 ? 0 : 1;
}

}  // namespace check

#define TEST(name)                                                  \
  static void test_##name();                                        \
  static check::Register register_##name(#name, test_##name);       \
  static void test_##name()

#define EXPECT(cond)                                                                      \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      std::fprintf(stderr, "  %s:%d: expected %s\n", __FILE__, __LINE__, #cond);          \
      check::Failures()++;                                                                \
    }                                                                                     \
  } while (0)

#define EXPECT_EQ(a, b)                                                                                   \
  do {                                                                                                    \
    const auto va = (a);                                                                                  \
    const auto vb = (b);                                                                                  \
    if (!(va == vb)) {                                                                                    \
      std::fprintf(stderr, "  %s:%d: expected %s == %s (%llu vs %llu)\n", __FILE__, __LINE__, #a, #b,     \
                   (unsigned long long)(va), (unsigned long long)(vb));                                   \
      check::Failures()++;                                                                                \
    }                                                                                                     \
  } while (0)

#define TEST_MAIN(suite) \
  int main() { return check::RunAll(suite); }
