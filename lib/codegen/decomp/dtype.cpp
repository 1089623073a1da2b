#include "lib/codegen/decomp/dtype.h"

#include <algorithm>
#include <cmath>

#include "lib/codegen/decomp/transcendental.h"
#include "lib/codegen/opt/opt.h"

namespace tg {

static PyConst I(pyint v) { return PyConst(v); }
static pyint ishl(pyint x, int y) { return x * ((pyint)1 << y); }
static bool is_fnuz(DType d) { return d == dtypes::fp8e4m3fnuz || d == dtypes::fp8e5m2fnuz; }
static DType f2f_dt(DType f) {
  switch (f.bitsize()) {
    case 8:
      return dtypes::uint8;
    case 16:
      return dtypes::uint16;
    case 32:
      return dtypes::uint32;
    case 64:
      return dtypes::uint64;
  }
  throw Error("no storage dtype for " + f.repr());
}

static UOp reindex(const UOp& idx, pyint off, pyint mul = 2) {
  if (idx.op() == Ops::SHRINK) {
    if (mul != 1) throw Error("can't reindex SHRINK with mul != 1");
    return idx.replace(Ops::INDEX, {}, std::vector<UOp>{idx.src(0), idx.src(1).add(I(off))});
  }
  std::vector<UOp> s{idx.src(0), idx.src(1).mul(I(mul)).add(I(off))};
  s.insert(s.end(), idx.src().begin() + 2, idx.src().end());
  return idx.with_src(s);
}

// round to nearest even: shr(v, s) + ((shr(v, s-1) & 1) & ((v & ((1 << (s-1)) - 1)).ne(0) | (shr(v, s) & 1)))
static UOp rne(const UOp& v, int s) {
  return shr(v, s) + shr(v, s - 1).bitwise_and(I(1)).bitwise_and(
                         v.bitwise_and(I(ishl(1, s - 1) - 1)).ne(I(0)).bitwise_or(shr(v, s).bitwise_and(I(1))));
}

UOp f2f_clamp(const UOp& val, DType dt, bool sat) {
  auto [e, m] = finfo(dt);
  pyint max_exp, max_man;
  if (is_fnuz(dt))
    max_exp = ishl(1, e) - 1, max_man = ishl(1, m) - 1;
  else if (dt == dtypes::fp8e4m3)
    max_exp = ishl(1, e) - 1, max_man = ishl(1, m) - 2;
  else
    max_exp = ishl(1, e) - 2, max_man = ishl(1, m) - 1;
  UOp mx = val.const_like(
      PyConst(std::pow(2.0, (double)(max_exp - exponent_bias(dt))) * (1.0 + (double)max_man / (double)ishl(1, m))));
  UOp satv = contains(dtypes::fp8s, dt) && sat ? mx : val.const_like(PyConst(INFINITY));
  // FIXME: CMPLT of nan is undefined
  return val.ne(val).where(val, val.lt(-mx).where(-satv, mx.lt(val).where(satv, val)));
}

UOp f2f(const UOp& v0, DType fr, DType to, bool sat) {
  int fs = fr.bitsize(), fb = exponent_bias(fr), ts = to.bitsize(), tb = exponent_bias(to);
  auto [fe, fm] = finfo(fr);
  auto [te, tm] = finfo(to);
  // NB: denormals are zero!
  if (fe <= te && fm < tm) {
    const UOp& v = v0;
    UOp sign = shl(v.bitwise_and(I(ishl(1, fs - 1))).cast(f2f_dt(to)), ts - fs);
    UOp nosign = v.bitwise_and(I(ishl(1, fs - 1) - 1)).cast(f2f_dt(to));
    UOp exp = shr(nosign, fm), norm = shl(nosign, tm - fm).add(I(ishl(tb - fb, tm)));
    UOp nan = shl(nosign, tm - fm).bitwise_or(I(ishl(ishl(1, te) - 1, tm)));
    if (is_fnuz(fr)) {
      UOp fnuz_nan = sign.ne(I(0)).bitwise_and(nosign.eq(I(0)));
      pyint qnan = ishl(ishl(1, te) - 1, tm) | ishl(1, tm - 1);
      // the fnuz bias can exceed the target's: exp in [1, fb-tb] lands below to's normal range and flushes
      return fnuz_nan.where(I(qnan), sign.bitwise_or(exp.lt(I(std::max(fb - tb, 0) + 1)).where(I(0), norm)))
          .bitcast(to);
    }
    // fp8e4m3 has only one nan
    UOp is_nan = fr == dtypes::fp8e4m3 ? nosign.eq(I(ishl(1, fm + fe) - 1)) : exp.eq(I(ishl(1, fe) - 1));
    return sign.bitwise_or(exp.eq(I(0)).where(I(0), is_nan.where(nan, norm))).bitcast(to);
  }
  if (fe >= te && fm > tm) {
    UOp v = f2f_clamp(v0.bitcast(fr), to, sat).bitcast(f2f_dt(fr));
    UOp sign = shr(v, fs - ts).bitwise_and(I(ishl(1, ts - 1))), nosign = v.bitwise_and(I(ishl(1, fs - 1) - 1));
    UOp norm = rne(nosign, fm - tm).sub(I(ishl(fb - tb, tm))).cast(f2f_dt(to));
    UOp underflow = shr(v, fm).bitwise_and(I(ishl(1, fe) - 1)).lt(I(1 + fb - tb));
    UOp nan_mantissa =
        to == dtypes::fp8e4m3 ? UOp::const_(I(ishl(1, tm) - 1)) : shr(nosign, fm - tm).bitwise_and(I(ishl(1, tm) - 1));
    UOp nan = (to == dtypes::fp8e4m3 ? sign.bitwise_or(I(ishl(1, tm) - 1)) : sign.bitwise_or(nan_mantissa))
                  .bitwise_or(I(ishl(ishl(1, te) - 1, tm)))
                  .cast(f2f_dt(to));
    UOp is_nan = shr(v, fm).bitwise_and(I(ishl(1, fe) - 1)).eq(I(ishl(1, fe) - 1));
    if (is_fnuz(to))
      return is_nan.where(I(ishl(1, ts - 1)), underflow.where(I(0), sign.cast(f2f_dt(to)).bitwise_or(norm)));
    return is_nan.where(nan, sign.cast(f2f_dt(to)).bitwise_or(underflow.where(I(0), norm)));
  }
  throw Error("unsupported decomp " + fr.repr() + " -> " + to.repr());
}

static UOp float_decomp_rewrite(const UOp& x, const FloatDecompCtx& ctx) {
  FloatDecompCtx c = ctx;
  return graph_rewrite(x, pm_float_decomp(), {.ctx = &c, .bottom_up = true});
}

static UOp f2f_load(const UOp& x, DType fr, DType to) {
  UOp storage_idx = float_decomp_rewrite(x.src(0), {fr, to});
  std::vector<UOp> rest(x.src().begin() + 1, x.src().end());
  pyint n = x.max_numel();
  if (n == 1) return f2f(storage_idx.load(rest), fr, to);
  std::vector<UOp> s;
  for (pyint i = 0; i < n; i++) s.push_back(f2f(reindex(storage_idx, i, 1).load(rest), fr, to));
  return UOp(Ops::STACK, DType(), s);
}

static UOp f2f_store(const UOp& st, const UOp& idx, const UOp& val, DType fr, DType to) {
  pyint n = val.max_numel();
  if (n == 1) return st.with_src({idx, f2f(val.bitcast(f2f_dt(to)), to, fr)});
  std::vector<UOp> s;
  for (pyint i = 0; i < n; i++)
    s.push_back(st.with_src({reindex(idx, i, 1), f2f(val.index(UOp::const_(I(i))).bitcast(f2f_dt(to)), to, fr)}));
  return UOp::group(s);
}

const PatternMatcher& pm_float_decomp() {
  static const PatternMatcher pm(
      "pm_float_decomp",
      {
          TG_RULE(UPat(GroupOp::Defines).named("x"),
                  [](const FloatDecompCtx& ctx, U x) {
                    if (x.dtype() != ctx.fr) return UOp();
                    auto* p = new ParamArg(*x.param_arg());
                    p->dtype = f2f_dt(ctx.fr);
                    return UOp(x.op(), DType(), std::vector<UOp>(x.src().begin(), x.src().end()),
                               Arg(static_cast<const ArgObj*>(p)), Arg(ctx.fr));
                  }),
          TG_RULE(UPat(ops(Ops::INDEX, Ops::SHRINK)).named("x"),
                  [](const FloatDecompCtx& ctx, U x) {
                    if (x.dtype() != ctx.fr ||
                        (x.op() == Ops::INDEX && (x.src(0).op() == Ops::LOAD || x.src(0).op() == Ops::STACK)))
                      return UOp();
                    std::vector<UOp> s{float_decomp_rewrite(x.src(0), ctx)};
                    s.insert(s.end(), x.src().begin() + 1, x.src().end());
                    return UOp(x.op(), DType(), s, x.arg(), Arg(ctx.fr));
                  }),
          TG_RULE(
              UPat(Ops::LOAD).dtype(dtypes::floats).named("x"),
              [](const FloatDecompCtx& ctx, U x) { return x.dtype() == ctx.fr ? f2f_load(x, ctx.fr, ctx.to) : UOp(); }),
          // bitcasted load should just replace load
          TG_RULE(UPat(Ops::BITCAST).src(UPat(Ops::LOAD).named("ld")).named("bc"),
                  [](const FloatDecompCtx& ctx, U bc, U ld) {
                    if (ld.dtype() != ctx.fr) return UOp();
                    std::vector<UOp> rest(ld.src().begin() + 1, ld.src().end());
                    return float_decomp_rewrite(ld.src(0), ctx).load(rest).bitcast(bc.dtype());
                  }),
          // bitcast from
          TG_RULE(UPat(Ops::BITCAST).src(UPat::var("x", dtypes::floats)).named("bc"),
                  [](const FloatDecompCtx& ctx, U bc, U x) {
                    if (x.dtype() != ctx.to || bc.dtype().bitsize() != ctx.fr.bitsize()) return UOp();
                    return bc.with_src({f2f(x.bitcast(f2f_dt(ctx.to)), ctx.to, ctx.fr)});
                  }),
          // bitcast to
          TG_RULE(UPat(Ops::BITCAST).src(UPat::var("x")).named("bc"),
                  [](const FloatDecompCtx& ctx, U bc, U x) {
                    return bc.dtype() == ctx.fr ? f2f(x.bitcast(f2f_dt(ctx.fr)), ctx.fr, ctx.to) : UOp();
                  }),
          TG_RULE(UPat(Ops::CAST).dtype(dtypes::floats).src(UPat::var("val")).named("x"),
                  [](const FloatDecompCtx& ctx, U x, U val) {
                    return x.dtype() == ctx.fr ? f2f_clamp(val.cast(ctx.to), ctx.fr) : UOp();
                  }),
          // a CONST has no srcs to cast, it restates its value at the emulating dtype
          TG_RULE(UPat(Ops::CONST).dtype(dtypes::floats).named("x"),
                  [](const FloatDecompCtx& ctx, U x) {
                    return x.dtype() == ctx.fr ? UOp::const_(x.val(), ctx.to) : UOp();
                  }),
          TG_RULE(UPat(GroupOp::all() - GroupOp::Defines - OpSet{Ops::CAST, Ops::BITCAST, Ops::CONST})
                      .dtype(dtypes::floats)
                      .named("x"),
                  [](const FloatDecompCtx& ctx, U x) {
                    if (x.dtype() != ctx.fr) return UOp();
                    std::vector<UOp> s;
                    for (const UOp& y : x.src()) s.push_back(y.dtype() == ctx.fr ? y.cast(ctx.to) : y);
                    return UOp(x.op(), DType(), s, x.arg(), x.tag());
                  }),
          TG_RULE(
              UPat(Ops::STORE).src(UPat::var("idx"), UPat(Ops::BITCAST).dtype(dtypes::floats).named("val")).named("st"),
              [](const FloatDecompCtx& ctx, U st, U idx, U val) {
                if (val.dtype() != ctx.fr || !(idx.tag().is_dtype() && idx.tag().as_dtype() == ctx.fr)) return UOp();
                return st.with_src({idx, val.src(0).bitcast(f2f_dt(ctx.fr))});
              }),
          TG_RULE(UPat(Ops::STORE).src(UPat::var("idx"), UPat::var("val", dtypes::floats)).named("st"),
                  [](const FloatDecompCtx& ctx, U st, U idx, U val) {
                    if (val.dtype() != ctx.to) return UOp();
                    UOp i = idx.op() == Ops::CAST ? idx.src(0) : idx;
                    if (!(i.tag().is_dtype() && i.tag().as_dtype() == ctx.fr)) return UOp();
                    return f2f_store(st, i, val, ctx.fr, ctx.to);
                  }),
      });
  return pm;
}

static std::vector<DType> emulated_dtypes() {
  std::vector<DType> r;
  std::string s = getenv_str("EMULATED_DTYPES", "");
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string::npos) j = s.size();
    if (j > i) r.push_back(dtypes::by_name(s.substr(i, j - i)));
    i = j + 1;
  }
  return r;
}

