// The native JSONL line parser, the parallel batch parser and the zstd streams.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.h"
#include "io/zstd_stream.h"
#include "parallel/pool.h"
#include "text/json_line.h"
#include "text/jsonl_batch.h"
#include "text/utf8.h"

using namespace neardup;

#define EXPECT_SEQ(a, b)                                                                                     \
  do {                                                                                                     \
    const std::string va_ = (a), vb_ = (b);                                                                \
    if (va_ != vb_) {                                                                                      \
      std::fprintf(stderr, "  %s:%d: '%s' != '%s'\n", __FILE__, __LINE__, va_.c_str(), vb_.c_str());       \
      check::Failures()++;                                                                                 \
    }                                                                                                      \
  } while (0)

namespace {

jsonl::FieldPath Path(const std::string& s) {
  jsonl::FieldPath p;
  EXPECT(jsonl::ParseFieldPath(s, &p).ok());
  return p;
}

struct Result {
  bool ok;
  std::string text, id, reason;
  jsonl::IdKind kind = jsonl::IdKind::kNone;
};

Result Parse(const std::string& line, const std::string& field = "text", const char* id = nullptr) {
  const jsonl::FieldPath f = Path(field);
  jsonl::FieldPath idp;
  if (id) idp = Path(id);
  jsonl::LineParser p(&f, id ? &idp : nullptr);
  Result r;
  r.text = "keep:";  // what is already there stays
  r.id = "keep:";
  r.ok = p.Parse(reinterpret_cast<const uint8_t*>(line.data()), line.size(), &r.text, &r.id, &r.kind, &r.reason);
  EXPECT(r.text.rfind("keep:", 0) == 0);
  EXPECT(r.id.rfind("keep:", 0) == 0);
  if (!r.ok) {
    EXPECT_SEQ(r.text, std::string("keep:"));  // a bad line appends nothing
    EXPECT_SEQ(r.id, std::string("keep:"));
  }
  r.text = r.text.substr(5);
  r.id = r.id.substr(5);
  return r;
}

}  // namespace

TEST(field_paths) {
  jsonl::FieldPath p;
  EXPECT(jsonl::ParseFieldPath("meta.content", &p).ok());
  EXPECT(p.parts == (std::vector<std::string>{"meta", "content"}));
  EXPECT(jsonl::ParseFieldPath("a\\.b.c\\\\d", &p).ok());
  EXPECT(p.parts == (std::vector<std::string>{"a.b", "c\\d"}));
  for (const char* bad : {"", ".a", "a.", "a..b", "a\\b", "a\\"}) EXPECT(!jsonl::ParseFieldPath(bad, &p).ok());
}

TEST(line_values_and_escapes) {
  Result r = Parse("{\"text\":\"a\\n\\t\\\"\\\\\\/\\b\\f\\r\\u00e9\\ud83d\\ude00\\u4E2D x\"}");
  EXPECT(r.ok);
  EXPECT_SEQ(r.text, std::string("a\n\t\"\\/\b\f\r\xC3\xA9\xF0\x9F\x98\x80\xE4\xB8\xAD x"));
  r = Parse(" \t{ \"x\" : [1, -2.5e+3, true, false, null, {\"text\": \"inner\"}], \"text\" : \"caf\xC3\xA9\" }\r");
  EXPECT(r.ok);
  EXPECT_SEQ(r.text, std::string("caf\xC3\xA9"));  // the nested "text" is not the top-level field
  EXPECT(Parse("{\"text\":\"a\",\"text\":\"b\"}").text == "b");  // the last repeated key counts
  EXPECT(!Parse("{\"text\":\"a\",\"text\":1}").ok);
  EXPECT(Parse("{\"te\\u0078t\":\"escaped key\"}").text == "escaped key");
  EXPECT(Parse("{\"meta\":{\"content\":\"deep\"}}", "meta.content").text == "deep");
  EXPECT(Parse("{\"a.b\":\"dot\"}", "a\\.b").text == "dot");
  EXPECT(Parse("{\"text\":\"ok\",\"other\":\"\\ud800\"}").ok);  // a lone surrogate elsewhere: valid JSON
}

