// The only way library code includes the public header: it gives the C API
// declarations default visibility while everything else is compiled with
// -fvisibility=hidden (the linker version script then exports only
// cudnnfe_*).
#pragma once

#pragma GCC visibility push(default)
#include "cudnnfe/cudnnfe.h"
#pragma GCC visibility pop
