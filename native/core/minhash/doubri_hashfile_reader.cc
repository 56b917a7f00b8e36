#include "minhash/doubri_hashfile_reader.h"
#include "util/endian.h"

#include <cstring>

#include "io/os.h"

namespace neardup {
namespace doubri {
namespace {


}  // namespace

Status HashFile::Open(const std::string& path) {
  Status s = map_.Open(path);
  if (!s.ok()) return s;
  return Attach(map_.data(), map_.size(), path);
}

Status HashFile::Attach(const uint8_t* d, size_t size, const std::string& path) {
  data_ = nullptr;
  path_ = path;
  n_ = 0;
  if (size < kHashHeaderSize || std::memcmp(d, "MinHash", 7) != 0)
    return Status(Code::kCorrupt, "'" + path + "' is not a doubri hash file (no 'MinHash' magic)");
  if (d[7] != 4)
    return Status(Code::kUnsupported, "'" + path + "': " + std::to_string(d[7]) +
                                          " bytes per value; doubri hash files have 4");
  const uint64_t n = LoadLe64(d + 8), k = LoadLe64(d + 16);
  if (k != kValuesPerRecord)
    return Status(Code::kUnsupported, "'" + path + "': " + std::to_string(k) +
                                          " values per record; doubri 1.0 files have 800");
  if (n > (size - kHashHeaderSize) / kRecordBytes || kHashHeaderSize + n * kRecordBytes != size)
    return Status(Code::kCorrupt, "'" + path + "': the header announces " + std::to_string(n) +
                                      " records but the file has " + std::to_string(size) + " bytes (expected " +
                                      std::to_string(kHashHeaderSize) + " + 3200 per record)");
  data_ = d;
  n_ = n;
  return Status::Ok();
}

Status FlagFile::Read(const std::string& path, uint64_t expected) {
  std::string data;
  Status s = io::ReadFile(path, &data);
  if (!s.ok()) return s;
  return Parse(reinterpret_cast<const uint8_t*>(data.data()), data.size(), path, expected);
}

Status FlagFile::Parse(const uint8_t* data, size_t size, const std::string& path, uint64_t expected) {
  path_ = path;
  if (size != expected)
    return Status(Code::kInvalidInput, "'" + path + "' has " + std::to_string(size) + " flags but its hash file has " +
                                           std::to_string(expected) + " records");
  for (size_t i = 0; i < size; i++) {
    if (data[i] != '0' && data[i] != '1')
      return Status(Code::kInvalidInput, "'" + path + "': byte " + std::to_string(i) + " is not a flag ('0' or '1')");
  }
  flags_.assign(data, data + size);
  return Status::Ok();
}

Status FlagFile::Write() const {
  io::os::Fd fd;
  Status s = io::os::OpenWrite(path_, &fd);
  if (!s.ok()) return s;
  s = io::os::WriteAllAt(fd, path_, 0, flags_.data(), flags_.size());
  if (s.ok()) s = io::os::Sync(fd, path_);
  if (!s.ok()) {
    io::os::CloseQuietly(fd);
    return s;
  }
  return io::os::Close(fd, path_);
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace doubri
}  // namespace neardup
