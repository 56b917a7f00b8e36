// A libFuzzer stand-in for compilers without -fsanitize=fuzzer (g++): feeds each target seeded random
// inputs, plus mutations of valid-looking ones, so the targets also run as ordinary (sanitised) tests.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
  std::mt19937_64 rng(12345);
  const char* alphabet[] = {"a", "B", " ", "\t", "\n", ".", ",", "\xC3\xA9", "\xC4\xB0", "\xCE\xA3", "\xF0\x9F\x98\x80",
                            "\xCC\x81", "\xFF", "\xE2\x82", "\xED\xA0\x80", "_", "1", "\xE3\x80\x80", "\0"};
  std::vector<uint8_t> buf;
  for (int it = 0; it < iterations; it++) {
    buf.clear();
    const size_t len = rng() % (it % 100 == 0 ? 5000 : 64);
    if (it % 2 == 0) {
      for (size_t i = 0; i < len; i++) buf.push_back(static_cast<uint8_t>(rng()));
    } else {
      buf.push_back(static_cast<uint8_t>(rng()));
      while (buf.size() < len) {
        const char* piece = alphabet[rng() % (sizeof(alphabet) / sizeof(alphabet[0]))];
        const size_t plen = piece[0] == 0 ? 1 : std::char_traits<char>::length(piece);
        buf.insert(buf.end(), piece, piece + plen);
      }
    }
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("fuzz-driver (%d inputs)\nfuzz: 1 passed, 0 failed\n", iterations);
  return 0;
}
