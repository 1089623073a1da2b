// Port of device.py's Buffer and of uop/ops.py's UOp -> Buffer association (`buffers`, UOp.buffer, realized,
// contiguous_view).
#include <atomic>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "lib/device.h"
#include "lib/schedule/indexing.h"
#include "lib/schedule/rangeify.h"
#include "lib/uop/rewrite.h"
#include "lib/uop/symbolic.h"
#include "lib/uop/upat.h"
#include "profiler/profile.h"

namespace tg {

// ***** Buffer *****

static uint64_t next_trace_num() {
  static std::atomic<uint64_t> n{0};
  return ++n;
}

// Buffer.profile_events: the alloc/free point events of the memory lane (PROFILE)
static void profile_buffer(const Buffer& b, ProfilePointEvent::Kind kind) {
  if (!profile::enabled()) return;
  ProfilePointEvent e;
  e.kind = kind, e.device = b.device, e.ts_ns = now_ns(), e.buffer = b.trace_num;
  e.dtype = b.dtype.name(), e.size = b.size, e.nbytes = b.nbytes();
  profile::emit(std::move(e));
}

Buffer::Buffer(const std::string& device, size_t size, DType dtype, BufferSpec options, std::shared_ptr<Buffer> base,
               size_t offset)
    : device(canonicalize_device(device)),
      size(size),
      dtype(dtype),
      options(std::move(options)),
      offset(offset),
      trace_num(next_trace_num()),
      base_(std::move(base)) {
  if (base_) {
    if (base_->base_) throw DeviceError("Buffer: a base can't have a base");
    if (base_->device != this->device) throw DeviceError("Buffer: a view must be on its base's device");
  } else if (offset != 0) {
    throw DeviceError("Buffer: base buffers can't have an offset");
  }
}

Buffer::~Buffer() {
  if (opaque_ != nullptr) {
    try {
      deallocate();
    } catch (...) {
    }
  }
}

Allocator& Buffer::allocator() const { return allocator_ ? *allocator_ : get_device(device).allocator(); }

Buffer& Buffer::allocate(void* opaque, std::optional<uintptr_t> external_ptr) {
  if (is_initialized()) throw DeviceError("can't allocate already allocated buffer " + repr());
  if (DEBUG >= 7) std::printf("buffer: allocate %zu bytes on %s\n", nbytes(), device.c_str());
  allocator_ = &get_device(device).allocator();
  if (external_ptr) options.external_ptr = external_ptr;
  if (base_) {
    base_->ensure_allocated();
    opaque_ = allocator_->offset(base_->opaque_, nbytes(), offset);
  } else if (opaque != nullptr) {
    opaque_ = opaque;
  } else {
    opaque_ = allocator_->alloc(std::max<size_t>(nbytes(), 1), options);
    if (!options.external_ptr) {
      add_mem_used(device, (int64_t)nbytes());
      counted_ = true;
    }
  }
  if (!base_) profile_buffer(*this, ProfilePointEvent::Kind::alloc);
  return *this;
}

void Buffer::deallocate() {
  if (opaque_ == nullptr) throw DeviceError("buffer must be allocated to deallocate");
  if (DEBUG >= 7) std::printf("buffer: deallocate %zu bytes on %s\n", nbytes(), device.c_str());
  if (!base_) {
    if (counted_) add_mem_used(device, -(int64_t)nbytes());
    profile_buffer(*this, ProfilePointEvent::Kind::free);
    if (!options.external_ptr) allocator_->free(opaque_, std::max<size_t>(nbytes(), 1), options);
  }
  opaque_ = nullptr, counted_ = false;
}

void Buffer::copyin(std::span<const uint8_t> src) {
  if (src.size() != nbytes())
    throw DeviceError("copyin size mismatch: " + std::to_string(src.size()) + " bytes into " + repr());
  ensure_allocated();
  if (nbytes()) allocator().copyin(opaque_, src);
}

void Buffer::copyout(std::span<uint8_t> dest) {
  if (dest.size() != nbytes())
    throw DeviceError("copyout size mismatch: " + std::to_string(dest.size()) + " bytes from " + repr());
  if (!is_initialized()) throw DeviceError("copyout of an unallocated buffer " + repr());
  if (nbytes()) allocator().copyout(dest, opaque_);
}

std::vector<uint8_t> Buffer::as_bytes() {
  std::vector<uint8_t> out(nbytes());
  copyout(out);
  return out;
}

Buffer& Buffer::copy_from(Buffer& src) {
  if (nbytes() != src.nbytes())
    throw DeviceError("copy size mismatch, " + std::to_string(nbytes()) + " != " + std::to_string(src.nbytes()));
  copyin(src.as_bytes());
  return *this;
}

std::shared_ptr<Buffer> Buffer::view(size_t vsize, DType vdtype, size_t voffset) {
  if (voffset >= nbytes() && nbytes() != 0) throw DeviceError("offset must be less than nbytes");
  Buffer& b = base();
  return std::make_shared<Buffer>(device, vsize, vdtype, BufferSpec{}, b.shared_from_this(), offset + voffset);
}

std::string Buffer::repr() const {
  std::string r = "<buf real:" + std::string(is_allocated() ? "True" : "False") + " device:" + device +
                  " size:" + std::to_string(size) + " dtype:" + dtype.repr();
  if (base_) r += " offset:" + std::to_string(offset);
  return r + ">";
}

std::string default_device() {
  std::string dev = getenv_str("DEV", "");
  if (dev.empty()) return "CPU";
  size_t c = dev.find(':');
  return canonicalize_device(c == std::string::npos ? dev : dev.substr(0, c));
}

std::string canonicalize_device_or_default(const std::string& device) {
  return device.empty() ? default_device() : canonicalize_device(device);
}

// ***** buffers: UOp -> Buffer *****

namespace {
struct BufferTable {
  std::recursive_mutex mu;
  std::unordered_map<UOp, std::shared_ptr<Buffer>, UOpHash> m;
};
BufferTable& table() {
  static BufferTable* t = new BufferTable();  // never destroyed: UOps may die in other static destructors
  return *t;
}
// ctx is the source UOp a contiguous view is searched for (pm_contiguous_view_offset); a rule parameter of type UOp
// is a binding, so the ctx is wrapped
struct ViewCtx {
  UOp src;
};
const PatternMatcher& pm_contiguous_view_offset() {
  static const PatternMatcher pm(
      "pm_contiguous_view_offset",
      {
          // normalize to 1d bitcasts
          TG_RULE(UPat(Ops::BITCAST).named("b"),
                  [](U b) {
                    return b.shape().size() != 1 ? b.src(0).flatten().bitcast(b.dtype()).reshape(b.shape()) : UOp();
                  }),
          TG_RULE(UPat(Ops::BITCAST).named("b").index(UPat::cvar("c")),
                  [](const ViewCtx& ctx, U b, U c) {
                    if (b.tag().is_none()) return UOp();
                    int64_t osz = b.element_size(), isz = b.src(0).element_size();
                    sint n = ctx.src.numel();
                    sint m = n.is_int() ? sint(n.i() * osz / isz) : sint(n.u().mul((pyint)osz).floordiv((pyint)isz));
                    return b.src(0).flatten().index(UOp::range(m, 0) + c.mul((pyint)osz).floordiv((pyint)isz));
                  }),
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("b")), [](U b) { return b.rtag().index(UOp::const_(PyConst(0))); }),
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("b"), UPat(Ops::RANGE)),
                  [](U b) { return b.rtag().index(UOp::const_(PyConst(0))); }),
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("b"), UPat(Ops::RANGE) + UPat::cvar("c")),
                  [](U b, U c) { return b.rtag().index(c); }),
          TG_RULE(UPat(Ops::INDEX).src(UPat::var("b"), UPat::cvar("c")),
                  [](const ViewCtx& ctx, U b, U c) {
                    sint n = ctx.src.numel();
                    return n.is_int() && n.i() == 1 ? b.rtag().index(c) : UOp();
                  }),
      });
  return pm;
}
}  // namespace

