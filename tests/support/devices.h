// Tests that run tensors: a gtest environment that registers the CPU and interpreter devices once per test binary.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"

namespace tg::test {

// The disk caches (compiled kernels, BEAM results) go to a directory of this test process, removed at the end:
// tests never read what an earlier build compiled.
struct Devices : ::testing::Environment {
  std::filesystem::path cache;
  void SetUp() override {
    if (!std::getenv("TG_CACHE_DIR")) {
      cache = std::filesystem::temp_directory_path() / ("tg-test-cache-" + std::to_string(::getpid()));
      setenv("TG_CACHE_DIR", cache.c_str(), 1);
    }
    cpu::register_device();
    interp::register_device();
  }
  void TearDown() override {
    if (cache.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(cache, ec);
  }
};
inline ::testing::Environment* const devices_env = ::testing::AddGlobalTestEnvironment(new Devices);

}  // namespace tg::test
