#pragma once
// What can go wrong between a checked program and the board, each with what to do.
// Errors carry the errno of the failed call and a note (path, driver name) when there is one.

#include <regcmd/core/error.hpp>

#define REGCMD_RUNTIME_RULES(X)                                                                      \
  X(device_missing, "device-missing",                                                                \
    "no NPU device node: vendor kernels have the rknpu card node (/dev/dri/card1), mainline 6.18+ " \
    "kernels the rocket accel node (/dev/accel/accel0); give another with --device / REGCMD_DEVICE", \
    "fact sheet §1.1, §3.2")                                                                         \
  X(device_permission, "device-permission",                                                          \
    "permission denied opening the NPU node: run as root or join the group that owns it "           \
    "(ls -l /dev/dri /dev/accel)",                                                                   \
    "fact sheet §1.1, §3.2")                                                                         \
  X(device_open, "device-open", "the NPU node could not be opened", "fact sheet §1.1")              \
  X(wrong_driver, "wrong-driver",                                                                    \
    "the node is served by neither rknpu nor rocket: pick the rknpu card node (the primary node, "  \
    "usually /dev/dri/card1; raw RKNPU_SUBMIT does not work on the render node) or the rocket "      \
    "accel node (/dev/accel/accelN)",                                                                \
    "fact sheet §1.1, §3.2; regcmd-isa-reference \"Submission model\"")                              \
  X(ioctl_failed, "ioctl-failed", "an NPU driver ioctl failed", "fact sheet §1, §3")                         \
  X(mmap_failed, "mmap-failed", "mapping an NPU buffer into the process failed", "fact sheet §1.5") \
  X(submit_timeout, "submit-timeout",                                                                \
    "the job did not complete in time: the NPU is reset before the next job (rknpu: by the "        \
    "runtime; rocket: its kernel already did after 500 ms); a program that keeps timing out breaks " \
    "a rule the checks do not know yet",                                                             \
    "regcmd-isa-reference \"State gotchas\"")                                                        \
  X(operand_missing, "operand-missing",                                                              \
    "the program has an address slot for an operand no buffer was given for: bind that buffer",    \
    "regcmd")                                                                                        \
  X(operand_extent, "operand-extent",                                                                \
    "an operand's DMA reaches past the end of its buffer: allocate at least offset + extent "       \
    "bytes (the slot table says how many)",                                                          \
    "regcmd")                                                                                        \
  X(feature_rotation, "feature-rotation",                                                            \
    "a prepared program keeps one feature buffer: write new features into it instead of binding "   \
    "another (the NPU caches feature state by address; rotating buffers corrupts results)",         \
    "regcmd-isa-reference \"State gotchas\"")                                                        \
  X(core_split, "core-split",                                                                        \
    "a program with delta tasks cannot be split over cores (later tasks rely on earlier ones' "     \
    "registers): run it on one core or round-robin",                                                 \
    "regcmd")                                                                                        \
  X(bo_size, "bo-size",                                                                              \
    "a rocket buffer holds 1 byte to 4 GiB - 1 page (CREATE_BO takes a 32-bit size): split the "    \
    "operand",                                                                                       \
    "fact sheet §3.1")                                                                               \
  X(reset_unsupported, "reset-unsupported",                                                          \
    "the rocket driver has no reset request: its kernel resets a core itself when a job times out", \
    "fact sheet §3.2")                                                                               \
  X(rocket_pingpong, "rocket-pingpong",                                                              \
    "the program needs ping-pong off (an SDP task), but the rocket kernel turns it on for every "   \
    "task (PC_TASK_CON TASK_PP_EN): run it on the rknpu node",                                       \
    "fact sheet §3.3; regcmd-isa-reference \"Chained 2-input SDP\"")                                 \
  X(rocket_delta_tasks, "rocket-delta-tasks",                                                        \
    "delta tasks rely on registers the task before left, but the rocket kernel kicks every task "   \
    "on its own and rewrites CNA/CORE S_POINTER first: build the plan with full tasks (no .delta)", \
    "fact sheet §3.3")                                                                               \
  X(rocket_interrupt, "rocket-interrupt",                                                            \
    "the rocket kernel ends a task only on a DPU interrupt (mask 0x300): a task ending on another " \
    "block's interrupt would time out; run it on the rknpu node",                                    \
    "fact sheet §3.3")

namespace regcmd::rules {
REGCMD_RUNTIME_RULES(REGCMD_DEFINE_RULE)
}  // namespace regcmd::rules
