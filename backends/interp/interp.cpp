#include "backends/interp/interp.h"

#include <cmath>
#include <cstring>
#include <memory>

#include "lib/codegen/late/program.h"
#include "lib/codegen/late/uop_props.h"

namespace tg::interp {

PyConst load_scalar(const uint8_t* p, DType dt) {
  using namespace dtypes;
  auto rd = [&](auto v) {
    std::memcpy(&v, p, sizeof(v));
    return v;
  };
  if (dt == bool_) return PyConst(p[0] != 0);
  if (dt == float32) return PyConst((double)rd(float()));
  if (dt == float64) return PyConst(rd(double()));
  if (dt == float16) return PyConst((double)rd(_Float16()));
  if (dt == bfloat16) {
    uint32_t u = (uint32_t)rd(uint16_t()) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return PyConst((double)f);
  }
  if (contains(fp8s, dt)) return PyConst(fp8_to_float(p[0], dt));
  if (dt == int8) return PyConst((pyint)rd(int8_t()));
  if (dt == uint8) return PyConst((pyint)rd(uint8_t()));
  if (dt == int16) return PyConst((pyint)rd(int16_t()));
  if (dt == uint16) return PyConst((pyint)rd(uint16_t()));
  if (dt == int32) return PyConst((pyint)rd(int32_t()));
  if (dt == uint32) return PyConst((pyint)rd(uint32_t()));
  if (dt == int64) return PyConst((pyint)rd(int64_t()));
  if (dt == uint64) return PyConst((pyint)rd(uint64_t()));
  throw InterpError("dtype=" + dt.repr() + " is not supported");
}

void store_scalar(uint8_t* p, DType dt, const PyConst& v) {
  using namespace dtypes;
  auto wr = [&](auto x) { std::memcpy(p, &x, sizeof(x)); };
  if (dt == bool_) return wr((uint8_t)v.truthy());
  if (dt == float32) return wr((float)v.as_float());
  if (dt == float64) return wr(v.as_float());
  if (dt == float16) return wr((_Float16)v.as_float());
  if (dt == bfloat16) {
    float f = (float)float_to_bf16(v.as_float());
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return wr((uint16_t)(u >> 16));
  }
  if (contains(fp8s, dt)) return wr((uint8_t)float_to_fp8(v.as_float(), dt));
  if (dt.itemsize() <= 8 && (dtypes::is_int(dt))) {
    uint64_t bits = (uint64_t)(unsigned __int128)v.as_int();
    std::memcpy(p, &bits, (size_t)dt.itemsize());  // little endian: the low bytes
    return;
  }
  throw InterpError("dtype=" + dt.repr() + " is not supported");
}

namespace {

// exec_alu, plus FDIV: python_alu has no FDIV (the PYTHON device never renders it), but the C-style renderers do, so
// the oracle of compiled kernels divides IEEE-style (x/0 is inf or nan, not a ZeroDivisionError)
PyConst alu(Ops op, DType dt, std::span<const PyConst> operands) {
  if (op == Ops::FDIV) {
    if (operands[0].is_invalid() || operands[1].is_invalid()) return PyConst::invalid();
    return truncate(dt, PyConst(operands[0].as_float() / operands[1].as_float()));
  }
  // values loaded at run time are plain python floats: nan != nan (exec_alu compares consts, where the reference's
  // ConstFloat makes nan == nan)
  if (op == Ops::CMPNE || op == Ops::CMPEQ) {
    for (const PyConst& x : operands.first(2))
      if (x.is_float() && std::isnan(x.f)) return PyConst(op == Ops::CMPNE);
  }
  return exec_alu(op, dt, operands);
}

struct Mem {
  uint8_t* data = nullptr;
  size_t nbytes = 0;
  std::unique_ptr<uint8_t[]> own;
};

struct Ptr {
  int mem = -1;
  int64_t off = 0;  // bytes
};

// the value of one UOp: per lane (W lanes), `numel` elements, element-major like the reference's nested lists
struct Val {
  bool set = false;
  bool is_ptr = false;
  int64_t numel = 1;
  std::vector<PyConst> s;  // [elem * W + lane]
  std::vector<Ptr> p;      // [lane]
};

struct Runner {
  const std::vector<UOp>& uops;
  const std::vector<std::vector<int>>& srcs;
  const std::vector<int>& loop_end;
  UOpMap<int> index;
  std::vector<Mem> mems;
  int W = 1;