TEST(line_reasons) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty line"},
      {"\r", "empty line"},
      {" ", "not valid JSON (unexpected end of the line)"},
      {"{\"text\":\"a\"", "not valid JSON (unexpected end of the line)"},
      {"{\"text\":\"a\"}x", "not valid JSON (unexpected 'x' at byte 12)"},
      {"{\"text\":'a'}", "not valid JSON (unexpected ''' at byte 8)"},
      {"{\"text\":\"a\",}", "not valid JSON (unexpected '}' at byte 12)"},
      {"{\"text\":01}", "not valid JSON (unexpected '1' at byte 9)"},
      {"{\"text\":\"\\x\"}", "not valid JSON (bad escape at byte 9)"},
      {"{\"text\":\"\\u12\"}", "not valid JSON (bad \\u escape at byte 9)"},
      {std::string("{\"text\":\"a\x01\"}"), "not valid JSON (bad control character in a string at byte 10)"},
      {"{\"text\":\"a\xFF\"} x", "invalid UTF-8 near byte 10 of the line"},
      {"\xC3{\"text\":\"a\"}", "invalid UTF-8 near byte 0 of the line"},
      {"[1]", "not a JSON object"},
      {"\"s\"", "not a JSON object"},
      {"{}", "field 'text' is missing"},
      {"{\"text\":5}", "field 'text' is number, expected a string"},
      {"{\"text\":null}", "field 'text' is null, expected a string"},
      {"{\"text\":[]}", "field 'text' is object, expected a string"},
      {"{\"text\":\"\\udc00\"}", "field 'text' holds an unpaired surrogate (\\uD800-\\uDFFF escape), which has no UTF-8 form"},
  };
  for (const auto& c : cases) {
    const Result r = Parse(c.first);
    EXPECT(!r.ok);
    EXPECT_SEQ(r.reason, c.second);
  }
  EXPECT_SEQ(Parse("{\"meta\":\"s\"}", "meta.content").reason, std::string("field 'meta.content' is missing ('meta' is a string, not an object)"));
}

TEST(line_ids) {
  Result r = Parse("{\"text\":\"t\",\"id\":\"a\\u00e9\"}", "text", "id");
  EXPECT(r.ok && r.kind == jsonl::IdKind::kString && r.id == "a\xC3\xA9");
  r = Parse("{\"id\":-12345678901234567890123,\"text\":\"t\"}", "text", "id");
  EXPECT(r.ok && r.kind == jsonl::IdKind::kInteger && r.id == "-12345678901234567890123");
  EXPECT_SEQ(Parse("{\"text\":\"t\",\"id\":1.0}", "text", "id").reason,
            std::string("field 'id' is a number with a fraction or an exponent, expected a string or an integer"));
  EXPECT_SEQ(Parse("{\"text\":\"t\"}", "text", "id").reason, std::string("field 'id' is missing"));
  r = Parse("{\"text\":\"same\"}", "text", "text");  // one string, two fields
  EXPECT(r.ok && r.text == "same" && r.id == "same");
}

TEST(line_deep_nesting_and_long_strings) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  EXPECT(Parse("{\"x\":" + deep + ",\"text\":\"after\"}").text == "after");
  std::string s(1 << 20, 'a');
  for (size_t i = 0; i < s.size(); i += 97) s[i] = 'b';
  EXPECT(Parse("{\"text\":\"" + s + "\"}").text == s);
}

TEST(string_scan_kernel_matches_a_plain_loop) {
  std::mt19937 rng(3);
  for (int it = 0; it < 2000; it++) {
    std::vector<uint8_t> v(rng() % 200);
    for (auto& b : v) b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 'a' + rng() % 26);
    size_t want = v.size();
    for (size_t i = 0; i < v.size(); i++)
      if (v[i] == '"' || v[i] == '\\' || v[i] < 0x20 || v[i] >= 0x80) { want = i; break; }
    EXPECT_EQ(jsonl::FindStringSpecial(v.data(), v.size()), want);
  }
}

