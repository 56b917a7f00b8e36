// Writers of signature files, streamed record by record and committed atomically (io::AtomicFile).
//
//   kNeardup  "MHSG" (docs/FORMAT.md section 5): the common 64-byte header (flags = profile id,
//             params[0] = records N, params[1] = values per record k), then N*k u32 little-endian values
//             (document-major), then the UTF-8 JSON of the options that made them, to the end of the
//             payload. numpy: np.fromfile(f, '<u4', count=N*k, offset=64).reshape(N, k).
//   kDoubri   doubri 1.0's `.hash`: "MinHash" (7 bytes), u8 4 (bytes per value), u64 LE N, u64 LE k, then
//             N records of k u32 LE. No checksum.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/file.h"
#include "util/status.h"

namespace neardup {
namespace minhash {

enum class FileFormat : uint8_t { kNeardup = 0, kDoubri = 1 };

constexpr char kSignatureKind[4] = {'M', 'H', 'S', 'G'};
constexpr uint32_t kSignatureVersion = 1;
constexpr size_t kDoubriHeaderSize = 24;

// What a signature file's header says, checked against the file size.
struct SignatureFileInfo {
  FileFormat format = FileFormat::kNeardup;
  uint64_t count = 0, num_perm = 0;
  uint32_t profile = 0;          // kNeardup: the Profile id (0 fast, 1 doubri-v1, 2 datasketch)
  uint64_t values_offset = 0;    // file offset of the first value
  uint64_t trailer_offset = 0;   // kNeardup: the options JSON, to the end of the file
  uint32_t payload_crc = 0;      // kNeardup: CRC-32C of everything after the 64-byte header
};

// Checks the header of a signature file of either format, given its first min(64, file_size) bytes
// (`head_len` of them) and the file size: magic, kind, version, byte order, header CRC (kNeardup), header
// size 64, reserved 0, a known profile id, 1..65536 values per record, 4-byte values (kDoubri), and sizes
// that add up without overflow. The payload CRC is left to the caller (it streams the payload).
Status DecodeSignatureHeader(const uint8_t* head, size_t head_len, uint64_t file_size, const std::string& name,
                             SignatureFileInfo* out);

class SignatureFileWriter {
 public:
  // profile: the Profile id stored in the header flags (kNeardup only); options_json: the trailer.
  Status Open(const std::string& path, FileFormat format, uint32_t k, uint32_t profile, std::string options_json);
  // Appends n records of k values.
  Status Append(const uint32_t* values, size_t n);
  Status Commit();
  void Abort() { file_.Abort(); }
  uint64_t records() const { return records_; }

 private:
  io::AtomicFile file_;
  FileFormat format_ = FileFormat::kNeardup;
  uint32_t k_ = 0, profile_ = 0, crc_ = 0;
  uint64_t records_ = 0;
  std::string options_;
  bool open_ = false;
};

}  // namespace minhash
}  // namespace neardup
