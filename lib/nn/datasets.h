// Port of tinygrad/nn/datasets.py's mnist(): the four IDX files of an MNIST-format dataset. The reference downloads
// them; here they are read from a directory: Debian's dataset-fashion-mnist package (/usr/share/datasets/fashion-mnist,
// installed by scripts/install-deps.sh) for fashion=true, or any folder holding the four files, gzipped or not.
// The data is returned as host arrays; the Tensor-returning mnist() is built on these.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "lib/tensor.h"

namespace tg {

// One IDX array (http://yann.lecun.com/exdb/mnist/ format): element type code (0x08 ubyte, 0x09 byte, 0x0B short,
// 0x0C int, 0x0D float, 0x0E double), shape and the raw elements converted to host byte order.
struct IdxArray {
  uint8_t type = 0x08;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  size_t numel() const;
  size_t itemsize() const;
};

// Reads PATH (gunzipped when it starts with the gzip magic). A missing file, a bad magic, an unknown type, or a size
// that does not match the header is a tg::Error naming the file and what is wrong.
IdxArray read_idx(const std::string& path);
IdxArray parse_idx(std::vector<uint8_t> bytes, const std::string& what);

struct MnistArrays {
  IdxArray train_images, train_labels, test_images, test_labels;  // images (N,28,28) ubyte, labels (N) ubyte
};
// The directory to read: `dir` if given, else MNIST_PATH / FASHION_MNIST_PATH from the environment, else the Debian
// package's folder for fashion (plain MNIST has no Debian package: a clear error says to set MNIST_PATH).
std::string mnist_dir(bool fashion, const std::string& dir = "");
// Reads train-images-idx3-ubyte(.gz), train-labels-idx1-ubyte(.gz), t10k-images-idx3-ubyte(.gz) and
// t10k-labels-idx1-ubyte(.gz); checks images are ubyte (N,R,C), labels ubyte (N) with matching N.
MnistArrays mnist_arrays(bool fashion = true, const std::string& dir = "");

// nn/datasets.py's mnist(): X_train (60000, 1, 28, 28) uint8, Y_train (60000,) uint8, X_test, Y_test on `device`
struct MnistTensors {
  Tensor X_train, Y_train, X_test, Y_test;
};
MnistTensors mnist(bool fashion = true, const std::string& dir = "", const Arg& device = {});

}  // namespace tg
