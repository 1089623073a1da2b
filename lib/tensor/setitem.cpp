// Port of tensor.py Tensor.__setitem__: writes into a realized tensor through a view assign, or replaces an
// unrealized tensor with the _getitem(indices, v) form (mixin/op.py, lib/mixin/op.cpp uop_getitem_set).
#include <algorithm>

#include "lib/tensor.h"

namespace tg {

namespace {
// python's f"{self.dtype=}"
std::string dtype_eq(const char* what, DType d) { return std::string(what) + ".dtype=" + d.repr(); }
// an index that is a Tensor (python isinstance(i, Tensor)); a symbolic int (a Variable) has no device
bool is_tensor_index(const Index& i) { return i.kind == Index::Kind::Tensor && !i.tensor.device().is_none(); }
}  // namespace

void Tensor::setitem(const std::vector<Index>& indices, const TOperand& v_in) {
  if (contains(dtypes::weaks, dtype())) throw Error("cannot setitem into a weak tensor; it has no storage");
  Operand vo = v_in.op();
  std::optional<Tensor> v;
  if (vo.is_uop()) {
    v = Tensor::wrap(vo.uop());
    if (contains(dtypes::weaks, v->dtype())) v = v->cast(least_upper_dtype({dtype(), v->dtype()}));
    if (v->dtype() != dtype())
      throw Error("setitem dtype mismatch: " + dtype_eq("self", dtype()) + " != " + dtype_eq("v", v->dtype()));
  }
  // raise if the mutation would diverge from eager (allow only pure views of a realized buffer; the right side of
  // +=/-= (v and its sources) is not another use)
  UOp v_uop = v ? v->uop() : UOp();
  UOpSet v_bw;
  if (v)
    for (const UOp& u : v->uop().backward_slice()) v_bw.insert(u);
  if (uop().op_in_backward_slice_with_self(OpSet{Ops::BUFFER})) {
    UOp shared = uop_is_realized(uop()) ? uop().base() : UOp();
    for (const Tensor& t : live_tensors()) {
      if (t.is(*this) || (v_uop && t.uop() == v_uop) || v_bw.count(t.uop())) continue;
      if (t.uop().in_backward_slice_with_self(uop()) && !(shared && t.uop().base() == shared))
        throw Error("can't setitem on a tensor with other uses");
    }
  }
  bool advanced = std::any_of(indices.begin(), indices.end(), is_tensor_index);
  bool realized = uop().base().op() == Ops::BUFFER || uop_base_buffer_is_realized(uop());
  auto value_tensor = [&]() { return v ? *v : Tensor(UOp::const_(vo.value(), dtype()), device(), dtype()); };
  if ((!uop_is_realized(uop()) && is_floating_point()) || !(advanced || realized)) {
    Tensor val = value_tensor();
    // __iadd__/__isub__ give AFTER(view, STORE(view, computed)): take the computed value
    const UOp& vu = val.uop();
    if (vu.op() == Ops::AFTER &&
        std::any_of(vu.src().begin() + 1, vu.src().end(), [](const UOp& s) { return s.op() == Ops::STORE; }))
      val = Tensor::wrap(vu.src(1).src(1));
    replace(Tensor::wrap(uop_getitem_set(uop(), indices, val.uop())));
  } else if (advanced) {
    assign(Tensor::wrap(uop_getitem_set(uop(), indices, value_tensor().uop())));
  } else {
    Tensor view = getitem(indices);
    if (v && v->uop().op() == Ops::AFTER) {
      const auto& bs = view.uop().base().src();
      if (std::find(bs.begin(), bs.end(), v->uop()) != bs.end()) return;
    }
    if (v)
      view.assign(*v);
    else
      view.assign(TOperand(vo.value()));
  }
}

}  // namespace tg
