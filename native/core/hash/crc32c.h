// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every neardup file format. Uses the
// SSE4.2 crc32 instruction when the CPU has it, a table otherwise. Streamable: pass the previous value.
#pragma once
#include <cstddef>
#include <cstdint>

namespace neardup {

// crc = Crc32c(data, n) for one buffer; Crc32c(more, m, crc) continues it.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace neardup
