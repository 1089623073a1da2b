#include "lib/nn/gunzip.h"

#include <zlib.h>

#include "lib/helpers.h"

namespace tg {

namespace {
[[noreturn]] void fail(const std::string& what, size_t offset, const std::string& msg) {
  throw Error(what + ": " + msg + " at byte " + std::to_string(offset));
}
// zlib's message for a failed member, in gzip.decompress's words where they differ
std::string zlib_problem(int rc, const char* msg) {
  std::string m = msg ? msg : "";
  if (m == "incorrect data check") return "CRC-32 mismatch";
  if (m == "incorrect length check") return "length mismatch (ISIZE)";
  if (rc == Z_MEM_ERROR) return "out of memory";
  return m.empty() ? "corrupt stream (zlib error " + std::to_string(rc) + ")" : m;
}
}  // namespace

std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& what) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  uint8_t buf[1 << 16];
  do {  // one gzip member per pass
    if (data.size() - pos < 18) fail(what, pos, "too short for a gzip member (" + std::to_string(data.size() - pos) + " bytes)");
    if (data[pos] != 0x1f || data[pos + 1] != 0x8b) fail(what, pos, "bad magic, not gzip data");
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) fail(what, pos, "zlib could not start");
    z.next_in = const_cast<Bytef*>(data.data() + pos);
    int rc = Z_OK;
    size_t left = data.size() - pos;
    while (rc != Z_STREAM_END) {
      uInt chunk = (uInt)std::min<size_t>(left, 1u << 30);
      if (z.avail_in == 0 && chunk > 0) z.avail_in = chunk, left -= chunk;
      z.next_out = buf, z.avail_out = sizeof(buf);
      rc = inflate(&z, Z_NO_FLUSH);
      out.insert(out.end(), buf, buf + (sizeof(buf) - z.avail_out));
      if (rc == Z_STREAM_END) break;
      if (rc == Z_BUF_ERROR && z.avail_in == 0 && left == 0) {
        size_t at = pos + z.total_in;
        inflateEnd(&z);
        fail(what, at, "truncated stream");
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        std::string problem = zlib_problem(rc, z.msg);
        size_t at = pos + z.total_in;
        inflateEnd(&z);
        fail(what, at, problem);
      }
    }
    pos += z.total_in;
    inflateEnd(&z);
  } while (pos < data.size());
  return out;
}

}  // namespace tg
