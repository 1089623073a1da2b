#include "lib/nn/gunzip.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "lib/helpers.h"

namespace tg {

namespace {

[[noreturn]] void fail(const std::string& what, size_t offset, const std::string& msg) {
  throw Error(what + ": " + msg + " at byte " + std::to_string(offset));
}

struct BitReader {
  const uint8_t* p;
  size_t n, pos = 0;  // byte position of the next byte to load into the bit buffer
  uint64_t bits = 0;
  int count = 0;
  const std::string& what;

  void refill() {
    while (count <= 56) {
      if (pos >= n) return;
      bits |= uint64_t(p[pos++]) << count;
      count += 8;
    }
  }
  uint32_t need(int k) {
    if (count < k) {
      refill();
      if (count < k) fail(what, pos, "unexpected end of the compressed stream");
    }
    uint32_t v = uint32_t(bits & ((1ull << k) - 1));
    bits >>= k;
    count -= k;
    return v;
  }
  void align() {
    int drop = count & 7;
    bits >>= drop;
    count -= drop;
  }
  // bytes fully consumed so far (the bit buffer holds whole unread bytes after align())
  size_t byte_pos() const { return pos - size_t(count / 8); }
};

// Canonical Huffman decoder: a direct table for codes up to FAST bits, a canonical walk for longer ones.
constexpr int FAST = 10;
struct Huffman {
  std::array<uint16_t, 16> count{};        // codes per length
  std::array<uint16_t, 320> symbol{};      // symbols ordered by code
  std::array<uint16_t, 1 << FAST> fast{};  // (symbol << 4) | length, 0 = slow path
  bool build(const uint8_t* lengths, int n) {
    count.fill(0);
    for (int i = 0; i < n; i++) count[lengths[i]]++;
    count[0] = 0;
    int left = 1;
    for (int len = 1; len < 16; len++) {
      left <<= 1;
      left -= count[len];
      if (left < 0) return false;  // over-subscribed
    }
    std::array<uint16_t, 16> offs{};
    for (int len = 1; len < 15; len++) offs[len + 1] = uint16_t(offs[len] + count[len]);
    for (int i = 0; i < n; i++)
      if (lengths[i]) symbol[offs[lengths[i]]++] = uint16_t(i);
    // fast table: codes are assigned in order of (length, symbol); store them bit-reversed (deflate sends LSB first)
    fast.fill(0);
    int code = 0, idx = 0;
    for (int len = 1; len <= FAST; len++) {
      for (int k = 0; k < count[len]; k++, code++, idx++) {
        int rev = 0;
        for (int b = 0; b < len; b++) rev |= ((code >> b) & 1) << (len - 1 - b);
        for (int fill = rev; fill < (1 << FAST); fill += 1 << len) fast[fill] = uint16_t((symbol[idx] << 4) | len);
      }
      code <<= 1;
    }
    return true;
  }
  int decode(BitReader& br) const {
    if (br.count < 15) br.refill();
    uint16_t e = fast[br.bits & ((1u << FAST) - 1)];
    if (e && (e & 15) <= br.count) {
      br.bits >>= (e & 15);
      br.count -= (e & 15);
      return e >> 4;
    }
    // canonical decode, one bit at a time (codes longer than FAST bits, or near the end of the input)
    int code = 0, first = 0, index = 0;
    for (int len = 1; len < 16; len++) {
      code |= int(br.need(1));
      int c = count[len];
      if (code - c < first) return symbol[index + (code - first)];
      index += c;
      first += c;
      first <<= 1;
      code <<= 1;
    }
    return -1;
  }
};

constexpr uint16_t LEN_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                   31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr uint8_t LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                   2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr uint16_t DIST_BASE[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                    33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                    1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr uint8_t DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                    6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// the inflated bytes: a buffer grown by doubling (zero-filled once per growth, not per byte), trimmed at the end
struct Output {
  std::vector<uint8_t> buf;
  size_t n = 0;
  explicit Output(size_t hint) { buf.resize(std::max<size_t>(hint, 64)); }
  uint8_t* reserve(size_t k) {  // room for k more bytes
    if (n + k > buf.size()) buf.resize(std::max(buf.size() * 2, n + k));
    return buf.data() + n;
  }
  std::vector<uint8_t> take() {
    buf.resize(n);
    return std::move(buf);
  }
};

void inflate_codes(BitReader& br, Output& out, const Huffman& lit, const Huffman& dist) {
  for (;;) {
    int sym = lit.decode(br);
    if (sym < 0) fail(br.what, br.byte_pos(), "invalid literal/length code");
    if (sym < 256) {
      *out.reserve(1) = uint8_t(sym);
      out.n++;
    } else if (sym == 256) {
      return;
    } else {
      sym -= 257;
      if (sym >= 29) fail(br.what, br.byte_pos(), "invalid length symbol");
      size_t len = LEN_BASE[sym] + br.need(LEN_EXTRA[sym]);
      int ds = dist.decode(br);
      if (ds < 0 || ds >= 30) fail(br.what, br.byte_pos(), "invalid distance code");
      size_t d = DIST_BASE[ds] + br.need(DIST_EXTRA[ds]);
      if (d > out.n) fail(br.what, br.byte_pos(), "distance points before the start of the output");
      uint8_t* o = out.reserve(len);
      const uint8_t* src = o - d;
      if (d >= len)
        std::memcpy(o, src, len);
      else
        for (size_t i = 0; i < len; i++) o[i] = src[i];  // overlapping copies repeat the pattern
      out.n += len;
    }
  }
}

}  // namespace

uint32_t crc32(std::span<const uint8_t> data, uint32_t crc) {
  // slicing-by-8: eight tables, eight bytes per step
  static const std::array<std::array<uint32_t, 256>, 8> t = [] {
    std::array<std::array<uint32_t, 256>, 8> r{};
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      r[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
      for (int k = 1; k < 8; k++) r[k][i] = (r[k - 1][i] >> 8) ^ r[0][r[k - 1][i] & 0xff];
    return r;
  }();
  crc = ~crc;
  const uint8_t* p = data.data();
  size_t n = data.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint32_t lo = (uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24) ^ crc;
    uint32_t hi = uint32_t(p[4]) | uint32_t(p[5]) << 8 | uint32_t(p[6]) << 16 | uint32_t(p[7]) << 24;
    crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n; p++, n--) crc = t[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return ~crc;
}

namespace {
std::vector<uint8_t> inflate_sized(std::span<const uint8_t> data, size_t* consumed, const std::string& what,
                                   size_t size_hint) {
  BitReader br{data.data(), data.size(), 0, 0, 0, what};
  Output out(size_hint);
  static const std::pair<Huffman, Huffman> fixed = [] {
    std::pair<Huffman, Huffman> f;
    uint8_t l[288];
    for (int i = 0; i < 288; i++) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
    f.first.build(l, 288);
    uint8_t d[30];
    std::memset(d, 5, sizeof d);
    f.second.build(d, 30);
    return f;
  }();
  bool last = false;
  while (!last) {
    last = br.need(1);
    uint32_t type = br.need(2);
    if (type == 0) {
      br.align();
      uint32_t len = br.need(16), nlen = br.need(16);
      if ((len ^ 0xffff) != nlen) fail(what, br.byte_pos(), "stored block length check failed");
      // the bit buffer holds whole bytes now: take them first, then copy straight from the input
      while (len && br.count >= 8) {
        *out.reserve(1) = uint8_t(br.need(8));
        out.n++;
        len--;
      }
      if (br.pos + len > br.n) fail(what, br.pos, "unexpected end of a stored block");
      if (len) std::memcpy(out.reserve(len), br.p + br.pos, len);
      out.n += len;
      br.pos += len;
    } else if (type == 1) {
      inflate_codes(br, out, fixed.first, fixed.second);
    } else if (type == 2) {
      int nlen = int(br.need(5)) + 257, ndist = int(br.need(5)) + 1, ncode = int(br.need(4)) + 4;
      if (nlen > 286 || ndist > 30) fail(what, br.byte_pos(), "bad dynamic block code counts");
      static constexpr uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
      uint8_t lengths[320] = {};
      for (int i = 0; i < ncode; i++) lengths[order[i]] = uint8_t(br.need(3));
      Huffman lencode;
      if (!lencode.build(lengths, 19)) fail(what, br.byte_pos(), "bad code-length code");
      int idx = 0;
      while (idx < nlen + ndist) {
        int sym = lencode.decode(br);
        if (sym < 0) fail(what, br.byte_pos(), "bad code length");
        if (sym < 16) {
          lengths[idx++] = uint8_t(sym);
          continue;
        }
        uint8_t val = 0;
        int rep;
        if (sym == 16) {
          if (idx == 0) fail(what, br.byte_pos(), "repeat with no previous length");
          val = lengths[idx - 1];
          rep = 3 + int(br.need(2));
        } else if (sym == 17) {
          rep = 3 + int(br.need(3));
        } else {
          rep = 11 + int(br.need(7));
        }
        if (idx + rep > nlen + ndist) fail(what, br.byte_pos(), "too many code lengths");
        while (rep--) lengths[idx++] = val;
      }
      if (lengths[256] == 0) fail(what, br.byte_pos(), "no end-of-block code");
      Huffman lit, dist;
      if (!lit.build(lengths, nlen) || !dist.build(lengths + nlen, ndist))
        fail(what, br.byte_pos(), "over-subscribed Huffman code");
      inflate_codes(br, out, lit, dist);
    } else {
      fail(what, br.byte_pos(), "invalid block type 3");
    }
  }
  br.align();
  if (consumed) *consumed = br.byte_pos();
  return out.take();
}
}  // namespace

std::vector<uint8_t> inflate(std::span<const uint8_t> data, size_t* consumed, const std::string& what) {
  return inflate_sized(data, consumed, what, data.size() * 4);
}

std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& what) {
  std::vector<uint8_t> out;
  size_t pos = 0;
  do {
    if (data.size() - pos < 18) fail(what, pos, "too short for a gzip member");
    if (data[pos] != 0x1f || data[pos + 1] != 0x8b) fail(what, pos, "not gzip data (bad magic)");
    if (data[pos + 2] != 8) fail(what, pos + 2, "unknown compression method " + std::to_string(data[pos + 2]));
    uint8_t flags = data[pos + 3];
    size_t p = pos + 10;
    auto need = [&](size_t k) {
      if (p + k > data.size()) fail(what, p, "truncated gzip header");
    };
    if (flags & 4) {  // FEXTRA
      need(2);
      size_t xlen = data[p] | (data[p + 1] << 8);
      need(2 + xlen);
      p += 2 + xlen;
    }
    for (int bit : {8, 16}) {  // FNAME, FCOMMENT: zero-terminated
      if (!(flags & bit)) continue;
      while (p < data.size() && data[p]) p++;
      need(1);
      p++;
    }
    if (flags & 2) {  // FHCRC
      need(2);
      p += 2;
    }
    size_t used = 0;
    // a single member's uncompressed size (mod 2^32) ends the data: the output buffer starts at that size when it
    // is plausible (a corrupt trailer must not make it allocate gigabytes)
    size_t hint = data.size() * 4;
    if (pos == 0 && data.size() >= 4) {
      const uint8_t* e = data.data() + data.size() - 4;
      size_t isize = e[0] | e[1] << 8 | e[2] << 16 | size_t(e[3]) << 24;
      if (isize >= data.size() / 2 && isize <= data.size() * 64) hint = isize;
    }
    std::vector<uint8_t> member = inflate_sized(data.subspan(p), &used, what, hint);
    p += used;
    if (p + 8 > data.size()) fail(what, p, "truncated gzip trailer");
    uint32_t crc = data[p] | data[p + 1] << 8 | data[p + 2] << 16 | uint32_t(data[p + 3]) << 24;
    uint32_t isize = data[p + 4] | data[p + 5] << 8 | data[p + 6] << 16 | uint32_t(data[p + 7]) << 24;
    if (crc32(member) != crc) fail(what, p, "CRC-32 mismatch (corrupt data)");
    if (uint32_t(member.size()) != isize) fail(what, p + 4, "length mismatch (corrupt data)");
    if (out.empty())
      out = std::move(member);
    else
      out.insert(out.end(), member.begin(), member.end());
    pos = p + 8;
  } while (pos < data.size() && data[pos] == 0x1f);
  return out;
}

}  // namespace tg
