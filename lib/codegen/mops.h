// The movement-op lowering moved to its home in the scheduler: apply_movement_op, _apply_reshape and marg are in
// lib/schedule/indexing.h (schedule/indexing.py), pm_mops in lib/schedule/rangeify.h (schedule/rangeify.py). This
// header forwards there for the code that includes it.
#pragma once
#include "lib/schedule/indexing.h"
#include "lib/schedule/rangeify.h"
