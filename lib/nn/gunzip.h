// gzip decompression (RFC 1951 inflate + RFC 1952 framing) for the datasets: the reference reads its MNIST files with
// Python's gzip module (nn/datasets.py, Tensor.from_url(gunzip=True)); lib/ uses the standard library only, so the
// decoder lives here. Concatenated gzip members are decoded one after the other, like gzip.decompress.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tg {

// Throws tg::Error naming `what` (a file name) and the byte offset for a bad header, a corrupt or truncated stream,
// or a CRC-32 / length mismatch.
std::vector<uint8_t> gunzip(std::span<const uint8_t> data, const std::string& what = "gzip data");
// Raw deflate stream (no framing); `consumed` receives the number of input bytes used.
std::vector<uint8_t> inflate(std::span<const uint8_t> data, size_t* consumed = nullptr,
                             const std::string& what = "deflate data");
uint32_t crc32(std::span<const uint8_t> data, uint32_t crc = 0);

}  // namespace tg