TEST(batch_matches_line_by_line_across_pieces_and_segments) {
  std::mt19937 rng(7);
  std::string all;
  for (int i = 0; i < 30000; i++) {
    std::string word(rng() % 60, 'x');
    char buf[256];
    const int k = rng() % 10 < 7 ? rng() % 2 : 2 + rng() % 3;
    if (k == 1) std::snprintf(buf, sizeof buf, "{\"id\":\"k%d\",\"text\":\"%s\"}", i, word.c_str());
    else if (k == 0) std::snprintf(buf, sizeof buf, "{\"text\":\"%s\",\"id\":%d}", word.c_str(), i);
    else if (k == 2) std::snprintf(buf, sizeof buf, "not json %s %d", word.c_str(), i);
    else if (k == 3) std::snprintf(buf, sizeof buf, "{\"text\":%d}", i);
    else buf[0] = 0;
    all += buf;
    all += '\n';
  }
  const jsonl::FieldPath text = Path("text"), id = Path("id");
  // two segments, cut after a newline
  const size_t cut = all.find('\n', all.size() / 3) + 1;
  const jsonl::Segment segs[2] = {{reinterpret_cast<const uint8_t*>(all.data()), cut},
                                  {reinterpret_cast<const uint8_t*>(all.data()) + cut, all.size() - cut}};
  jsonl::ParsedBatch b;
  EXPECT(jsonl::ParseBatch(segs, 2, text, &id, SIZE_MAX, 4, nullptr, &b, true).ok());
  EXPECT_EQ(b.lines, size_t(30000));
  EXPECT(b.line_at.size() == b.lines && b.line_len.size() == b.lines);
  jsonl::LineParser p(&text, &id);
  size_t at = 0, bad = 0;
  for (size_t i = 0; i < b.lines; i++) {
    const size_t nl = all.find('\n', at);
    std::string t, d, reason;
    jsonl::IdKind kind = jsonl::IdKind::kNone;
    const bool ok = p.Parse(reinterpret_cast<const uint8_t*>(all.data()) + at, nl - at, &t, &d, &kind, &reason);
    EXPECT_SEQ(std::string(reinterpret_cast<const char*>(b.text.data()) + b.offsets[i], b.offsets[i + 1] - b.offsets[i]), t);
    EXPECT_SEQ(std::string(reinterpret_cast<const char*>(b.ids.data()) + b.id_offsets[i], b.id_offsets[i + 1] - b.id_offsets[i]), d);
    EXPECT_EQ(b.id_kinds[i], static_cast<uint8_t>(kind));
    EXPECT_EQ(b.line_at[i], uint64_t(at));  // where the line is, across the two segments
    EXPECT_EQ(b.line_len[i], uint32_t(nl - at));
    EXPECT_EQ(b.bad[i], ok ? 0 : 1);
    if (!ok) {
      EXPECT(bad < b.reasons.size() && b.reasons[bad].first == i && b.reasons[bad].second == reason);
      bad++;
    }
    at = nl + 1;
  }
  EXPECT_EQ(bad, b.reasons.size());
  // a line over the limit: its index, nothing else
  jsonl::ParsedBatch t;
  EXPECT(jsonl::ParseBatch(segs, 2, text, nullptr, 70, 4, nullptr, &t).ok());
  EXPECT(t.too_long != SIZE_MAX && t.lines == 0);
  // a final line without '\n'
  const std::string tail = "{\"text\":\"a\"}\n{\"text\":\"b\"}";
  const jsonl::Segment one{reinterpret_cast<const uint8_t*>(tail.data()), tail.size()};
  EXPECT(jsonl::ParseBatch(&one, 1, text, nullptr, SIZE_MAX, 1, nullptr, &t).ok());
  EXPECT(t.lines == 2 && t.bad.empty() && t.offsets[2] == 2 && t.line_at.empty());
  EXPECT(jsonl::ParseBatch(&one, 1, text, nullptr, SIZE_MAX, 1, nullptr, &t, true).ok());
  EXPECT(t.line_at.size() == 2 && t.line_at[1] == 13 && t.line_len[0] == 12 && t.line_len[1] == 12);
}

