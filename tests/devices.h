// Tests that run tensors: a gtest environment that registers the CPU and interpreter devices once per test binary.
#pragma once
#include <gtest/gtest.h>

#include "backends/cpu/cpu.h"
#include "backends/interp/interp.h"

namespace tg::test {

struct Devices : ::testing::Environment {
  void SetUp() override {
    cpu::register_device();
    interp::register_device();
  }
};
inline ::testing::Environment* const devices_env = ::testing::AddGlobalTestEnvironment(new Devices);

}  // namespace tg::test
