#pragma once
// What can go wrong between a checked program and the board, each with what to do.
// Errors carry the errno of the failed call and a note (path, driver name) when there is one.

#include <regcmd/core/error.hpp>

#define REGCMD_RUNTIME_RULES(X)                                                                      \
  X(device_missing, "device-missing",                                                                \
    "no NPU device node: the vendor rknpu driver provides /dev/dri/card1 (see ls -l /dev/dri, or "  \
    "give the node with --device / REGCMD_DEVICE)",                                                  \
    "fact sheet §1.1")                                                                               \
  X(device_permission, "device-permission",                                                          \
    "permission denied opening the NPU node: run as root or join the group that owns it "           \
    "(ls -l /dev/dri)",                                                                              \
    "fact sheet §1.1")                                                                               \
  X(device_open, "device-open", "the NPU node could not be opened", "fact sheet §1.1")              \
  X(wrong_driver, "wrong-driver",                                                                    \
    "the node is not the rknpu driver's: pick the rknpu card node (the primary node, usually "      \
    "/dev/dri/card1; raw RKNPU_SUBMIT does not work on the render node)",                            \
    "fact sheet §1.1; regcmd-isa-reference \"Submission model\"")                                    \
  X(ioctl_failed, "ioctl-failed", "an rknpu ioctl failed", "fact sheet §1")                         \
  X(mmap_failed, "mmap-failed", "mapping an NPU buffer into the process failed", "fact sheet §1.5") \
  X(submit_timeout, "submit-timeout",                                                                \
    "the job did not complete in time (ETIMEDOUT): the NPU is reset before the next submit; a "     \
    "program that keeps timing out breaks a rule the checks do not know yet",                        \
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
    "regcmd")

namespace regcmd::rules {
REGCMD_RUNTIME_RULES(REGCMD_DEFINE_RULE)
}  // namespace regcmd::rules
