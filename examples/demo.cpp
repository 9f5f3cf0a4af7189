// The main job, for now: a task tail and a few typed register writes built at compile
// time, printed decoded.
#include <array>
#include <cstdio>

#include <regcmd/decode/format.hpp>
#include <regcmd/registers/all.hpp>

using namespace regcmd;
using namespace regcmd::reg;

constexpr std::array program{
    encode(CNA_CONV_CON1{.IN_PRECISION = precision::fp16, .PROC_PRECISION = precision::fp16}).value(),
    encode(CNA_CBUF_CON0{.DATA_BANK = 1, .WEIGHT_BANK = 11}).value(),
    encode(DPU_DATA_FORMAT{.PROC_PRECISION = precision::fp16, .IN_PRECISION = precision::fp16,
                           .OUT_PRECISION = precision::fp32})
        .value(),
    encode(PC_BASE_ADDRESS{}).value(),
    encode(PC_REGISTER_AMOUNTS{}).value(),
    op_enable_preamble(),
    op_enable({.CNA_OP_EN = 1, .CORE_OP_EN = 1, .DPU_OP_EN = 1}).value(),
};

int main() {
  for (std::size_t i = 0; i < program.size(); ++i)
    std::printf("%016llx  %s\n", static_cast<unsigned long long>(program[i].bits()),
                format_text(decode(program[i]), i).c_str());
}