static UOp do_dtype_decomps(const UOp& sink0, DtypeDecompCtx& ctx) {
  auto sup = ctx.ren->supported_dtypes();
  auto emu = emulated_dtypes();
  auto should_emulate = [&](DType dt) { return contains(emu, dt) || !contains(sup, dt); };
  std::vector<DType> frs;
  for (DType d : ctx.seen)
    if (should_emulate(d)) frs.push_back(d);
  std::sort(frs.begin(), frs.end());
  UOp sink = sink0;
  for (DType fr : frs) {
    DType to = fr == dtypes::int64                                           ? dtypes::int32
               : !should_emulate(dtypes::half) && contains(dtypes::fp8s, fr) ? dtypes::half
                                                                             : dtypes::float32;
    std::string name = "decomp " + fr.repr() + " -> " + to.repr();
    if (dtypes::is_float(fr)) {
      FloatDecompCtx c{fr, to};
      sink = graph_rewrite(sink, pm_float_decomp(), {.ctx = &c, .bottom_up = true, .name = name.c_str()});
    } else {
      throw Error("long decomposition (pm_long_decomp) is not ported: " + name);
    }
  }
  ctx.seen.clear();
  return sink;
}

const PatternMatcher& pm_dtype_decomps() {
  static const PatternMatcher pm = [] {
    DTypes dts = dtypes::fp8s;
    for (DType d : {dtypes::bfloat16, dtypes::half, dtypes::int64, dtypes::uint64}) dts.push_back(d);
    return PatternMatcher("pm_dtype_decomps",
                          {
                              // detect dtypes to decompose
                              TG_RULE(UPat(GroupOp::all()).dtype(dts).named("x"),
                                      [](DtypeDecompCtx& ctx, U x) {
                                        DType dt = x.dtype() == dtypes::uint64 ? dtypes::int64 : x.dtype();
                                        if (!contains(ctx.seen, dt)) ctx.seen.push_back(dt);
                                        return UOp();
                                      }),
                              // do the rewrites
                              TG_RULE(UPat(Ops::SINK).named("sink"),
                                      [](DtypeDecompCtx& ctx, U sink) { return do_dtype_decomps(sink, ctx); }),
                          });
  }();
  return pm;
}

}  // namespace tg
