# The emulated device's sources, one file per concern: emu.cpp (the calls taken, the nodes
# opened), rknpu_node.cpp, rocket_node.cpp, buffers.cpp, dma_buf.cpp (interposers.hpp is the
# capture shim's too). Read by emulator/CMakeLists.txt and by the fuzz build's copy.
set(REGCMD_EMU_SOURCES emu.cpp rknpu_node.cpp rocket_node.cpp buffers.cpp dma_buf.cpp)
list(TRANSFORM REGCMD_EMU_SOURCES PREPEND "${CMAKE_CURRENT_LIST_DIR}/")