std::optional<std::pair<UOp, int64_t>> contiguous_view(const UOp& self) {
  Arg dev = self.device();
  auto no_views = [](const std::string& d) { return d.rfind("WEBGPU", 0) == 0 || d.rfind("CL", 0) == 0; };
  if (dev.is_str() && no_views(dev.as_str())) return std::nullopt;
  if (dev.is_tuple())
    for (const Arg& d : dev.items())
      if (no_views(d.as_str())) return std::nullopt;
  UOp idx = self.flatten().index(UOp::range(self.numel(), 0));
  static const PatternMatcher pm = pm_mops() + symbolic() + pm_contiguous_view_offset();
  RewriteOpts o;
  ViewCtx vctx{self};
  o.ctx = CtxRef(&vctx);
  o.name = "contiguous_view_offset";
  UOp out = graph_rewrite(idx, pm, o);
  if (out.op() != Ops::INDEX || out.nsrc() < 2) return std::nullopt;
  const UOp& b = out.src(0);
  const UOp& c = out.src(1);
  if (b.tag().is_none() || (b.tag().is_bool() && !b.tag().as_bool()) || c.op() != Ops::CONST || !c.arg().is_int())
    return std::nullopt;
  return std::make_pair(b.rtag(Arg()), (int64_t)c.arg().as_int());
}

