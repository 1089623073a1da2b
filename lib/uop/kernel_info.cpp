#include "lib/uop/kernel_info.h"

#include <cstdio>

namespace tg {

// re.sub('\x1b\\[(K|.*?m)', '', s)
std::string ansistrip(const std::string& s) {
  std::string r;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      if (i + 2 < s.size() && s[i + 2] == 'K') {
        i += 3;
        continue;
      }
      size_t m = s.find('m', i + 2);
      if (m != std::string::npos) {
        i = m + 1;
        continue;
      }
    }
    r += s[i++];
  }
  return r;
}

std::string to_function_name(const std::string& s) {
  std::string r;
  for (unsigned char c : ansistrip(s)) {
    if (isalnum(c) || c == '_')
      r += (char)c;
    else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "%02X", (unsigned)c);
      r += buf;
    }
  }
  return r;
}

std::string KernelInfo::function_name() const { return to_function_name(name); }

size_t KernelInfo::hash() const {
  size_t h = std::hash<std::string>()(name);
  h = h * 31 + axis_types.hash();
  h = h * 31 + dont_use_locals;
  h = h * 31 + applied_opts.hash();
  h = h * 31 + opts_to_apply.hash();
  h = h * 31 + estimates.hash();
  return h * 31 + std::hash<int64_t>()(beam);
}
bool KernelInfo::equals(const ArgObj& o) const {
  auto* k = dynamic_cast<const KernelInfo*>(&o);
  return k && name == k->name && axis_types.same(k->axis_types) && dont_use_locals == k->dont_use_locals &&
         applied_opts.same(k->applied_opts) && opts_to_apply.same(k->opts_to_apply) && estimates.same(k->estimates) &&
         beam == k->beam;
}
static Arg kernel_fields(const KernelInfo& k) {
  return Arg::tuple({Arg(k.name), k.axis_types, Arg(k.dont_use_locals), k.applied_opts, k.opts_to_apply, k.estimates,
                     Arg((long long)k.beam)});
}
int KernelInfo::py_cmp(const ArgObj& o) const {
  auto* k = dynamic_cast<const KernelInfo*>(&o);
  if (!k) return ArgObj::py_cmp(o);
  return kernel_fields(*this).py_cmp(kernel_fields(*k));
}
std::string KernelInfo::repr() const {
  return "KernelInfo(name=" + Arg(name).repr() + ", axis_types=" + axis_types.repr() +
         ", dont_use_locals=" + (dont_use_locals ? "True" : "False") + ", applied_opts=" + applied_opts.repr() +
         ", opts_to_apply=" + opts_to_apply.repr() + ", estimates=" + estimates.repr() +
         ", beam=" + std::to_string(beam) + ")";
}

size_t BufferizeOpts::hash() const { return (device.hash() * 31 + (size_t)addrspace) * 31 + removable; }
bool BufferizeOpts::equals(const ArgObj& o) const {
  auto* b = dynamic_cast<const BufferizeOpts*>(&o);
  return b && device.same(b->device) && addrspace == b->addrspace && removable == b->removable;
}
std::string BufferizeOpts::repr() const {
  return "BufferizeOpts(device=" + device.repr() + ", addrspace=AddrSpace." + addrspace_name(addrspace) +
         ", removable=" + (removable ? "True" : "False") + ")";
}

size_t CallInfo::hash() const {
  return ((name ? std::hash<std::string>()(*name) : 7) * 31 + precompile) * 31 + precompile_backward;
}
bool CallInfo::equals(const ArgObj& o) const {
  auto* c = dynamic_cast<const CallInfo*>(&o);
  return c && name == c->name && precompile == c->precompile && precompile_backward == c->precompile_backward;
}
std::string CallInfo::repr() const {
  return std::string("CallInfo(None, ") + (name ? Arg(*name).repr() : std::string("None")) + ", " +
         (precompile ? "True" : "False") + ", " + (precompile_backward ? "True" : "False") + ")";
}

}  // namespace tg
