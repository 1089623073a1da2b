// gunzip of zlib-made gzip data (stored, fixed and dynamic blocks, every level, concatenated members, corrupt input),
// IDX parsing, and mnist_arrays on the installed Fashion-MNIST package.
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <random>

#include "lib/helpers.h"
#include "lib/nn/datasets.h"
#include "lib/nn/gunzip.h"
#include "tests/support/error_of.h"

using namespace tg;

namespace {

using tg::test::error_of;

std::vector<uint8_t> zlib_gzip(const std::vector<uint8_t>& in, int level, int strategy = Z_DEFAULT_STRATEGY) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, level, Z_DEFLATED, 15 + 16, 8, strategy), Z_OK);
  std::vector<uint8_t> out(deflateBound(&s, in.size()) + 64);
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = uInt(in.size());
  s.next_out = out.data();
  s.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::vector<uint8_t> sample(size_t n, unsigned seed, int alphabet) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) {
    // runs and repeats so that matches of every length and distance occur
    if (i > 300 && rng() % 4 == 0) {
      size_t d = 1 + rng() % std::min<size_t>(i, 40000), len = 3 + rng() % 300;
      for (size_t k = 0; k < len && i < n; k++, i++) v[i] = v[i - d];
      i--;
    } else {
      v[i] = uint8_t(rng() % alphabet);
    }
  }
  return v;
}

}  // namespace

TEST(Gunzip, MatchesZlibOnEveryLevelAndStrategy) {
  for (unsigned seed : {1u, 2u, 3u})
    for (int alphabet : {2, 16, 256})
      for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(200000)}) {
        auto in = sample(n, seed, alphabet);
        for (int level : {0, 1, 6, 9})
          for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE}) {
            auto gz = zlib_gzip(in, level, strategy);
            ASSERT_EQ(gunzip(gz), in) << "n=" << n << " level=" << level << " strategy=" << strategy;
          }
      }
}

TEST(Gunzip, ConcatenatedMembers) {
  auto a = sample(5000, 7, 20), b = sample(7000, 8, 200);
  auto ga = zlib_gzip(a, 6), gb = zlib_gzip(b, 1);
  ga.insert(ga.end(), gb.begin(), gb.end());
  auto out = gunzip(ga);
  a.insert(a.end(), b.begin(), b.end());
  EXPECT_EQ(out, a);
}

TEST(Gunzip, CorruptInputIsAnErrorNamingTheProblem) {
  auto in = sample(50000, 4, 64);
  auto gz = zlib_gzip(in, 6);
  EXPECT_NE(error_of([&] { gunzip(std::vector<uint8_t>{1, 2, 3}, "x.gz"); }).find("x.gz: too short"), std::string::npos);
  auto bad_magic = gz;
  bad_magic[0] = 0;
  EXPECT_NE(error_of([&] { gunzip(bad_magic, "x.gz"); }).find("bad magic"), std::string::npos);
  auto truncated = std::vector<uint8_t>(gz.begin(), gz.begin() + gz.size() / 2);
  EXPECT_NE(error_of([&] { gunzip(truncated, "x.gz"); }).find("x.gz: "), std::string::npos);
  auto flipped = gz;
  flipped[gz.size() - 6] ^= 0xff;  // inside the CRC
  EXPECT_NE(error_of([&] { gunzip(flipped, "x.gz"); }).find("CRC-32 mismatch"), std::string::npos);
  // random damage anywhere in the body never crashes: it is an error or (rarely) a CRC-checked success
  std::mt19937 rng(5);
  for (int i = 0; i < 300; i++) {
    auto d = gz;
    d[10 + rng() % (d.size() - 18)] ^= uint8_t(1 + rng() % 255);
    try {
      EXPECT_EQ(gunzip(d), in);
    } catch (const Error&) {
    }
  }
}

TEST(Idx, ParsesHeaderAndBigEndianElements) {
  std::vector<uint8_t> b = {0, 0, 0x0B, 2, 0, 0, 0, 2, 0, 0, 0, 1, 0x01, 0x02, 0xff, 0xfe};
  IdxArray a = parse_idx(b, "t.idx");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1}));
  ASSERT_EQ(a.data.size(), 4u);
  int16_t v[2];
  std::memcpy(v, a.data.data(), 4);
  EXPECT_EQ(v[0], 0x0102);
  EXPECT_EQ(v[1], -2);
  b.pop_back();
  EXPECT_NE(error_of([&] { parse_idx(b, "t.idx"); }).find("t.idx: IDX size mismatch"), std::string::npos);
  EXPECT_NE(error_of([&] { parse_idx({0, 0, 0x42, 1, 0, 0, 0, 0}, "t.idx"); }).find("unknown IDX element type 0x42"),
            std::string::npos);
  EXPECT_NE(error_of([&] { parse_idx({1, 2, 8, 1}, "t.idx"); }).find("not an IDX file"), std::string::npos);
}

TEST(Mnist, MissingDirectoryAndFilesAreClearErrors) {
  EXPECT_NE(error_of([] { mnist_arrays(true, "/nonexistent/dir"); }).find("/nonexistent/dir is not a directory"),
            std::string::npos);
  auto tmp = std::filesystem::temp_directory_path() / "tg_mnist_empty";
  std::filesystem::create_directories(tmp);
  EXPECT_NE(error_of([&] { mnist_arrays(false, tmp.string()); }).find("train-images-idx3-ubyte(.gz) not found"),
            std::string::npos);
  std::filesystem::remove_all(tmp);
  EXPECT_NE(error_of([&] { read_idx("/nonexistent/file.gz"); }).find("/nonexistent/file.gz: cannot open"),
            std::string::npos);
}

TEST(Mnist, ReadsTheFashionMnistPackage) {
  if (!std::filesystem::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (scripts/install-deps.sh installs it)";
  MnistArrays m = mnist_arrays(true);
  EXPECT_EQ(m.train_images.shape, (std::vector<int64_t>{60000, 28, 28}));
  EXPECT_EQ(m.train_labels.shape, (std::vector<int64_t>{60000}));
  EXPECT_EQ(m.test_images.shape, (std::vector<int64_t>{10000, 28, 28}));
  EXPECT_EQ(m.test_labels.shape, (std::vector<int64_t>{10000}));
  // Fashion-MNIST: 10 balanced classes, 6,000 train and 1,000 test images each
  std::vector<int> train(10), test(10);
  for (uint8_t l : m.train_labels.data) train.at(l)++;
  for (uint8_t l : m.test_labels.data) test.at(l)++;
  for (int c = 0; c < 10; c++) {
    EXPECT_EQ(train[c], 6000);
    EXPECT_EQ(test[c], 1000);
  }
  // the decompressed bytes equal zlib's
  std::ifstream f("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz", std::ios::binary);
  std::vector<uint8_t> gz((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> ref(10008);
  z_stream s{};
  inflateInit2(&s, 15 + 16);
  s.next_in = gz.data();
  s.avail_in = uInt(gz.size());
  s.next_out = ref.data();
  s.avail_out = uInt(ref.size());
  ASSERT_EQ(inflate(&s, Z_FINISH), Z_STREAM_END);
  inflateEnd(&s);
  EXPECT_EQ(gunzip(gz), ref);
}