std::shared_ptr<Buffer> uop_buffer_get(const UOp& u) {
  BufferTable& t = table();
  std::lock_guard<std::recursive_mutex> lk(t.mu);
  auto it = t.m.find(u);
  return it == t.m.end() ? nullptr : it->second;
}

void uop_set_buffer(const UOp& u, std::shared_ptr<Buffer> b) {
  BufferTable& t = table();
  std::lock_guard<std::recursive_mutex> lk(t.mu);
  if (u.op() == Ops::BUFFER) b->base().uop_refcount++;
  auto [it, fresh] = t.m.emplace(u, b);
  if (!fresh) {
    if (u.op() == Ops::BUFFER) it->second->base().uop_refcount--;
    it->second = std::move(b);
  }
}

std::shared_ptr<Buffer> uop_buffer(const UOp& self) {
  switch (self.op()) {
    case Ops::CONTIGUOUS:
    case Ops::CONTIGUOUS_BACKWARD:
    case Ops::RESHAPE:
    case Ops::UNSHARD:
    case Ops::DETACH:
    case Ops::AFTER:
      return uop_buffer(self.src(0));
    default:
      break;
  }
  if (!(self == self.base()) || self.op() == Ops::BITCAST) {
    if (auto c = uop_buffer_get(self)) return c;
    auto cv = contiguous_view(self);
    if (!cv) {
      Arg d = self.device();
      throw Error("non-contiguous view is not supported for " + (d.is_str() ? d.as_str() : d.repr()) + " buffer");
    }
    std::shared_ptr<Buffer> buf = uop_buffer(cv->first.base());
    auto ret = buf->view((size_t)self.max_numel(), self.dtype(), (size_t)cv->second * cv->first.dtype().itemsize());
    uop_set_buffer(self, ret);
    return ret;
  }
  if (self.op() != Ops::BUFFER) throw Error("UOp.buffer: must be BUFFER, got " + std::string(op_name(self.op())));
  if (auto c = uop_buffer_get(self)) return c;
  Arg dev = self.device();
  if (!dev.is_str()) throw Error("UOp.buffer: multi-device buffers are not supported");
  auto ret = std::make_shared<Buffer>(dev.as_str(), (size_t)self.max_numel(), self.dtype());
  uop_set_buffer(self, ret);
  return ret;
}

std::shared_ptr<Buffer> uop_realized(const UOp& self) {
  if (self.op() == Ops::UNSHARD) return uop_realized(self.src(0));
  if (self.op() != Ops::BUFFER) return nullptr;
  auto as = self.addrspace();
  if (as && (*as == AddrSpace::LOCAL || *as == AddrSpace::REG || *as == AddrSpace::ALU)) return nullptr;
  auto b = uop_buffer_get(self);
  if (!b) return nullptr;
  return b->is_allocated() ? b : nullptr;
}

bool uop_is_realized(const UOp& u) { return uop_realized(u.base()) != nullptr; }

bool uop_base_buffer_is_realized(const UOp& self) {
  UOp u = self.base();
  while (u.op() == Ops::AFTER) u = u.src(0);
  return uop_is_realized(u);
}

size_t collect_buffers() {
  BufferTable& t = table();
  std::lock_guard<std::recursive_mutex> lk(t.mu);
  size_t dropped = 0;
  for (bool again = true; again;) {
    again = false;
    for (auto it = t.m.begin(); it != t.m.end();) {
      if (it->first.node()->rc.load(std::memory_order_acquire) == 1) {
        if (it->first.op() == Ops::BUFFER) it->second->base().uop_refcount--;
        it = t.m.erase(it);
        dropped++, again = true;
      } else {
        ++it;
      }
    }
  }
  return dropped;
}

size_t live_buffer_count() {
  BufferTable& t = table();
  std::lock_guard<std::recursive_mutex> lk(t.mu);
  return t.m.size();
}

}  // namespace tg
