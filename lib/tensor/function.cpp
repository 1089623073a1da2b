#include "lib/tensor/function.h"

#include <chrono>
#include <cstdio>

namespace tg {

namespace {
int g_depth = 0;  // _function.depth: nesting of function calls (indents the DEBUG line)
}

std::vector<Tensor> Function::operator()(const std::vector<Tensor>& args) const {
  auto st = std::chrono::steady_clock::now();
  std::vector<UOp> inputs;
  for (const Tensor& t : args) inputs.push_back(t.uop());
  std::vector<Tensor> ret;
  g_depth++;
  try {
    ret = fxn_(args);
  } catch (...) {
    g_depth--;
    throw;
  }
  g_depth--;
  if (ret.empty()) throw Error("function " + opts_.name.value_or("function") + " returned no tensors");
  std::vector<UOp> rets;
  for (const Tensor& t : ret) rets.push_back(t.uop());
  std::vector<UOp> outs = call_function(inputs, rets, opts_);
  if (DEBUG.value() >= 2) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - st).count();
    char key[20];
    std::snprintf(key, sizeof key, "%08zx", outs[0].src(0).hash() & 0xffffffffu);
    std::printf("%sfunction %s in %8.2f ms: %s\n", std::string(2 * (size_t)g_depth, ' ').c_str(), key, ms,
                opts_.name.value_or("function").c_str());
  }
  std::vector<Tensor> r;
  for (const UOp& u : outs) r.emplace_back(u);
  return r;
}

}  // namespace tg
