// The profiler's user API and where its events go.
//
//   { tg::profile_range r("train step");  ...  }   // a span on the USER lane
//   tg::profile_marker("epoch 2", "red");          // a vertical line across the timeline
//
// Both cost one call and a flag test when nothing is recorded. With PROFILE=1 (or VIZ) the events are written to the
// program's trace with its kernels and buffers; tinyviz and `tinyviz-cli profile` show them.
#pragma once
#include <string>

#include "profiler/clock.h"
#include "profiler/events.h"

namespace tg {

// The reference's cpu_profile(name, "USER"): times the scope it lives in
class profile_range {
 public:
  explicit profile_range(std::string name, std::string device = "USER");
  ~profile_range();
  profile_range(const profile_range&) = delete;
  profile_range& operator=(const profile_range&) = delete;

 private:
  std::string name_, device_;
  int64_t st_ = 0;
  bool on_ = false;
};

// The reference's profile_marker(name, color)
void profile_marker(const std::string& name, const std::string& color = "gray");

namespace profile {

// Where events go. The engine installs it (lib/uop/track.cpp: into the trace when PROFILE or VIZ asks for one).
// `enabled` is asked before an event is built; `emit` receives it. With no hook, nothing is recorded.
struct Hook {
  bool (*enabled)() = nullptr;
  void (*emit)(ProfileEvent&&) = nullptr;
};
void set_hook(Hook h);
bool enabled();
void emit(ProfileEvent&& e);

}  // namespace profile
}  // namespace tg
