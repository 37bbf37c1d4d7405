/* Compiled with -std=c99 -pedantic -Wall -Wextra -Werror (tests/CMakeLists.txt): the
 * header with its experimental part, as a program that uses it includes it. */
#define CUDNNFE_EXPERIMENTAL
#include "cudnnfe/cudnnfe.h"

#if !defined(cudnnfe_sdpa_fp8_options_init) || !defined(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE)
#error "CUDNNFE_EXPERIMENTAL does not show the experimental part"
#endif

int header_check_experimental_c(void) {
  cudnnfe_sdpa_fp8_options_t options;
  cudnnfe_sdpa_fp8_options_init(&options);
  cudnnfe_moe_grouped_matmul_mode_t mode = CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE;
  return (int)options.struct_size + (int)mode;
}
