// Compiled as C++ with -pedantic -Wall -Wextra -Werror (tests/CMakeLists.txt).
#include "cudnnfe/cudnnfe.h"

int header_check_cxx() {
  cudnnfe_conv_options_t options;
  cudnnfe_conv_options_init(&options);
  return static_cast<int>(options.struct_size);
}
