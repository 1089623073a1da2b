// Port of the callify part of tinygrad/tensor.py: transform_to_call turns the tensor graph of the tensors to realize
// into one CALL over PARAMs (its steps "number the uops", "early transform tensor graph", "finalize call",
// "replace bufs" in a trace context "Callify N Buffers"), and _apply_map_to_tensors points every live Tensor at the
// result. Also the uop/ops.py helpers the Tensor needs (copy_to_device, clone, param_like, call, _frompy).
#include <algorithm>

#include "lib/tensor.h"
#include "lib/uop/kernel_info.h"
#include "lib/uop/rewrite.h"
#include "lib/uop/track.h"
#include "lib/uop/upat.h"

namespace tg {

// ***** uop/ops.py helpers *****

bool uop_is_virtual(const UOp& u) { return u.device().is_none() || contains(dtypes::weaks, u.dtype()); }

UOp uop_copy_to_device(const UOp& u, const Arg& device) {
  if (contains(dtypes::weaks, u.dtype())) throw Error("cannot create storage for weak dtype " + u.dtype().repr());
  std::vector<pyint> ms = u.max_shape();
  OptShape max_shape;
  for (pyint m : ms) max_shape.push_back(sint(m));
  UOp padded = u.pad_to(max_shape);
  UOp copy(Ops::COPY, DType(), {padded}, device);
  OptShape shape(u.shape());
  return copy.shrink_to(shape);
}

UOp uop_clone(const UOp& u, const Arg& device_arg) {
  Arg device = device_arg.is_none() ? u.device() : device_arg;
  UOp ret = u.empty_like(DType(), device);
  Arg udev = u.device();
  bool same = udev.is_none() || (udev.is_str() && device.is_str() && udev.as_str() == device.as_str());
  UOp src = same ? u : uop_copy_to_device(u, device);
  return ret.after(ret.store(src.cast(ret.dtype())));
}

UOp uop_param_like(const UOp& u, int64_t slot) {
  if (u.is_bound_var() || u.is_variable()) {
    UOp b = u.op() == Ops::AFTER ? u.src(0) : u;
    ParamArg pa(*b.param_arg());
    pa.slot = slot;
    pa.name = "p" + std::to_string(slot), pa.has_name = true;
    return UOp(Ops::PARAM, b.dtype(), b.src(), pa.to_arg());
  }
  UOp p = UOp::param(slot, u.dtype(), u.shape_opt(), u.device());
  std::optional<AddrSpace> as = u.addrspace();
  if (as && *as != AddrSpace::GLOBAL) {
    ParamArg pa(*p.param_arg());
    pa.addrspace = *as;
    p = p.with_arg(pa.to_arg());
  }
  return p;
}

UOp uop_call(const UOp& body, std::span<const UOp> srcs, std::optional<std::string> name) {
  for (const UOp& r : body.ranges())
    if (r.arg().is_tuple() && r.arg().size() && r.arg()[r.arg().size() - 1].kind() == Arg::Kind::Axis &&
        r.arg()[r.arg().size() - 1].as_axis() != AxisType::DEVICE)
      throw Error("call: ranges are leaking out of the call");
  std::vector<UOp> src{body};
  src.insert(src.end(), srcs.begin(), srcs.end());
  static const OpSet opaque{Ops::SINK, Ops::PROGRAM, Ops::LINEAR, Ops::COPY, Ops::CUSTOM_FUNCTION};
  if (!opaque.has(body.op())) throw Error("call: only opaque bodies (SINK, PROGRAM, LINEAR, COPY) are supported");
  return UOp(Ops::CALL, dtypes::void_, src, CallInfo(std::move(name)).to_arg());
}

UOp uop_frompy(const std::vector<uint8_t>& data, const Shape& shape, DType dtype, const Arg& device) {
  Arg dev = device.is_none() ? Arg(default_device()) : Arg(canonicalize_device(device.as_str()));
  // bfloat16 and fp8 have no struct format: the data is a float32 buffer, cast on the device
  DType bdtype = dtype == dtypes::bfloat16 || contains(dtypes::fp8s, dtype) ? dtypes::float32 : dtype;
  // the reference's host data lives on its PYTHON device, which is also the interpreter: on INTERP, its twin, the data
  // is created where it is used and needs no copy, as with the reference's DEV=PYTHON
  const std::string host = dev.as_str() == "INTERP" ? "INTERP" : "PYTHON";
  UOp ret = UOp::empty(shape, bdtype, Arg(host));
  std::shared_ptr<Buffer> b = uop_buffer(ret.base());
  if (data.size() != b->nbytes())
    throw Error("Tensor: " + std::to_string(data.size()) + " bytes of data for " + std::to_string(b->nbytes()) +
                " bytes of " + bdtype.repr());
  b->allocate();  // fake realize
  b->copyin(data);
  if (ret.dtype() != dtype) ret = ret.cast(dtype);
  return dev.as_str() == host ? ret : uop_copy_to_device(ret, dev);
}

// ***** callify *****

namespace {

struct AllocCtx {
  std::vector<UOp> uop_list;
  std::vector<std::pair<UOp, UOp>> buffer_map;
  UOpSet bases;
  std::vector<UOp> assigns, replacements;
  UOpSet views;
};

bool starts_with_any(const Arg& device, std::initializer_list<const char*> prefixes) {
  if (!device.is_str()) return false;
  for (const char* p : prefixes)
    if (device.as_str().rfind(p, 0) == 0) return true;
  return false;
}
bool disk_like(const UOp& u) { return starts_with_any(u.device(), {"DISK", "TINYFS"}); }

Arg tag_concat(const Arg& a, const Arg& b) {
  std::vector<Arg> items;
  if (a.is_tuple()) items = a.items();
  if (b.is_tuple()) items.insert(items.end(), b.items().begin(), b.items().end());
  return Arg::tuple(items);
}
bool tag_truthy(const Arg& t) { return t.is_tuple() ? t.size() > 0 : !t.is_none(); }

UOp tag_uop(AllocCtx& ctx, const UOp& x) {
  if (!x.tag().is_none()) return UOp();
  ctx.uop_list.push_back(x);
  return x.rtag(Arg::tuple({Arg((pyint)ctx.uop_list.size() - 1)}));
}

// ElementwiseMixin.contiguous(tag=...) on a UOp
UOp contiguous_tagged(const UOp& u, const Arg& tag) {
  if (contains(dtypes::weaks, u.dtype())) return u;
  if (u.op() == Ops::CONTIGUOUS || u.device().is_none() || u.has_buffer_identity()) return u;
  return UOp(Ops::CONTIGUOUS, DType(), {u}, Arg(), tag);
}

const PatternMatcher& add_tags() {
  static const PatternMatcher pm(
      "add_tags",
      {
          TG_RULE(UPat(Ops::COPY).named("u"),
                  [](AllocCtx& ctx, U u) {
                    // copies to disk are replaced with the disk buffer
                    if (disk_like(u) && u.tag().is_none()) {
                      ctx.buffer_map.emplace_back(u, u.empty_like());
                      return u.rtag(Arg::tuple({}));
                    }
                    // all copies from disk/numpy are realized into a real buffer
                    if (starts_with_any(u.src(0).device(), {"NPY", "DISK", "PYTHON", "TINYFS"})) return tag_uop(ctx, u);
                    return UOp();
                  }),
          // no tag on copies that are assigned via STORE+AFTER: merge COPY tag into AFTER
          TG_RULE(UPat(Ops::AFTER)
                      .src(UPat(), UPat(Ops::STORE).src(UPat::var("dest"), UPat(Ops::COPY).named("c")))
                      .named("a"),
                  [](U a, U c, U dest) {
                    if (!tag_truthy(a.tag()) || !tag_truthy(c.tag())) return UOp();
                    UOp st = a.src(1).with_src({dest, c.rtag(Arg::tuple({}))});
                    return a.replace({}, {}, std::vector<UOp>{a.src(0), st}, {}, tag_concat(a.tag(), c.tag()));
                  }),
          TG_RULE(UPat(OpSet{Ops::CONTIGUOUS, Ops::AFTER}).named("x"),
                  [](AllocCtx& ctx, U x) { return tag_uop(ctx, x); }),
          TG_RULE(UPat(GroupOp::all()).named("x"),
                  [](AllocCtx& ctx, U x) { return ctx.bases.count(x) ? tag_uop(ctx, x) : UOp(); }),
      });
  return pm;
}

UOp replace_contig_with_store_after(const UOp& u) {
  // can't allocate a buffer for a virtual value
  if (uop_is_virtual(u)) return UOp();
  // if size is 0, remove the contig
  for (const sint& s : u.shape())
    if (s.is_int() && s.i() == 0) return u.src(0);
  // no real contig for DISK/TINYFS tensors, they are left alone
  if (disk_like(u)) return u.rtag(Arg());
  UOp buf = u.empty_like();
  return buf.after(buf.store(u.src(0))).rtag(u.tag());
}

UOp replace_store_after_with_contig(const UOp& u, const UOp& src) {
  UOp assigned_to = u;
  while (assigned_to.op() == Ops::BITCAST || assigned_to.op() == Ops::AFTER || assigned_to.op() == Ops::UNSHARD)
    assigned_to = assigned_to.src(0).base();
  if (assigned_to.op() != Ops::BUFFER) return contiguous_tagged(src, u.tag());
  return UOp();
}

UOp make_buffer_view(const UOp& src) {
  auto cv = contiguous_view(src);
  if (!cv) return UOp();
  const UOp& buf = cv->first;
  int64_t offset = cv->second;
  pyint size = src.max_numel() * src.element_size() / buf.element_size();
  if (buf.op() != Ops::BUFFER) return UOp();
  return buf.getitem({Index::slice(sint((pyint)offset), sint((pyint)offset + size))}).bitcast(src.dtype());
}

// MOPS(BUFFER) -> SHRINK when movement ops collapse to a contiguous range
UOp contiguous_mops_to_view(AllocCtx& ctx, const UOp& c, const UOp& src) {
  UOp buf = src.base();
  while (buf.op() == Ops::BITCAST) buf = buf.src(0).base();
  if (buf.op() != Ops::BUFFER && buf.op() != Ops::UNSHARD) return UOp();
  for (const sint& s : c.shape())
    if (!s.is_int()) return UOp();
  if (buf.op() == Ops::UNSHARD) return UOp();  // multi-device views are not supported
  UOp view = make_buffer_view(src);
  if (!view) return UOp();
  ctx.views.insert(view);
  view = view.reshape(c.shape());
  if (c.op() == Ops::COPY || c.op() == Ops::STORE) {
    std::vector<UOp> s(c.src().begin(), c.src().end());
    s[0] = view;
    return c.with_src(s);
  }
  return view;
}

// NOTE: adding rules to here is bad. these all need to run before the schedule cache
const PatternMatcher& pm_early_transform_tensor_graph() {
  static const OpSet movement_no_shrink_reshape = GroupOp::Movement - OpSet{Ops::SHRINK, Ops::RESHAPE};
  static const PatternMatcher pm(
      "pm_early_transform_tensor_graph",
      {
          // transform precompiled FUNCTIONs into CALLs: FUNCTION bodies are not supported by the C++ Tensor yet
          TG_RULE(UPat(Ops::FUNCTION).named("c"),
                  [](U c) -> UOp {
                    const CallInfo* ci = c.arg().as<CallInfo>();
                    if (ci && ci->precompile) throw Error("precompiled FUNCTIONs are not supported yet");
                    return UOp();
                  }),
          // resolve TUPLE+GETTUPLE (for precompiled calls)
          TG_RULE(UPat(Ops::GETTUPLE).src(UPat(Ops::TUPLE).named("t")).named("g"),
                  [](U g, U t) { return t.src((size_t)g.arg().as_int()); }),
          // fold MOPS+BITCAST over BUFFER into SHRINK when movement ops collapse to contiguous range
          TG_RULE(UPat(OpSet{Ops::COPY, Ops::CONTIGUOUS})
                      .src(UPat(GroupOp::Movement | OpSet{Ops::BITCAST}).named("src"))
                      .named("c"),
                  [](AllocCtx& ctx, U c, U src) { return contiguous_mops_to_view(ctx, c, src); }),
          TG_RULE(UPat(Ops::STORE).src(UPat(Ops::BITCAST).named("src"), UPat()).named("c").any_len(),
                  [](AllocCtx& ctx, U c, U src) { return contiguous_mops_to_view(ctx, c, src); }),
          // remove contiguous on movement ops before a copy on disk
          TG_RULE(UPat(movement_no_shrink_reshape).named("x").f(Ops::CONTIGUOUS).f(Ops::COPY).named("copy"),
                  [](U x, U copy) {
                    return starts_with_any(x.device(), {"DISK"}) ? copy.replace({}, {}, std::vector<UOp>{x}, {}, Arg())
                                                                 : UOp();
                  }),
          // push copy past movement ops to disk
          TG_RULE(UPat(movement_no_shrink_reshape).named("x").f(Ops::COPY).named("copy"),
                  [](U x, U copy) {
                    if (!starts_with_any(x.device(), {"DISK"})) return UOp();
                    std::vector<UOp> s(x.src().begin(), x.src().end());
                    s[0] = copy.replace({}, {}, std::vector<UOp>{x.src(0)}, {}, Arg());
                    return x.with_src(s);
                  }),
          // add CONTIGUOUS to tagged UOps
          TG_RULE(UPat(GroupOp::all() - OpSet{Ops::CONTIGUOUS, Ops::AFTER, Ops::STORE}).named("x"),
                  [](U x) {
                    if (x.tag().is_none()) return UOp();
                    if (tag_truthy(x.tag())) return contiguous_tagged(x.rtag(Arg()), x.tag());
                    return x.rtag(Arg());
                  }),
          // remove extra CONTIGUOUS on AFTER (only when target is contiguous)
          TG_RULE(
              UPat(Ops::CONTIGUOUS).src(UPat(Ops::AFTER).named("a")).named("c"),
              [](U a, U c) { return a.src(0).has_buffer_identity() ? a.rtag(tag_concat(a.tag(), c.tag())) : UOp(); }),
          // replace AFTER+STORE with CONTIGUOUS when target is not a buffer
          TG_RULE(UPat(Ops::AFTER).src(UPat(), UPat(Ops::STORE).src(UPat(), UPat::var("src"))).named("u"),
                  [](U u, U src) { return replace_store_after_with_contig(u, src); }),
          // replace CONTIGUOUS with STORE+AFTER
          TG_RULE(UPat(Ops::CONTIGUOUS).named("u"), [](U u) { return replace_contig_with_store_after(u); }),
          // remove DETACH/CONTIGUOUS_BACKWARD (allows more contiguous removal)
          TG_RULE(UPat(OpSet{Ops::DETACH, Ops::CONTIGUOUS_BACKWARD}).named("x"), [](U x) { return x.src(0); }),
      });
  return pm;
}

UOp finalize_after(AllocCtx& ctx, const UOp& x) {
  // bound Variables are call inputs, not assigns: they stay in the graph and pm_replace_buf turns them into call args
  if (x.is_bound_var()) return UOp();
  // untagged: record as an assign for the call body
  if (x.tag().is_none()) {
    ctx.assigns.push_back(x);
    return UOp();
  }
  // tagged: untag and map each original pre-rewrite UOp to the stripped buffer
  UOp ret = x.rtag(Arg());
  UOp replace_uop = ret;
  std::vector<UOp> views;
  static const OpSet walk = GroupOp::Movement | OpSet{Ops::UNSHARD, Ops::BITCAST, Ops::AFTER};
  while (walk.has(replace_uop.op())) {
    if (replace_uop.op() != Ops::AFTER) views.push_back(replace_uop);
    replace_uop = replace_uop.src(0);
  }
  for (auto it = views.rbegin(); it != views.rend(); ++it) {
    std::vector<UOp> s(it->src().begin(), it->src().end());
    s[0] = replace_uop;
    replace_uop = it->with_src(s);
  }
  if (x.tag().is_tuple())
    for (const Arg& t : x.tag().items()) {
      const UOp& original = ctx.uop_list.at((size_t)t.as_int());
      UOp v = replace_uop.shrink_to(OptShape(original.shape()));
      auto it = std::find_if(ctx.buffer_map.begin(), ctx.buffer_map.end(),
                             [&](const auto& kv) { return kv.first == original; });
      if (it != ctx.buffer_map.end())
        it->second = v;
      else
        ctx.buffer_map.emplace_back(original, v);
    }
  return ret;
}

const PatternMatcher& pm_finalize_call() {
  static const PatternMatcher pm(
      "pm_finalize_call",
      {
          TG_RULE(UPat(Ops::AFTER).named("x"), [](AllocCtx& ctx, U x) { return finalize_after(ctx, x); }),
          TG_RULE(UPat(Ops::COPY).named("x"),
                  [](AllocCtx& ctx, U x) {
                    if (disk_like(x)) ctx.assigns.push_back(x);
                    return UOp();
                  }),
      });
  return pm;
}

UOp replace_input_buffer(AllocCtx& ctx, const UOp& b) {
  ctx.replacements.push_back(b);
  int64_t slot = (int64_t)ctx.replacements.size() - 1;
  if (b.is_bound_var() || b.is_variable()) return uop_param_like(b, slot);
  return UOp::param(slot, b.dtype(), b.shape_opt(), b.device());
}

const PatternMatcher& pm_replace_buf() {
  static const PatternMatcher pm(
      "pm_replace_buf",
      {
          // replace BUFFER with PARAM for cache key normalization
          TG_RULE(UPat(Ops::BUFFER).src(UPat()).named("b"),
                  [](AllocCtx& ctx, U b) {
                    std::optional<AddrSpace> as = b.addrspace();
                    return b.param_arg() && as && *as == AddrSpace::GLOBAL ? replace_input_buffer(ctx, b) : UOp();
                  }),
          // replace SHRINK with PARAM
          TG_RULE(UPat(Ops::SHRINK).src(UPat(Ops::BUFFER)).named("b").any_len(),
                  [](AllocCtx& ctx, U b) { return ctx.views.count(b) ? replace_input_buffer(ctx, b) : UOp(); }),
          TG_RULE(UPat(Ops::BITCAST)
                      .src(UPat::any(UPat(Ops::SHRINK).src(UPat(Ops::BUFFER)).any_len(), UPat(Ops::BUFFER)))
                      .named("b"),
                  [](AllocCtx& ctx, U b) { return ctx.views.count(b) ? replace_input_buffer(ctx, b) : UOp(); }),
          // strip the stored value from bound Variables for cache key normalization, so different values hit same cache
          TG_RULE(UPat(Ops::AFTER).named("b"),
                  [](AllocCtx& ctx, U b) { return b.is_bound_var() ? replace_input_buffer(ctx, b) : UOp(); }),
      });
  return pm;
}

std::string pluralize(const std::string& st, size_t cnt) {
  return std::to_string(cnt) + " " + st + (cnt == 1 ? "" : "s");
}

}  // namespace

CallifyResult transform_to_call(const UOp& big_sink_in) {
  track::Group group("transform_to_call");
  AllocCtx ctx;
  // same predicate as Tensor.realize
  for (const UOp& x : big_sink_in.src()) {
    UOp base = x.base();
    std::optional<AddrSpace> as = base.addrspace();
    if (!uop_is_virtual(base) && !base.has_buffer_identity() && base.op() != Ops::AFTER &&
        !(as && *as == AddrSpace::ALU))
      ctx.bases.insert(base);
  }
  RewriteOpts o;
  o.ctx = CtxRef(&ctx);
  // this rewrite is "read-only", it adds simple things to buffer_map and may sink things on big_sink, bottom_up
  o.bottom_up = true, o.name = "number the uops";
  UOp big_sink = graph_rewrite(big_sink_in, add_tags(), o);
  // here we can break the tensor graph. this is the only place you need to maintain numbered tags
  o.bottom_up = false, o.name = "early transform tensor graph";
  big_sink = graph_rewrite(big_sink, pm_early_transform_tensor_graph(), o);
  // here we construct the final buffer_map: as-built nodes -> their final storage. values are never keys
  o.name = "finalize call";
  graph_rewrite(big_sink, pm_finalize_call(), o);
  o.bottom_up = true, o.name = "replace bufs";
  UOp body = graph_rewrite(UOp::sink(ctx.assigns), pm_replace_buf(), o);
  UOp ret = uop_call(body, ctx.replacements);
  group.rename("Callify " + pluralize("Buffer", ctx.buffer_map.size()));
  return CallifyResult{ret, std::move(ctx.buffer_map)};
}

}  // namespace tg
