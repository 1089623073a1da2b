// The safetensors layout against files written by the reference's nn.state.safe_save
// (tests/data/safetensors_goldens.txt, gen_safetensors_goldens.py): our header bytes plus the tensors' bytes equal
// the reference's file byte for byte, and parsing its files gives back names, dtypes, shapes, offsets and metadata.
// Malformed headers are errors naming the file and the tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "lib/helpers.h"
#include "lib/nn/state.h"
#include "tests/support/error_of.h"
#include "tests/support/golden_file.h"

using namespace tg;

namespace {

using tg::test::error_of;

void put_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) out += char(cp);
  else if (cp < 0x800) out += char(0xC0 | cp >> 6), out += char(0x80 | (cp & 0x3F));
  else if (cp < 0x10000) out += char(0xE0 | cp >> 12), out += char(0x80 | (cp >> 6 & 0x3F)), out += char(0x80 | (cp & 0x3F));
  else
    out += char(0xF0 | cp >> 18), out += char(0x80 | (cp >> 12 & 0x3F)), out += char(0x80 | (cp >> 6 & 0x3F)),
        out += char(0x80 | (cp & 0x3F));
}

// python's 'unicode_escape' decoding of what the generator printed
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    char e = s[++i];
    auto hex = [&](int n) {
      uint32_t v = std::stoul(s.substr(i + 1, n), nullptr, 16);
      i += n;
      return v;
    };
    if (e == 'x') put_utf8(out, hex(2));
    else if (e == 'u') put_utf8(out, hex(4));
    else if (e == 'U') put_utf8(out, hex(8));
    else if (e == 't') out += '\t';
    else if (e == 'n') out += '\n';
    else out += e;
  }
  return out;
}

struct Case {
  std::string name;
  std::vector<SafeTensorInfo> tensors;
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<uint8_t> file;
};

std::vector<Case> load() {
  test::GoldenFile f(TG_TEST_DATA "/safetensors_goldens.txt");
  std::vector<Case> cases;
  while (f.next()) {
    std::vector<std::string> w = f.words();
    if (f.is("case")) {
      cases.push_back({w.at(1), {}, {}, {}});
      continue;
    }
    if (cases.empty()) f.fail("a record before the first case");
    if (f.is("tensor")) {  // tensor <escaped name> <dtype> <shape...>
      SafeTensorInfo t;
      t.name = unescape(w.at(1));
      t.dtype = dtypes::by_name(w.at(2));
      for (size_t i = 3; i < w.size(); i++) t.shape.push_back(std::stoll(w[i]));
      cases.back().tensors.push_back(t);
    } else if (f.is("meta")) {  // meta <escaped key> <escaped value: the rest of the line>
      size_t sp = f.rest().find(' ');
      std::string v = sp == std::string::npos ? "" : f.rest().substr(sp + 1);
      cases.back().meta.emplace_back(unescape(w.at(1)), unescape(v));
    } else if (f.is("file")) {
      cases.back().file = test::unhex(w.at(1));
    }
  }
  return cases;
}

uint16_t half_of_int(int v) {  // exact for 0 <= v < 2048
  if (v == 0) return 0;
  int e = 31 - __builtin_clz(unsigned(v));
  return uint16_t((e + 15) << 10 | ((v - (1 << e)) << (10 - e)));
}

// the generator's values: arange(n) cast to the dtype (bool: even positions true)
void append_values(std::vector<uint8_t>& out, const SafeTensorInfo& t) {
  int64_t n = 1;
  for (int64_t s : t.shape) n *= s;
  for (int64_t i = 0; i < n; i++) {
    uint8_t b[8] = {};
    size_t sz = size_t(t.dtype.itemsize());
    if (t.dtype == dtypes::float32) {
      float v = float(i);
      std::memcpy(b, &v, 4);
    } else if (t.dtype == dtypes::float64) {
      double v = double(i);
      std::memcpy(b, &v, 8);
    } else if (t.dtype == dtypes::float16) {
      uint16_t v = half_of_int(int(i));
      std::memcpy(b, &v, 2);
    } else if (t.dtype == dtypes::bool_) {
      b[0] = i % 2 == 0;
    } else {
      std::memcpy(b, &i, sz);  // little-endian two's complement truncation
    }
    out.insert(out.end(), b, b + sz);
  }
}

}  // namespace

