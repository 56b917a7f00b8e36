// Streaming Zstandard decompression (libzstd, native/third_party/zstd): any number of
// frames back to back (skippable frames are skipped), fed in pieces of any size. The output of one Feed is
// bounded, so a small input that expands enormously is produced in bounded steps.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "util/raw_buffer.h"
#include "util/status.h"

namespace neardup {
namespace io {

// True when the bytes start with a Zstandard frame's magic number (28 B5 2F FD).
bool IsZstdMagic(const uint8_t* p, size_t n);

class ZstdStream {
 public:
  ZstdStream();
  ~ZstdStream();
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;

  // Decompresses from in[*consumed ..) into a new *out (its memory is not zero-filled) until the input is used
  // up or max_out bytes are out (a little more at most: one internal step); advances *consumed. Corrupt data:
  // Code::kCorrupt (the message starts "WHAT: " unless `what` is empty).
  Status Feed(const uint8_t* in, size_t n, size_t* consumed, size_t max_out, RawBuffer<uint8_t>* out,
              const std::string& what);
  // At the end of the input: Corrupt when the last frame is incomplete (a truncated file).
  Status Finish(const std::string& what) const;
  // Forgets the stream so far (a new input), keeping the decoder's memory.
  void Reset();

 private:
  void* ctx_;
  bool mid_frame_ = false;  // the last Feed ended inside a frame
};

// Streaming Zstandard compression (one frame, with a content checksum), for compressed outputs.
class ZstdWriter {
 public:
  explicit ZstdWriter(int level = 3);
  ~ZstdWriter();
  ZstdWriter(const ZstdWriter&) = delete;
  ZstdWriter& operator=(const ZstdWriter&) = delete;
  // Compresses n bytes and appends what is ready to *out; `end` closes the frame (the writer can then start
  // a new frame with the next call).
  Status Feed(const uint8_t* in, size_t n, bool end, std::vector<uint8_t>* out);

 private:
  void* ctx_;
};

// Decompresses one whole buffer of frames (a Parquet page) into *out (replaced).
// max_out: the most bytes the input may expand to (0: no limit). Decompression stops as soon as more would
// come out (a frame that expands without end costs at most max_out bytes and a step): Code::kInvalidInput,
// "WHAT: expands to more than MAX_OUT bytes".
Status ZstdDecompressAll(const uint8_t* in, size_t n, std::vector<uint8_t>* out, const std::string& what,
                         size_t max_out = 0);

}  // namespace io
}  // namespace neardup
