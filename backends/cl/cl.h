// The CL device (target tg_backend_cl), a port of tinygrad/runtime/ops_cl.py: OpenCL through the ICD loader
// (libOpenCL.so, never a vendor library), so any installed platform serves it: PoCL on a CPU, a GPU driver.
// `DEV=CL` opens the first device of the first platform (a GPU when it has one), `DEV=CL:1` the second. The renderer
// is the reference's OpenCLRenderer (lib/renderer/cstyle.h); programs are built from source by the platform's compiler
// (the binary is cached in memory and on disk, keyed by device name and driver version) and launched on one in-order
// queue with profiling on, so a kernel that waits is timed on the device clock. The device clock is tied to the host
// clock once per device when it opens, which puts device-timed kernels on the same timeline as everything else.
// OpenCL's headers stay inside cl.cpp.
//
//   tg::cl::register_device();                  // Device "CL" in the registry of lib/device.h
//   tg::Tensor t = tg::Tensor({1.f, 2.f}).to("CL");
#pragma once
#include <string>
#include <vector>

namespace tg::cl {

// registers "CL" with lib/device.h's registry (idempotent). Opening it with no OpenCL device installed throws a
// DeviceError that says what to install.
void register_device();

// the OpenCL devices DEV=CL:N can open, "platform: device" each; empty when there is none (never throws)
std::vector<std::string> list_devices();

}  // namespace tg::cl
