// A view of a batch of documents (UTF-8 bytes owned by the caller).
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {

struct Docs {
  const uint8_t* const* ptr = nullptr;
  const size_t* len = nullptr;
  size_t n = 0;
  size_t size() const { return n; }
};

}  // namespace neardup
