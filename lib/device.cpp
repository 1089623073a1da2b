#include "lib/device.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "lib/diskcache.h"

namespace tg {

void* Allocator::alloc(size_t size, const BufferSpec& options) {
  if (size == 0) throw DeviceError("alloc size must be positive, getting 0 (device " + device + ")");
  try {
    void* p = alloc_impl(size, options);
    if (p == nullptr) throw DeviceError("allocator returned no buffer");
    return p;
  } catch (const std::exception& e) {
    throw DeviceError("Allocation of " + std::to_string(size) + " bytes failed on " + device + ": " + e.what());
  }
}

void Allocator::free(void* opaque, size_t size, const BufferSpec& options) {
  if (opaque != nullptr) free_impl(opaque, size, options);
}

void* Allocator::offset(void*, size_t, size_t) { throw DeviceError("need offset (device " + device + ")"); }

uint64_t Allocator::max_buffer_bytes() const { return host_memory_bytes(); }

uint64_t host_memory_bytes() {
  static const uint64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : UINT64_MAX;
  }();
  return bytes;
}

static std::string human_bytes(unsigned __int128 b) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = (double)b;
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, u++;
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

void check_buffer_fits(const std::string& device, pyint numel, DType dtype) {
  if (numel <= 0) return;
  // saturates: 2^100 elements are as impossible as 2^64
  unsigned __int128 n = numel > ((pyint)1 << 100) ? (unsigned __int128)1 << 100 : (unsigned __int128)numel;
  unsigned __int128 bytes = n * (unsigned __int128)std::max<int64_t>(dtype.itemsize(), 1);
  if (bytes <= ((unsigned __int128)1 << 30) || !device_registered(device)) return;
  uint64_t limit = get_device(device).allocator().max_buffer_bytes();
  if (bytes > limit)
    throw DeviceError("a buffer of " + pyint_str(numel) + " " + dtype.repr() + " (" + human_bytes(bytes) +
                      ") does not fit on " + canonicalize_device(device) + ", which holds at most " +
                      human_bytes(limit));
}

// ***** LRUAllocator *****

namespace {
bool lru_cacheable(const BufferSpec& o) { return !o.nolru && !o.zero && !o.external_ptr && getenv_int("LRU", 1) != 0; }
}  // namespace

void* LRUAllocator::alloc_impl(size_t size, const BufferSpec& options) {
  if (lru_cacheable(options)) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = cache_.find(Key{size, options.uncached, options.cpu_access, options.host});
    if (it != cache_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      return p;
    }
  }
  try {
    return lru_alloc(size, options);
  } catch (const std::exception&) {
    free_cache();
    return lru_alloc(size, options);
  }
}

void LRUAllocator::free_impl(void* opaque, size_t size, const BufferSpec& options) {
  if (lru_cacheable(options)) {
    std::lock_guard<std::mutex> lk(mu_);
    cache_[Key{size, options.uncached, options.cpu_access, options.host}].push_back(opaque);
    return;
  }
  lru_free(opaque, size, options);
}

void LRUAllocator::free_cache() {
  std::map<Key, std::vector<void*>> cache;
  {
    std::lock_guard<std::mutex> lk(mu_);
    cache.swap(cache_);
  }
  for (auto& [k, bufs] : cache) {
    BufferSpec o;
    o.uncached = std::get<1>(k), o.cpu_access = std::get<2>(k), o.host = std::get<3>(k);
    for (void* p : bufs) lru_free(p, std::get<0>(k), o);
  }
}

size_t LRUAllocator::cached_buffers() const {
  std::lock_guard<std::mutex> lk(mu_);
  size_t n = 0;
  for (const auto& [k, v] : cache_) n += v.size();
  return n;
}

