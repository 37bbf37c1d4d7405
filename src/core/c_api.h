// The only way library code includes the public header: it gives the C API
// declarations default visibility while everything else is compiled with
// -fvisibility=hidden (the linker version script then exports only
// cudnnfe_*).
#pragma once

// The library defines and exports the experimental part of the header too.
#ifndef CUDNNFE_EXPERIMENTAL
#define CUDNNFE_EXPERIMENTAL
#endif
#pragma GCC visibility push(default)
#include "cudnnfe/cudnnfe.h"
#pragma GCC visibility pop
