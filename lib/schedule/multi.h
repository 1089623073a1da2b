// schedule/multi.py as far as one device needs it. multi_pm is defined in lib/codegen/codegen.cpp (codegen needed it
// first) and declared in lib/codegen/codegen.h: on one device it only has to leave PARAMs without an axis alone;
// sharded PARAMs (UNSHARD, MSELECT/MSTACK, allreduce.py) are out of scope and raise "multi-device (sharded) kernels
// are not ported".
#pragma once
#include "lib/codegen/codegen.h"