TEST(Safetensors, WritesTheReferencesFilesByteForByte) {
  auto cases = load();
  ASSERT_EQ(cases.size(), 5u);
  for (auto& c : cases) {
    auto tensors = c.tensors;
    std::string header = safetensors_header(tensors, c.meta);
    std::vector<uint8_t> file(header.begin(), header.end());
    for (auto& t : tensors) append_values(file, t);
    EXPECT_EQ(file, c.file) << c.name;
  }
}

TEST(Safetensors, ParsesTheReferencesFiles) {
  for (auto& c : load()) {
    SafeTensorsHeader h = parse_safetensors_header(c.file.data(), c.file.size(), c.name);
    ASSERT_EQ(h.tensors.size(), c.tensors.size()) << c.name;
    uint64_t off = 0;
    for (size_t i = 0; i < h.tensors.size(); i++) {
      EXPECT_EQ(h.tensors[i].name, c.tensors[i].name);
      EXPECT_EQ(h.tensors[i].dtype, c.tensors[i].dtype);
      EXPECT_EQ(h.tensors[i].shape, c.tensors[i].shape);
      EXPECT_EQ(h.tensors[i].begin, off);
      off = h.tensors[i].end;
    }
    EXPECT_EQ(h.data_start + off, c.file.size()) << c.name;
    EXPECT_EQ(h.metadata, c.meta) << c.name;
  }
}

TEST(Safetensors, DtypeNames) {
  EXPECT_EQ(safe_dtype("BF16"), dtypes::bfloat16);
  EXPECT_EQ(safe_dtype_name(dtypes::fp8e4m3), "F8_E4M3");
  EXPECT_NE(error_of([] { safe_dtype("F128"); }).find("unknown dtype \"F128\""), std::string::npos);
  EXPECT_NE(error_of([] { safe_dtype_name(dtypes::weakint); }).find("has no safetensors name"), std::string::npos);
}

TEST(Safetensors, MalformedFilesAreErrorsNamingFileAndTensor) {
  auto mk = [](const std::string& json, size_t data_bytes) {
    std::vector<uint8_t> f(8 + json.size() + data_bytes, 0);
    uint64_t n = json.size();
    std::memcpy(f.data(), &n, 8);
    std::copy(json.begin(), json.end(), f.begin() + 8);
    return f;
  };
  auto err = [&](const std::string& json, size_t data_bytes) {
    auto f = mk(json, data_bytes);
    return error_of([&] { parse_safetensors_header(f.data(), f.size(), "m.safetensors"); });
  };
  auto has = [](const std::string& s, const std::string& sub) { return s.find(sub) != std::string::npos; };
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "m.safetensors: tensor \"a\""));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4), "truncated"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "needs 12"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})", 8), "unknown dtype"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "data_offsets"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})", 8),
                  "overlap"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32",)", 8), "bad safetensors header"));
  EXPECT_TRUE(has(err(R"([1,2])", 0), "not a JSON object"));
  EXPECT_TRUE(has(err(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8), "expected an integer"));
  std::vector<uint8_t> tiny = {1, 2, 3};
  EXPECT_TRUE(has(error_of([&] { parse_safetensors_header(tiny.data(), tiny.size(), "t"); }), "not a safetensors file"));
  std::vector<uint8_t> big(16, 0xff);
  EXPECT_TRUE(has(error_of([&] { parse_safetensors_header(big.data(), big.size(), "t"); }), "exceeds the file size"));
}
