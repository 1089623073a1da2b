// gzip decompression for the datasets (the reference reads its MNIST files with Python's gzip module: nn/datasets.py,
// Tensor.from_url(gunzip=True)), through zlib. Concatenated gzip members are decoded one after the other, like
// gzip.decompress.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg {

// Throws tg::Error naming `what` (a file name), the problem and the byte offset for a bad header, a corrupt or
// truncated stream, or a CRC-32 / length mismatch.
std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& what = "gzip data");

}  // namespace tg
