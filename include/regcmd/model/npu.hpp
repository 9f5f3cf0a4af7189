#pragma once
// A functional model of the RK3588 NPU: it executes regcmd programs on the host.
//
// The PC fetches each task from a simulated 32-bit IOVA space, register writes land in one
// of two ping-pong register groups, and each op-enable runs what the registers configure,
// walking its operands from the registers alone with its own layouts and limits (it is
// built without sight of programs/, so that it is an oracle for them). Where the hardware
// would not compute — the reference's hangs, wedges, timeouts, zero outputs, silently wrong
// results and wild DMA — the model reports that fault instead, and the stopping ones leave
// it wedged until reset(), as the board is.
//
// It also plays the board's state quirks (both on by default, as a board has them):
//   cold-start stale read: the first op writing a freshly allocated buffer leaves it stale
//   int8 entry wedge: the first int8 op after other work wedges unless a reset came first
// (regcmd-isa-reference "State gotchas").

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace regcmd::model {

// The simulated IOVA space: buffers registered by whoever owns the memory.
class iova_space {
 public:
  struct region {
    std::uint64_t iova = 0;
    std::span<std::uint8_t> bytes;
    bool warm = false;     // written by an NPU job since it was allocated
    bool touched = false;  // written by the job running now
    int touched_as = -1;   // the precision (enum value) it was written in, when touched
  };

  void add(std::uint64_t iova, std::span<std::uint8_t> bytes);
  void remove(std::uint64_t iova);
  void mark_warm(std::uint64_t iova);
  // The end of a job: every region it wrote is warm from now on.
  void end_job();
  // The region holding [iova, iova + size), or nullptr if no single region does.
  region* find(std::uint64_t iova, std::uint64_t size);
  const std::vector<region>& regions() const { return regions_; }

 private:
  std::vector<region> regions_;
};

enum class fault_kind {
  hang,          // the submit never completes (AXI / datapath hang); needs a reset
  wedge,         // the job never completes (K beyond the cap, int8 entry); needs a reset
  timeout,       // the op never raises its interrupt (narrow int8 output); needs a reset
  wild_access,   // a DMA outside every buffer: the hardware hangs; needs a reset
  zeros,         // the op completes and writes zeros
  wrong_result,  // the op completes and writes wrong numbers
  stale_output,  // cold start: the first write to a fresh buffer did not land
  unmodelled,    // register values the model has no semantics for; nothing written
};

const char* name_of(fault_kind k);

// Faults after which the job does not complete and the NPU stays wedged until a reset.
constexpr bool stops(fault_kind k) {
  return k == fault_kind::hang || k == fault_kind::wedge || k == fault_kind::timeout || k == fault_kind::wild_access;
}

struct fault {
  fault_kind kind;
  std::uint32_t task;
  std::string what;
  // wild_access: the range the DMA (or the PC's fetch) asked for, so that a caller can tell
  // a DMA running past the end of a buffer from one starting outside every buffer.
  std::uint64_t address = 0, bytes = 0;
};

struct run_result {
  std::uint32_t tasks_completed = 0;
  std::vector<fault> faults;
  bool completed() const;  // no stopping fault
};

// A PC chain under way on one core: the task to fetch next and what the chain did so far.
struct chain {
  std::uint64_t address = 0;
  std::uint32_t amount = 0;
  std::uint32_t task = 0;  // tasks run so far
  std::uint32_t task_number = 0;
  bool pingpong = true;
  run_result result;
  bool ended() const { return task == task_number || !result.completed(); }
};

struct quirks {
  bool cold_start_stale = true;
  bool int8_entry_wedge = true;
};

// The numbers of the SoC the model is, by which it judges CNA ops: the model's own copy,
// typed from the reference rather than read from include/regcmd/core/soc.hpp, so that it
// stays an oracle of the programs that read those traits. RK3588's are the defaults and the
// only ones a source gives (regcmd-isa-reference "Limits & tiling (RK3588)", "The M-tiling
// scheduler", "Small-K validity of the 0x1040 schedule", "0x107c", "Operand tile layouts").
struct soc_numbers {
  const char* name = "RK3588";
  std::uint64_t cbuf_banks = 12, bank_bytes = 32768;
  std::uint32_t max_k = 10752;  // K = 10784 wedges
  std::uint32_t max_n = 8192;   // wider is silently wrong
  // The 1 KB weight tiles: N16 x K32 fp16, N32 x K32 int8, N64 x K32 int4.
  std::uint32_t tile_n_fp16 = 16, tile_n_int8 = 32, tile_n_int4 = 64, tile_k = 32;
  std::uint32_t fp16_split_min_k = 96, int8_split_min_k = 256;  // a bank split below: zeros
  std::uint32_t fp16_k128_rows = 256;                           // fp16 at K = 128: correct up to here
  // int8's bank split: one bank per 64-row group of K/512 banks; the weight stays resident,
  // so 64·floor(11·512/K) rows at most (704/320/128/64 at K = 512/1024/2048/4096).
  std::uint32_t int8_group_rows = 64, int8_k_per_bank = 512;
  std::uint32_t int4_rows_times_k = 16384;  // int4's activation budget
};

// How the DPU rounds a requantizing right shift by s > 0 (DPU_OUT_CVT_SHIFT of an int8
// output, EW_OP_CVT_SHIFT of a residual operand). No reference states the hardware's
// rounding: Mesa writes CVT_ROUND = 0 and nothing says what 0 means (ops-reference §2.1,
// docs/conv-values.md), so it is a parameter of the model:
//   half_up   (a + 2^(s-1)) >> s, arithmetic: halves round towards +infinity
//   truncate  a >> s, arithmetic: floor
enum class rounding { half_up, truncate };

class npu {
 public:
  // Runs `task_number` tasks from `regcmd_iova` (as PC_BASE_ADDRESS holds it: bits 31:4),
  // the first fetching `amount` + 1 128-bit words (what PC_REGISTER_AMOUNTS holds), the next
  // ones as their predecessor's tail says.
  run_result run(iova_space& memory, std::uint64_t regcmd_iova, std::uint32_t amount, std::uint32_t task_number,
                 bool pingpong);
  // The same, a task at a time, so that several cores' chains can interleave: start, then
  // step (one task) while it returns true, then memory.end_job() when every core is done.
  chain start(std::uint64_t regcmd_iova, std::uint32_t amount, std::uint32_t task_number, bool pingpong) const;
  bool step(iova_space& memory, chain& c);
  // RKNPU_ACT_RESET: clears a wedge, primes int8 mode and clears the lookup tables.
  void reset();
  // A job that timed out for a reason outside the program (fault injection): wedged
  // until reset, as after any timeout.
  void wedge() { wedged_ = true; }
  bool wedged() const { return wedged_; }

  quirks behaviour;
  soc_numbers soc;       // the SoC the model is
  unsigned threads = 0;  // 0: one per hardware thread
  // Test aid: the next op flips bit 6 of its first output element's top byte (an exponent
  // bit of a float, bit 30 / 14 / 6 of an integer), so tools that check results can be
  // shown to catch a wrong one whatever their tolerance.
  bool corrupt_next_output = false;
  // The rounding of an integer requantization: a convolution's int8 write-out, an SDP's
  // BS/BN multiplier shift and OUT_CVT shift (see `rounding`).
  rounding requantization_rounding = rounding::half_up;

  // The DPU's lookup-table memory (ops-reference §6.2, the activation contract): two tables
  // of 513 signed 16-bit entries, table 0 = LE, table 1 = LO. They are not part of the
  // ping-pong register groups: the PC fills them as the entries stream (DPU_LUT_ACCESS_CFG
  // sets the access type, table and address; each DPU_LUT_ACCESS_DATA write with access type
  // 1 stores its bits 15:0 and moves to the next entry; a write past entry 512 is reported
  // unmodelled and ignored), they persist across tasks and submits, and reset() clears them.
  static constexpr std::uint32_t lut_entries = 513;
  using lut_table = std::array<std::int16_t, lut_entries>;
  const lut_table& lut(unsigned table) const { return lut_[table & 1]; }

 private:
  struct registers {
    std::vector<std::uint32_t> values = std::vector<std::uint32_t>(0x8000 / 4, 0);
    std::uint32_t get(std::uint16_t offset) const { return values[offset / 4]; }
  };
  void run_op(iova_space& memory, const registers& r, std::uint32_t enable_mask, std::uint32_t task, bool pingpong,
              run_result& out);
  void run_matmul(iova_space& memory, const registers& r, std::uint32_t task, run_result& out);
  // A convolution (model/conv.cpp); `dpu_rdma`: the op enables the DPU_RDMA (bias, residual).
  void run_conv(iova_space& memory, const registers& r, std::uint32_t task, bool dpu_rdma, run_result& out);
  void run_sdp(iova_space& memory, const registers& r, std::uint32_t task, bool pingpong, run_result& out);
  // A pooling (model/ppu.cpp): the PPU reading its input through the PPU_RDMA (flying mode).
  void run_pool(iova_space& memory, const registers& r, std::uint32_t task, run_result& out);

  // A write of the LUT access pair (DPU_LUT_ACCESS_CFG / _DATA) as the PC applies it.
  void lut_access(std::uint16_t offset, std::uint32_t value, std::uint32_t task, run_result& out);

  registers groups_[2];
  std::array<lut_table, 2> lut_{};
  struct {
    bool write = false;      // LUT_ACCESS_TYPE 1
    unsigned table = 0;      // LUT_TABLE_ID
    std::uint32_t addr = 0;  // the next entry LUT_ACCESS_DATA writes
  } lut_access_{};
  bool wedged_ = false;
  bool int8_primed_ = false;
  int last_precision_ = -1;
};

}  // namespace regcmd::model
