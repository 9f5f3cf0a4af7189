// A result or status dropped unread: [[nodiscard]] makes it a warning, an error with -Werror.
// EXPECT: ignoring return(ed)? value
// EXPECT: nodiscard
#include <regcmd/programs/matmul.hpp>

using namespace regcmd;

int main() {
  const matmul_spec spec{.dtype = precision::fp16, .out_dtype = precision::fp32, .M = 4, .K = 64, .N = 32};
#ifdef REGCMD_COMPILE_FAIL
  build(spec);
#else
  return build(spec).ok() ? 0 : 1;
#endif
}
