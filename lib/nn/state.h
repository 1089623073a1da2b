// Port of tinygrad/nn/state.py: the safetensors layout (8-byte little-endian header length, a JSON header padded with
// spaces to a multiple of 8, then the tensors' bytes back to back) and its dtype names; state dicts (named tensors in
// the reference's get_state_dict order), get_parameters, load_state_dict, safe_save and safe_load.
//   tg::nn::StateDict sd = model.state_dict();      tg::safe_save(sd, "model.safetensors");
//   tg::load_state_dict(model.state_dict(), tg::safe_load("model.safetensors"));
#pragma once
#include <cstdint>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "lib/dtype.h"
#include "lib/tensor.h"

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

// ***** state dicts *****
// named tensors in order; the Tensors are handles, so replacing one through a state dict changes the model's tensor
using StateDict = std::vector<std::pair<std::string, Tensor>>;
// out += sd with every name prefixed ("l1." + "weight")
void append_state(StateDict& out, const std::string& prefix, const StateDict& sd);
std::vector<Tensor> get_parameters(const StateDict& sd);
// every tensor of `model` gets the tensor of the same name from `state` (a () vs (1,) shape is reshaped like the
// reference); a missing name (strict) or a shape mismatch is a tg::Error naming the tensor. Returns the loaded tensors.
std::vector<Tensor> load_state_dict(const StateDict& model, const StateDict& state, bool strict = true,
                                    bool realize = true);
// writes the realized tensors in the safetensors format (what the reference's safe_save writes); weak dtypes are refused
void safe_save(const StateDict& tensors, const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& metadata = {});
// reads a safetensors file into tensors on the default device, in file order; errors name the file and the tensor
StateDict safe_load(const std::string& path);
SafeTensorsHeader safe_load_metadata(const std::string& path);

}  // namespace tg
