#include "lib/renderer/renderer.h"

#include <sched.h>

#include <algorithm>
#include <fstream>

#include "lib/helpers.h"

namespace tg {

int64_t cpu_count() {
  std::ifstream f("/sys/fs/cgroup/cpu.max");
  std::string quota, period;
  if (f >> quota >> period && quota != "max") {
    try {
      int64_t q = std::stoll(quota), p = std::stoll(period);
      if (p != 0) return std::max<int64_t>(1, q / p);
    } catch (const std::exception&) {
    }
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}
ContextVar NUM_CPU_THREADS("NUM_CPU_THREADS", cpu_count());

static std::string strip_trailing_colons(std::string s) {
  while (!s.empty() && s.back() == ':') s.pop_back();
  return s;
}
std::string Target::repr() const {
  std::string fst = strip_trailing_colons(interface + ":" + indices);
  std::string snd = strip_trailing_colons(device + ":" + renderer + ":" + arch);
  return (fst.empty() ? "" : fst + "+") + snd;
}

CodeForOp::CodeForOp(std::initializer_list<std::pair<Ops, CodeFn>> items) {
  for (const auto& [op, fn] : items) set(op, fn);
}
void CodeForOp::set(Ops op, CodeFn fn) {
  for (auto& [o, f] : items_)
    if (o == op) {
      f = std::move(fn);
      return;
    }
  items_.emplace_back(op, std::move(fn));
}
void CodeForOp::erase(Ops op) {
  items_.erase(std::remove_if(items_.begin(), items_.end(), [&](const auto& p) { return p.first == op; }),
               items_.end());
}
bool CodeForOp::has(Ops op) const {
  for (const auto& [o, f] : items_)
    if (o == op) return true;
  return false;
}
const CodeFn& CodeForOp::at(Ops op) const {
  for (const auto& [o, f] : items_)
    if (o == op) return f;
  throw Error(std::string("code_for_op has no ") + op_repr(op));
}
std::vector<Ops> CodeForOp::keys() const {
  std::vector<Ops> r;
  for (const auto& [o, f] : items_) r.push_back(o);
  return r;
}

std::string Renderer::render(const std::vector<UOp>&) const { throw Error("needs a renderer"); }

std::vector<DType> Renderer::supported_dtypes() const {
  // double can't be bitcast to anything without long support (EMULATED_DTYPES is not ported: nothing is emulated)
  return dtypes::all;
}

}  // namespace tg