  [[noreturn]] void fail(const UOp& u, const std::string& what) {
    throw InterpError(std::string(op_repr(u.op())) + " " + u.dtype().repr() + ": " + what);
  }
  uint8_t* addr(const UOp& u, const Ptr& p, int64_t extra, DType dt, const char* what) {
    if (p.mem < 0) fail(u, "access through a null pointer");
    Mem& m = mems[(size_t)p.mem];
    int64_t off = p.off + extra;
    if (off < 0 || off + dt.itemsize() > (int64_t)m.nbytes)
      fail(u, std::string(what) + " out of bounds, size is " + std::to_string(m.nbytes) +
                  " bytes and access is at byte " + std::to_string(off));
    return m.data + off;
  }
};

}  // namespace

Program::Program(std::vector<UOp> uops) : uops_(std::move(uops)) {
  UOpMap<int> index;
  for (size_t i = 0; i < uops_.size(); i++) index.emplace(uops_[i], (int)i);
  srcs_.resize(uops_.size());
  loop_end_.assign(uops_.size(), -1);
  for (size_t i = 0; i < uops_.size(); i++) {
    const UOp& u = uops_[i];
    for (const UOp& s : u.src()) {
      if (s.dtype() == dtypes::void_) continue;
      auto it = index.find(s);
      if (it == index.end()) throw InterpError(std::string(op_repr(u.op())) + " has a src that is not in the program");
      srcs_[i].push_back(it->second);
    }
    if (u.op() == Ops::END && u.nsrc() >= 2) {
      auto it = index.find(u.src(1));
      if (it == index.end()) throw InterpError("END of a RANGE that is not in the program");
      loop_end_[(size_t)it->second] = (int)i;
    }
  }
}

void Program::run(std::span<const BufferView> bufs, std::span<const std::optional<pyint>> vals,
                  const LaunchDims& dims) const {
  const size_t n = uops_.size();
  // warp: every local index, python's itertools.product over the reversed local size
  std::vector<std::array<int64_t, 3>> warp;
  for (int64_t a = 0; a < dims.local[2]; a++)
    for (int64_t b = 0; b < dims.local[1]; b++)
      for (int64_t c = 0; c < dims.local[0]; c++) warp.push_back({a, b, c});
  const int W = (int)warp.size();
  if (W == 0) return;
  std::vector<int> idx_of(n);
  UOpMap<int> index;
  for (size_t i = 0; i < n; i++) index.emplace(uops_[i], (int)i);
  AddrSpaceCache as;
  std::vector<std::optional<AddrSpace>> aspace(n);
  std::vector<pyint> numel(n, 1);
  for (size_t i = 0; i < n; i++) {
    aspace[i] = as.get(uops_[i]);
    if (uops_[i].shape_opt()) numel[i] = max_numel(uops_[i]);
  }

  for (int64_t g2 = 0; g2 < dims.global[2]; g2++)
    for (int64_t g1 = 0; g1 < dims.global[1]; g1++)
      for (int64_t g0 = 0; g0 < dims.global[0]; g0++) {
        const std::array<int64_t, 3> idxs{g2, g1, g0};
        Runner rr{uops_, srcs_, loop_end_, {}, {}, W};
        std::vector<Val> values(n);
        size_t next_buf = 0, next_val = 0;
        std::vector<std::vector<bool>> exec_masks{std::vector<bool>((size_t)W, true)};
        size_t i = 0;
        auto sv = [&](size_t k) -> Val& {  // the k-th non-void src value of the current uop
          Val& v = values[(size_t)srcs_[i][k]];
          if (!v.set) rr.fail(uops_[i], "src " + std::to_string(k) + " has no value");
          return v;
        };
        while (i < n) {
          const UOp& u = uops_[i];
          const Ops op = u.op();
          const size_t nsv = srcs_[i].size();
          Val& out = values[i];
          if (op == Ops::END) {
            if (u.nsrc() == 3) {
              // conditional backedge on a loop: jump back while the condition is true
              if (sv(nsv - 1).s[0].truthy())
                i = (size_t)index.at(u.src(1));
              else
                i++;
            } else {
              i = (size_t)index.at(u.src(1));
            }
            continue;
          }
          if (op == Ops::IF) {
            const Val& c = sv(0);
            std::vector<bool> m = exec_masks.back();
            for (int t = 0; t < W; t++) m[(size_t)t] = m[(size_t)t] && c.s[(size_t)t].truthy();
            exec_masks.push_back(std::move(m));
            i++;
            continue;
          }
          if (op == Ops::ENDIF) {
            exec_masks.pop_back();
            i++;
            continue;
          }
          if (op == Ops::BARRIER || op == Ops::SINK || op == Ops::NOOP || op == Ops::GROUP ||
              (op == Ops::RANGE && u.dtype() == dtypes::void_)) {
            // the warp is always in sync
            i++;
            continue;
          }
          if (op == Ops::STORE) {
            if (nsv != 2) rr.fail(u, "STORE must be lowered to 2 srcs, got " + std::to_string(nsv));
            const Val& ptr = sv(0);
            const Val& val = sv(1);
            DType dt = u.src(1).dtype();
            const auto& gate = exec_masks.back();
            int64_t cnt = numel[i] > 1 ? (int64_t)numel[i] : 1;
            for (int64_t j = 0; j < cnt; j++)
              for (int t = 0; t < W; t++)
                if (gate[(size_t)t])
                  store_scalar(rr.addr(u, ptr.p[(size_t)t], j * dt.itemsize(), dt, "store"), dt,
                               val.s[(size_t)(j * W + t)]);
            i++;
            continue;
          }
          if (op == Ops::RANGE) {
            if (!out.set) {
              out.set = true;
              out.s.assign((size_t)W, PyConst((pyint)0));
            } else {
              for (auto& x : out.s) x = PyConst(x.as_int() + 1);
            }
            if (out.s[0] == sv(0).s[0]) {
              out = Val();
              if (loop_end_[i] < 0) rr.fail(u, "RANGE without an END");
              i = (size_t)loop_end_[i] + 1;
            } else {
              i++;
            }
            continue;
          }
          // the result is written in place (its storage is reused across loop iterations; no src is the uop itself)
          Val& nv = out;
          nv.set = true;
          nv.is_ptr = false;
          nv.numel = 1;
          nv.s.clear();
          nv.p.clear();
          if (op == Ops::AFTER ||
              (op == Ops::BITCAST && (aspace[i] == AddrSpace::GLOBAL || aspace[i] == AddrSpace::LOCAL))) {
            nv = sv(0);
          } else if (op == Ops::PARAM && aspace[i] == AddrSpace::ALU) {
            if (next_val >= vals.size()) rr.fail(u, "not enough variable values");
            std::optional<pyint> v = vals[next_val++];
            pyint x = v ? *v : (pyint)idxs[2];  // core_id: the global index of dim 0
            nv.s.assign((size_t)W, PyConst(x));
          } else if (op == Ops::PARAM || op == Ops::BUFFER) {
            nv.is_ptr = true;
            int64_t nbytes = (int64_t)numel[i] * u.dtype().itemsize();
            auto alloc = [&]() {
              Mem m;
              m.own = std::make_unique<uint8_t[]>((size_t)nbytes);
              std::memset(m.own.get(), 0, (size_t)nbytes);
              m.data = m.own.get();
              m.nbytes = (size_t)nbytes;
              rr.mems.push_back(std::move(m));
              return Ptr{(int)rr.mems.size() - 1, 0};
            };
            if (op == Ops::BUFFER && aspace[i] == AddrSpace::REG) {
              // REGs are per thread
              for (int t = 0; t < W; t++) nv.p.push_back(alloc());
            } else if (op == Ops::BUFFER) {
              nv.p.assign((size_t)W, alloc());
            } else {
              if (next_buf >= bufs.size()) rr.fail(u, "not enough buffers");
              const BufferView& b = bufs[next_buf++];
              Mem m;
              m.data = static_cast<uint8_t*>(b.data);
              m.nbytes = b.count * (size_t)b.dtype.itemsize();
              rr.mems.push_back(std::move(m));
              nv.p.assign((size_t)W, Ptr{(int)rr.mems.size() - 1, 0});
            }
          } else if (op == Ops::SPECIAL) {
            const std::string& a = u.arg().as_str();
            int d = a.back() - '0';
            if (d < 0 || d > 2) rr.fail(u, "bad SPECIAL " + a);
            if (a.front() == 'g')
              nv.s.assign((size_t)W, PyConst((pyint)idxs[(size_t)(2 - d)]));
            else if (a.front() == 'l')
              for (int t = 0; t < W; t++) nv.s.push_back(PyConst((pyint)warp[(size_t)t][(size_t)(2 - d)]));
            else
              rr.fail(u, "SPECIAL " + a + " is not supported");
          } else if (op == Ops::CONST) {
            nv.s.assign((size_t)W, u.val());
          } else if (op == Ops::INDEX || op == Ops::SHRINK) {
            const Val& b = sv(0);
            const Val& o = sv(1);
            if (aspace[(size_t)srcs_[i][0]] == AddrSpace::ALU) {
              // lane access into a vector value
              for (int t = 0; t < W; t++) {
                pyint e = o.s[(size_t)t].as_int();
                if (e < 0 || e >= b.numel) rr.fail(u, "vector index out of range");
                nv.s.push_back(b.s[(size_t)(e * W + t)]);
              }
            } else {
              if (is_image_shape(u.src(0).shape_opt())) rr.fail(u, "image buffers are not supported");
              if (!b.is_ptr) rr.fail(u, "INDEX into a value that is not a buffer");
              nv.is_ptr = true;
              int64_t sz = u.src(0).dtype().itemsize();
              for (int t = 0; t < W; t++) {
                Ptr p = b.p[(size_t)t];
                p.off += (int64_t)o.s[(size_t)t].as_int() * sz;
                nv.p.push_back(p);
              }
            }
          } else if (op == Ops::STACK) {
            nv.numel = 0;
            for (size_t k = 0; k < nsv; k++) {
              const Val& x = sv(k);
              if (x.is_ptr) rr.fail(u, "STACK of pointers is not supported");
              nv.s.insert(nv.s.end(), x.s.begin(), x.s.end());
              nv.numel += x.numel;
            }
          } else if (op == Ops::BITCAST) {
            const Val& x = sv(0);
            DType in = u.src(0).dtype(), od = u.dtype();
            int64_t inb = x.numel * in.itemsize();
            if (inb % od.itemsize()) rr.fail(u, "unsupported size in bitcast");
            nv.numel = inb / od.itemsize();
            nv.s.resize((size_t)(nv.numel * W));
            std::vector<uint8_t> bytes((size_t)inb);
            for (int t = 0; t < W; t++) {
              for (int64_t e = 0; e < x.numel; e++)
                store_scalar(bytes.data() + e * in.itemsize(), in, x.s[(size_t)(e * W + t)]);
              for (int64_t e = 0; e < nv.numel; e++)
                nv.s[(size_t)(e * W + t)] = load_scalar(bytes.data() + e * od.itemsize(), od);
            }
          } else if (op == Ops::CAST) {
            const Val& x = sv(0);
            nv.numel = x.numel;
            for (const PyConst& c : x.s) nv.s.push_back(truncate(u.dtype(), u.dtype().const_(c)));
          } else if (op == Ops::LOAD) {
            const Val& ptr = sv(0);
            DType dt = u.dtype();
            int64_t cnt = numel[i] > 1 ? (int64_t)numel[i] : 1;
            nv.numel = cnt;
            nv.s.resize((size_t)(cnt * W));
            const Val* alt = nsv >= 3 ? &sv(1) : nullptr;
            const Val* gate = nsv >= 3 ? &sv(2) : nullptr;
            for (int64_t j = 0; j < cnt; j++)
              for (int t = 0; t < W; t++) {
                size_t k = (size_t)(j * W + t);
                if (gate && !gate->s[(size_t)t].truthy())
                  nv.s[k] = alt->s[alt->numel > 1 ? k : (size_t)t];
                else
                  nv.s[k] = load_scalar(rr.addr(u, ptr.p[(size_t)t], j * dt.itemsize(), dt, "load"), dt);
              }
          } else if (GroupOp::ALU.has(op)) {
            int64_t ne = 1;
            for (size_t k = 0; k < nsv; k++) ne = std::max(ne, sv(k).numel);
            for (size_t k = 0; k < nsv; k++)
              if (sv(k).numel != ne && sv(k).numel != 1) rr.fail(u, "shape mismatch between ALU operands");
            nv.numel = ne;
            std::vector<PyConst> operands(nsv);
            for (int64_t e = 0; e < ne; e++)
              for (int t = 0; t < W; t++) {
                for (size_t k = 0; k < nsv; k++) {
                  const Val& x = sv(k);
                  operands[k] = x.s[(size_t)((x.numel == 1 ? 0 : e) * W + t)];
                }
                nv.s.push_back(alu(op, u.dtype(), operands));
              }
          } else {
            rr.fail(u, "is not supported by the interpreter");
          }
          i++;
        }
      }
}

void run_program(const UOp& prg, std::span<const BufferView> bufs,
                 const std::unordered_map<std::string, pyint>& var_vals) {
  const ProgramInfo* info = prg.op() == Ops::PROGRAM ? prg.arg().as<ProgramInfo>() : nullptr;
  if (!info || prg.nsrc() < 2 || prg.src(1).op() != Ops::LINEAR)
    throw InterpError("run_program needs a PROGRAM with a ProgramInfo and a LINEAR");
  auto [g, l] = info->launch_dims(var_vals);
  LaunchDims dims;
  for (size_t i = 0; i < 3 && i < g.size(); i++) dims.global[i] = (int64_t)g[i];
  if (l)
    for (size_t i = 0; i < 3 && i < l->size(); i++) dims.local[i] = (int64_t)(*l)[i];
  std::vector<std::optional<pyint>> vals = info->vals(var_vals);
  Program(std::vector<UOp>(prg.src(1).src().begin(), prg.src(1).src().end())).run(bufs, vals, dims);
}

}  // namespace tg::interp
