"""regcmd: Rockchip RK35xx NPU register-command programs, built from specs and run on the NPU.

    import regcmd
    p = regcmd.build("matmul", M=4, K=64, N=32, dtype="fp16", out_dtype="fp32")
    p.stats()["tasks"], p.hex()
    dev = regcmd.open_device()          # the NPU node, else the emulated device in-process
    c = dev.run(p, a, b)                # numpy arrays in and out

A spec's keywords are regcmd-gen's options (docs/tools.md): `out_channels=16` is
--out-channels 16, `relu=True` the flag --relu, `kernel=(3, 3)` is --kernel 3x3; a matmul's
and a conv's element types are `dtype` and `out_dtype`. A spec the request refuses raises
SpecError; a rule a program breaks raises RuleError, whose `rule` is the rule's id.
"""

from ._regcmd import Device, Program, RuleError, SpecError, build, graph, open_device

__all__ = ["Device", "Program", "RuleError", "SpecError", "build", "graph", "open_device"]
