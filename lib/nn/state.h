// Port of the format half of tinygrad/nn/state.py: the safetensors layout (8-byte little-endian header length, a JSON
// header padded with spaces to a multiple of 8, then the tensors' bytes back to back) and its dtype names.
// safe_save/safe_load on Tensors build on these (they need only the bytes of a realized tensor).
#pragma once
#include <cstdint>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "lib/dtype.h"

namespace tg {

// safe_dtypes of the reference ("F32", "BF16", "I64", ...); unknown names/dtypes are a tg::Error.
DType safe_dtype(const std::string& name);
std::string safe_dtype_name(DType dt);

struct SafeTensorInfo {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;  // data_offsets, relative to the start of the data section
};

struct SafeTensorsHeader {
  std::vector<SafeTensorInfo> tensors;               // in file order
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__" (strings, in file order)
  uint64_t data_start = 0;                           // 8 + header length
};

// The bytes the reference writes before the data for these tensors (json.dumps with separators=(',',':'),
// ensure_ascii, "__metadata__" first when given, space padding to a multiple of 8), offsets assigned in order.
std::string safetensors_header(std::vector<SafeTensorInfo>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata = {});
// Parses and validates a header: JSON syntax, known dtypes, nbytes(shape, dtype) == end - begin, offsets inside the
// file (file_size), no overlaps. Errors name `what` and the offending tensor.
SafeTensorsHeader parse_safetensors_header(const uint8_t* data, size_t size, const std::string& what);

}  // namespace tg
