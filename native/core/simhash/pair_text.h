// The texts of `neardup simhash find-all`: its input, one decimal u64 fingerprint per line, parsed in place
// from the bytes as they are read (no string, no allocation per line), and its pairs, "a b\n" lines of
// unsigned 64-bit decimal numbers as seomoz's simhash-find-all prints them, written straight into a caller's
// buffer (the command's output was 2 s of its 2.7 s on 1.25M pairs when JavaScript formatted each BigInt).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace neardup {
namespace simhash {

// The longest line: two 20-digit numbers, a space and a newline.
constexpr size_t kMaxPairLine = 42;

// v in decimal (1 to 20 digits) at out; returns the digits written.
size_t FormatU64(uint64_t v, char* out);

// Lines "a[i] b[i]\n" for i = first, first + 1, ... while a whole line fits in out[0..cap) and i < n;
// returns the bytes written and sets *next to the first pair not written.
size_t FormatPairLines(const uint64_t* a, const uint64_t* b, size_t n, size_t first, char* out, size_t cap, size_t* next);

// The line under way, carried from one piece of input to the next (plain bytes: the caller may keep it in
// any buffer of sizeof(FingerprintLineState) bytes, zeroed to start).
struct FingerprintLineState {
  uint64_t value;     // the digits so far
  uint32_t digits;    // how many
  uint32_t head_len;  // bytes in head
  uint8_t started;    // a byte other than a blank was seen
  uint8_t trailing;   // blanks after the digits
  uint8_t bad;        // not a decimal u64 of at most 20 digits
  uint8_t over;       // more than 20 digits, or above 2^64 - 1
  uint8_t pad[4];
  char head[64];      // the line's first 64 bytes from its first non-blank one, to word an error
};

static_assert(sizeof(FingerprintLineState) == 88 && offsetof(FingerprintLineState, head_len) == 12 &&
                  offsetof(FingerprintLineState, started) == 16 && offsetof(FingerprintLineState, head) == 24,
              "lib/simhash/fingerprint-text.ts reads these bytes of the state");

struct FingerprintParse {
  size_t consumed = 0;  // bytes of the piece taken
  size_t values = 0;    // values written to out
  size_t lines = 0;     // non-empty lines ended
  size_t newlines = 0;  // '\n' taken (lines ended, empty ones included)
  bool bad = false;     // stopped at the end of a line that is not a fingerprint (its head in the state)
};

// Parses the piece text[0..n) of one file's lines (lines end at '\n'; with `final`, the file ends after the
// piece and a last line without its '\n' ends there). A line is trimmed of the bytes String.prototype.trim
// removes from a latin1 string (TAB, LF, VT, FF, CR, space, NBSP); an empty line is skipped; any other line
// must be 1 to 20 digits at most 2^64 - 1, and its value goes to out. Stops before ending a line when out
// already holds cap values (consumed tells where: call again with more room), and at the end of a bad line
// (r->bad; the line's newline is not taken). Work is linear in the piece.
void ParseFingerprintText(const uint8_t* text, size_t n, bool final, FingerprintLineState* st, uint64_t* out,
                          size_t cap, FingerprintParse* r);

// Sorts a[0..n) ascending and drops repeats in place (an LSD radix sort on 11-bit digits, digits that are equal
// in every value skipped); returns how many distinct values are left. tmp is scratch.
size_t SortDistinct(uint64_t* a, size_t n, std::vector<uint64_t>* tmp);

}  // namespace simhash
}  // namespace neardup
