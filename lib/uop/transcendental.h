// The transcendental decompositions (xpow, xsin, xexp2, xlog2) live in lib/codegen/decomp/transcendental.h (the port of
// tinygrad/codegen/decomp/transcendental.py); symbolic's POW rule reaches xpow through this header.
#pragma once
#include "lib/codegen/decomp/transcendental.h"
