#include "profiler/profile.h"

#include <atomic>
#include <chrono>

namespace tg {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace profile {

static std::atomic<bool (*)()> g_enabled{nullptr};
static std::atomic<void (*)(ProfileEvent&&)> g_emit{nullptr};

void set_hook(Hook h) {
  g_emit.store(h.emit);
  g_enabled.store(h.enabled);
}
bool enabled() {
  auto f = g_enabled.load(std::memory_order_acquire);
  return f && g_emit.load(std::memory_order_acquire) && f();
}
void emit(ProfileEvent&& e) {
  if (auto f = g_emit.load(std::memory_order_acquire)) f(std::move(e));
}

}  // namespace profile

profile_range::profile_range(std::string name, std::string device) : on_(profile::enabled()) {
  if (!on_) return;
  name_ = std::move(name), device_ = std::move(device);
  st_ = now_ns();
}
profile_range::~profile_range() {
  if (on_) profile::emit(ProfileRangeEvent{std::move(device_), std::move(name_), st_, now_ns()});
}

void profile_marker(const std::string& name, const std::string& color) {
  if (!profile::enabled()) return;
  ProfilePointEvent p;
  p.kind = ProfilePointEvent::Kind::marker;
  p.device = "TINY", p.ts_ns = now_ns(), p.name = name, p.color = color;
  profile::emit(std::move(p));
}

}  // namespace tg
