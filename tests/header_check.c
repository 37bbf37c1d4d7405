/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror (tests/CMakeLists.txt). */
#include "cudnnfe/cudnnfe.h"

int header_check_c(void) {
  cudnnfe_sdpa_options_t options;
  cudnnfe_sdpa_options_init(&options);
  return (int)options.struct_size + CUDNNFE_STATUS_OK;
}