TEST(zstd_round_trip_frames_and_errors) {
  std::string data;
  for (int i = 0; i < 200000; i++) data += "line " + std::to_string(i * 7919 % 1000) + "\n";
  std::vector<uint8_t> z;
  io::ZstdWriter w(3);
  EXPECT(w.Feed(reinterpret_cast<const uint8_t*>(data.data()), data.size() / 2, true, &z).ok());  // frame 1
  EXPECT(w.Feed(reinterpret_cast<const uint8_t*>(data.data()) + data.size() / 2, data.size() - data.size() / 2, true, &z).ok());
  EXPECT(io::IsZstdMagic(z.data(), z.size()));
  EXPECT(z.size() < data.size() / 5);
  // fed in small pieces, with a small output bound
  io::ZstdStream s;
  std::vector<uint8_t> out;
  RawBuffer<uint8_t> part;
  for (size_t at = 0; at < z.size();) {
    const size_t n = std::min<size_t>(z.size() - at, 777);
    size_t consumed = 0;
    do {
      EXPECT(s.Feed(z.data() + at, n, &consumed, 1000, &part, "x").ok());
      EXPECT(part.size() <= 1000 + (128 << 10));
      out.insert(out.end(), part.data(), part.data() + part.size());
    } while (consumed < n || part.size() >= 1000);
    at += n;
  }
  EXPECT(s.Finish("x").ok());
  EXPECT(std::string(out.begin(), out.end()) == data);
  // truncated: an error at the end; corrupt: an error naming the input
  io::ZstdStream t;
  RawBuffer<uint8_t> o2;
  size_t used = 0;
  EXPECT(t.Feed(z.data(), z.size() / 3, &used, size_t(64) << 20, &o2, "x").ok());
  EXPECT(!t.Finish("in.zst").ok());
  // Reset forgets the truncated frame: the same decoder then reads a whole new stream
  t.Reset();
  EXPECT(t.Finish("in.zst").ok());
  std::vector<uint8_t> again;
  used = 0;
  while (used < z.size()) {
    EXPECT(t.Feed(z.data(), z.size(), &used, size_t(64) << 20, &o2, "x").ok());
    again.insert(again.end(), o2.data(), o2.data() + o2.size());
  }
  for (int i = 0; i < 4 && o2.size() > 0; i++) {  // what the last step kept back
    EXPECT(t.Feed(z.data(), z.size(), &used, size_t(64) << 20, &o2, "x").ok());
    again.insert(again.end(), o2.data(), o2.data() + o2.size());
  }
  EXPECT(t.Finish("x").ok());
  EXPECT(std::string(again.begin(), again.end()) == data);
  std::vector<uint8_t> bad = z;
  for (size_t i = 20; i < 200; i++) bad[i] ^= 0x5A;
  std::vector<uint8_t> o3;
  const Status st = io::ZstdDecompressAll(bad.data(), bad.size(), &o3, "in.zst");
  EXPECT(!st.ok() && st.code() == Code::kCorrupt && st.message().rfind("in.zst: ", 0) == 0);
}

// A frame of RLE blocks (128 KiB each, 4 bytes on disk) that expands to `blocks` x 128 KiB of 'a'.
static std::vector<uint8_t> RleBomb(size_t blocks) {
  std::vector<uint8_t> f = {0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3};
  for (size_t i = 0; i < blocks; i++) {
    const uint32_t h = (uint32_t(1) << 17 << 3) | (1u << 1) | (i + 1 == blocks ? 1u : 0u);
    f.insert(f.end(), {uint8_t(h), uint8_t(h >> 8), uint8_t(h >> 16), uint8_t('a')});
  }
  return f;
}

TEST(zstd_decompress_all_stops_at_max_out) {
  const std::vector<uint8_t> bomb = RleBomb(8192);  // 1 GiB out of 32 KB
  std::vector<uint8_t> out;
  // the limit: refused after at most max_out (+ one step) bytes, with the name
  Status st = io::ZstdDecompressAll(bomb.data(), bomb.size(), &out, "page", size_t(1) << 20);
  EXPECT(!st.ok() && st.code() == Code::kInvalidInput && st.message() == "page: expands to more than 1048576 bytes");
  EXPECT(out.size() <= (size_t(1) << 20));
  // exactly at the limit: accepted; one byte under it: refused
  const std::vector<uint8_t> two = RleBomb(2);
  EXPECT(io::ZstdDecompressAll(two.data(), two.size(), &out, "p", size_t(1) << 18).ok() && out.size() == (size_t(1) << 18));
  EXPECT(out[0] == 'a' && out.back() == 'a');
  EXPECT(!io::ZstdDecompressAll(two.data(), two.size(), &out, "p", (size_t(1) << 18) - 1).ok());
  // 0: no limit
  EXPECT(io::ZstdDecompressAll(two.data(), two.size(), &out, "p", 0).ok() && out.size() == (size_t(1) << 18));
}

TEST_MAIN("jsonl")