std::shared_ptr<const std::vector<uint8_t>> Compiler::compile_cached(const std::string& src) {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (auto it = cache_.find(src); it != cache_.end()) {
      hits_++;
      return it->second;
    }
  }
  // then the disk cache (table: the compiler's cachekey, key: the source), then compile; outside the lock: two
  // threads may compile the same source, the first result is kept
  std::shared_ptr<const std::vector<uint8_t>> lib;
  // CCACHE=0 is the reference's switch (helpers.CCACHE); DISABLE_COMPILER_CACHE=1 its older spelling
  bool use_disk = !cachekey.empty() && getenv_int("CCACHE", 1) != 0 && !getenv_int("DISABLE_COMPILER_CACHE", 0);
  if (use_disk)
    if (std::optional<std::string> hit = diskcache_get(cachekey, src)) {
      lib = std::make_shared<const std::vector<uint8_t>>(hit->begin(), hit->end());
      std::lock_guard<std::mutex> lk(mu_);
      disk_hits_++;
    }
  if (!lib) {
    if (getenv_int("ASSERT_COMPILE", 0)) throw CompileError("tried to compile with ASSERT_COMPILE set\n" + src);
    lib = std::make_shared<const std::vector<uint8_t>>(compile(src));
    if (use_disk) diskcache_put(cachekey, src, std::string(lib->begin(), lib->end()));
  }
  std::lock_guard<std::mutex> lk(mu_);
  return cache_.emplace(src, std::move(lib)).first->second;
}

size_t Compiler::disk_hits() const {
  std::lock_guard<std::mutex> lk(mu_);
  return disk_hits_;
}

size_t Compiler::cache_size() const {
  std::lock_guard<std::mutex> lk(mu_);
  return cache_.size();
}

size_t Compiler::cache_hits() const {
  std::lock_guard<std::mutex> lk(mu_);
  return hits_;
}

std::shared_ptr<Program> Compiled::compile(const std::string& src, const std::string& name) {
  auto key = std::make_pair(name, src);
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (auto it = programs_.find(key); it != programs_.end()) return it->second;
  }
  auto lib = compiler().compile_cached(src);
  std::shared_ptr<Program> prg = runtime(name, *lib);
  std::lock_guard<std::mutex> lk(mu_);
  return programs_.emplace(std::move(key), std::move(prg)).first->second;
}

namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, DeviceFactory> factories;
  std::map<std::string, std::unique_ptr<Compiled>> opened;
};
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: devices may be used by other static destructors
  return *r;
}
std::string upper(std::string s) {
  for (char& c : s) c = (char)std::toupper((unsigned char)c);
  return s;
}
}  // namespace

void register_device(const std::string& name, DeviceFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.factories.emplace(upper(name), std::move(factory));
}

bool device_registered(const std::string& name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  return r.factories.count(upper(name.substr(0, name.find(':')))) != 0;
}

std::vector<std::string> registered_devices() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  std::vector<std::string> out;
  for (const auto& [k, v] : r.factories) out.push_back(k);
  return out;
}

std::string canonicalize_device(const std::string& device) {
  size_t colon = device.find(':');
  std::string d = upper(device.substr(0, colon)) + (colon == std::string::npos ? "" : device.substr(colon));
  if (d.size() >= 2 && d.compare(d.size() - 2, 2, ":0") == 0) d.resize(d.size() - 2);
  return d;
}

Compiled& get_device(const std::string& device) {
  std::string name = canonicalize_device(device);
  Registry& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  if (auto it = r.opened.find(name); it != r.opened.end()) return *it->second;
  auto f = r.factories.find(name.substr(0, name.find(':')));
  if (f == r.factories.end()) {
    std::string known;
    for (const auto& [k, v] : r.factories) known += (known.empty() ? "" : ", ") + k;
    throw DeviceError("no backend registered device " + name + " (registered: " + (known.empty() ? "none" : known) +
                      "); link its backend library and call its register function, e.g. tg::cpu::register_device()");
  }
  std::unique_ptr<Compiled> dev = f->second(name);
  return *r.opened.emplace(name, std::move(dev)).first->second;
}

}  // namespace tg
