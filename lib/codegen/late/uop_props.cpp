#include "lib/codegen/late/uop_props.h"

#include "lib/helpers.h"

namespace tg {

std::optional<AddrSpace> AddrSpaceCache::get(const UOp& root) {
  if (const auto* v = memo_.find(root)) return *v;
  auto from_param = [](const UOp& u) -> std::optional<AddrSpace> {
    const ParamArg* p = u.param_arg();
    if (!p || !p->has_addrspace) return std::nullopt;
    return p->addrspace;
  };
  static constexpr OpSet kFirst{Ops::INDEX,  Ops::CAST,    Ops::AFTER, Ops::REDUCE, Ops::STORE,
                                Ops::MSTACK, Ops::MSELECT, Ops::END,   Ops::UNSHARD};
  static constexpr OpSet kAll = GroupOp::Elementwise | OpSet{Ops::STACK, Ops::WMMA, Ops::GROUP};
  // post-order over the srcs the property reads
  // (borrowed: root keeps every node of the walk alive). The walk calls nothing that walks again: one scratch stack
  // per thread, no allocation per call
  thread_local std::vector<std::pair<const UOp*, bool>> st;
  st.clear();
  st.push_back({&root, false});
  while (!st.empty()) {
    auto [up, visited] = st.back();
    st.pop_back();
    const UOp& u = *up;
    if (memo_.find(u)) continue;
    Ops op = u.op();
    bool first = kFirst.has(op) || GroupOp::Movement.has(op), all = kAll.has(op);
    if (!visited) {
      st.push_back({&u, true});
      if (first && u.nsrc())
        st.push_back({&u.src(0), false});
      else if (all)
        for (size_t i = u.nsrc(); i > 0; i--) st.push_back({&u.src(i - 1), false});
      continue;
    }
    std::optional<AddrSpace> r;
    if (op == Ops::PARAM || op == Ops::BUFFER)
      r = from_param(u);
    else if (op == Ops::SPECIAL || op == Ops::RANGE || op == Ops::LOAD)
      r = AddrSpace::ALU;
    else if (first)
      r = u.nsrc() ? *memo_.find(u.src(0)) : std::nullopt;
    else if (all) {
      std::optional<AddrSpace> a;
      bool same = true, any = false;
      for (const UOp& s : u.src()) {
        const auto& x = *memo_.find(s);
        if (!x) continue;
        if (any && *x != *a) same = false;
        if (!any) a = x, any = true;
      }
      r = any && same ? a : std::nullopt;
    }
    *memo_.emplace(u).first = r;
  }
  return *memo_.find(root);
}

std::optional<AddrSpace> addrspace(const UOp& u) {
  AddrSpaceCache c;
  return c.get(u);
}

std::vector<pyint> max_shape(const UOp& u) {
  std::vector<pyint> r;
  for (const sint& s : u.shape()) r.push_back(s.is_int() ? s.i() : s.u().vmax().as_int());
  return r;
}

pyint max_numel(const UOp& u) {
  pyint n = 1;
  for (pyint x : max_shape(u)) n *= x;
  return n;
}

UOp buf_uop(const UOp& u) {
  if (u.op() == Ops::BUFFER || u.op() == Ops::PARAM) return u;
  if (u.op() == Ops::MSELECT || u.op() == Ops::MSTACK) throw Error("buf_uop of MSELECT/MSTACK is not ported");
  UOp b = u.base();
  if (b.op() == Ops::AFTER) return buf_uop(b.src(0)).base();
  UOp s = u;
  while (s.nsrc() && !OpSet{Ops::BUFFER, Ops::PARAM, Ops::STAGE, Ops::MSTACK}.has(s.op())) s = s.src(0);
  return s;
}

bool is_image_shape(const std::optional<Shape>& shape) {
  return shape && shape->size() == 3 && shape->back().is_int() && shape->back().i() == 4;
}

}  // namespace tg
