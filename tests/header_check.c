/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror (tests/CMakeLists.txt). Without
 * CUDNNFE_EXPERIMENTAL the experimental part of the header is hidden. */
#include "cudnnfe/cudnnfe.h"

#if defined(cudnnfe_sdpa_fp8_options_init) || defined(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE)
#error "the experimental part is declared without CUDNNFE_EXPERIMENTAL"
#endif

int header_check_c(void) {
  cudnnfe_sdpa_options_t options;
  cudnnfe_sdpa_options_init(&options);
  return (int)options.struct_size + CUDNNFE_STATUS_OK;
}
