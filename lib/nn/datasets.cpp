#include "lib/nn/datasets.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "lib/helpers.h"
#include "lib/nn/gunzip.h"

namespace tg {

namespace fs = std::filesystem;

size_t IdxArray::itemsize() const {
  switch (type) {
    case 0x08:
    case 0x09:
      return 1;
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 0;
  }
}

size_t IdxArray::numel() const {
  size_t n = 1;
  for (int64_t s : shape) n *= size_t(s);
  return n;
}

IdxArray parse_idx(std::vector<uint8_t> b, const std::string& what) {
  if (b.size() < 4) throw Error(what + ": too short for an IDX file (" + std::to_string(b.size()) + " bytes)");
  if (b[0] != 0 || b[1] != 0) throw Error(what + ": not an IDX file (the magic number must start with two zero bytes)");
  IdxArray a;
  a.type = b[2];
  if (a.itemsize() == 0)
    throw Error(what + ": unknown IDX element type 0x" + [&] {
      char h[3];
      std::snprintf(h, sizeof h, "%02x", b[2]);
      return std::string(h);
    }());
  size_t ndim = b[3];
  if (ndim == 0) throw Error(what + ": IDX file with zero dimensions");
  size_t header = 4 + 4 * ndim;
  if (b.size() < header) throw Error(what + ": truncated IDX header (" + std::to_string(ndim) + " dimensions)");
  size_t numel = 1;
  for (size_t i = 0; i < ndim; i++) {
    const uint8_t* p = &b[4 + 4 * i];
    uint32_t d = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
    a.shape.push_back(d);
    numel *= d;
  }
  size_t want = header + numel * a.itemsize();
  if (b.size() != want)
    throw Error(what + ": IDX size mismatch: the header says " + std::to_string(numel) + " elements (" +
                std::to_string(want) + " bytes), the file has " + std::to_string(b.size()) + " bytes");
  b.erase(b.begin(), b.begin() + (std::ptrdiff_t)header);  // the payload stays in the same memory
  a.data = std::move(b);
  // IDX stores multi-byte elements big-endian
  size_t is = a.itemsize();
  if (is > 1)
    for (size_t i = 0; i < a.data.size(); i += is)
      for (size_t k = 0; k < is / 2; k++) std::swap(a.data[i + k], a.data[i + is - 1 - k]);
  return a;
}

IdxArray read_idx(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw Error(path + ": cannot open (" + std::strerror(errno) + ")");
  // one read of the whole file (its size is known), not a byte-wise copy into a growing vector
  std::streamoff size = f.tellg();
  std::vector<uint8_t> bytes(size > 0 ? (size_t)size : 0);
  f.seekg(0);
  if (!bytes.empty() && !f.read(reinterpret_cast<char*>(bytes.data()), size))
    throw Error(path + ": cannot read (" + std::strerror(errno) + ")");
  if (bytes.size() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b) bytes = gunzip(bytes, path);
  return parse_idx(std::move(bytes), path);
}

std::string mnist_dir(bool fashion, const std::string& dir) {
  if (!dir.empty()) return dir;
  std::string env = getenv_str(fashion ? "FASHION_MNIST_PATH" : "MNIST_PATH", "");
  if (!env.empty()) return env;
  if (fashion) return "/usr/share/datasets/fashion-mnist";
  throw Error(
      "MNIST: no dataset directory: set MNIST_PATH to a folder with the four MNIST IDX files "
      "(Fashion-MNIST is installed by scripts/install-deps.sh)");
}

MnistArrays mnist_arrays(bool fashion, const std::string& dir_arg) {
  std::string dir = mnist_dir(fashion, dir_arg);
  if (!fs::is_directory(dir))
    throw Error("MNIST: " + dir + " is not a directory" +
                (fashion && dir_arg.empty()
                     ? " (install the Debian package dataset-fashion-mnist: scripts/install-deps.sh)"
                     : ""));
  auto load = [&](const std::string& stem) {
    for (const char* ext : {".gz", ""}) {
      fs::path p = fs::path(dir) / (stem + ext);
      if (fs::exists(p)) return read_idx(p.string());
    }
    throw Error("MNIST: " + (fs::path(dir) / stem).string() + "(.gz) not found");
  };
  MnistArrays m{load("train-images-idx3-ubyte"), load("train-labels-idx1-ubyte"), load("t10k-images-idx3-ubyte"),
                load("t10k-labels-idx1-ubyte")};
  auto check = [&](const IdxArray& img, const IdxArray& lab, const char* split) {
    if (img.type != 0x08 || img.shape.size() != 3)
      throw Error(std::string("MNIST: ") + split + " images in " + dir + " must be ubyte (N, rows, cols)");
    if (lab.type != 0x08 || lab.shape.size() != 1)
      throw Error(std::string("MNIST: ") + split + " labels in " + dir + " must be ubyte (N)");
    if (img.shape[0] != lab.shape[0])
      throw Error(std::string("MNIST: ") + split + " set in " + dir + " has " + std::to_string(img.shape[0]) +
                  " images but " + std::to_string(lab.shape[0]) + " labels");
  };
  check(m.train_images, m.train_labels, "train");
  check(m.test_images, m.test_labels, "test");
  return m;
}

MnistTensors mnist(bool fashion, const std::string& dir, const Arg& device) {
  MnistArrays a = mnist_arrays(fashion, dir);
  auto images = [&](const IdxArray& x) {
    return Tensor::from_bytes(x.data, dtypes::uint8, device)
        .reshape({sint(-1), sint(1), sint((pyint)x.shape[1]), sint((pyint)x.shape[2])});
  };
  auto labels = [&](const IdxArray& x) { return Tensor::from_bytes(x.data, dtypes::uint8, device); };
  return {images(a.train_images), labels(a.train_labels), images(a.test_images), labels(a.test_labels)};
}

}  // namespace tg
