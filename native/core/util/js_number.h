// Numbers as JavaScript writes them (Number.prototype.toString, JSON.stringify): the shortest decimal that
// reads back as the same double (std::to_chars), laid out by ECMAScript's Number::toString rules: plain
// digits for exponents -7 < e < 21, else d.ddde+x / d.ddde-x. For the lines the passage functions format
// natively (byte for byte what JSON.stringify writes for their objects).
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace neardup {

// Writes x into out (at least 32 bytes) and returns the length; NaN and infinities give "null" (as in JSON).
inline size_t FormatJsNumber(double x, char* out) {
  if (!std::isfinite(x)) {
    std::memcpy(out, "null", 4);
    return 4;
  }
  if (x == 0) {  // 0 and -0
    out[0] = '0';
    return 1;
  }
  char sci[40];
  const auto r = std::to_chars(sci, sci + sizeof sci - 1, x, std::chars_format::scientific);
  *r.ptr = 0;  // ends the exponent for atoi
  const char* p = sci;
  size_t o = 0;
  if (*p == '-') out[o++] = '-', p++;
  char digits[24];
  int k = 0;
  for (; p < r.ptr && *p != 'e'; p++)
    if (*p != '.') digits[k++] = *p;
  const int e = std::atoi(p + 1);  // "e+XX" / "e-XX"
  const int n = e + 1;             // the decimal point after n digits
  if (k <= n && n <= 21) {
    std::memcpy(out + o, digits, size_t(k));
    o += size_t(k);
    for (int i = k; i < n; i++) out[o++] = '0';
  } else if (0 < n && n <= 21) {
    std::memcpy(out + o, digits, size_t(n));
    o += size_t(n);
    out[o++] = '.';
    std::memcpy(out + o, digits + n, size_t(k - n));
    o += size_t(k - n);
  } else if (-6 < n && n <= 0) {
    out[o++] = '0';
    out[o++] = '.';
    for (int i = n; i < 0; i++) out[o++] = '0';
    std::memcpy(out + o, digits, size_t(k));
    o += size_t(k);
  } else {
    out[o++] = digits[0];
    if (k > 1) {
      out[o++] = '.';
      std::memcpy(out + o, digits + 1, size_t(k - 1));
      o += size_t(k - 1);
    }
    out[o++] = 'e';
    out[o++] = n - 1 >= 0 ? '+' : '-';
    int ex = std::abs(n - 1);
    char tmp[8];
    int t = 0;
    do tmp[t++] = char('0' + ex % 10), ex /= 10;
    while (ex);
    while (t) out[o++] = tmp[--t];
  }
  return o;
}

}  // namespace neardup
