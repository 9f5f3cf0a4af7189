// The C entry points of librknnrt.so: argument checks, the contexts and the memory, each
// call's errors as the API's codes (and one line on stderr, as the vendor library logs).

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <optional>
#include <variant>

#include <rknn/rknn_matmul_api.h>

#include "layouts.hpp"
#include "matmul_context.hpp"
#include "memory.hpp"

// The 2.1+ ABI on LP64 (rknn-matmul-api §1.4): a header that drifts does not build.
static_assert(sizeof(rknn_context) == 8);
static_assert(sizeof(rknn_tensor_mem) == 40 && alignof(rknn_tensor_mem) == 8);
static_assert(offsetof(rknn_tensor_mem, phys_addr) == 8 && offsetof(rknn_tensor_mem, fd) == 16 &&
              offsetof(rknn_tensor_mem, offset) == 20 && offsetof(rknn_tensor_mem, size) == 24 &&
              offsetof(rknn_tensor_mem, flags) == 28 && offsetof(rknn_tensor_mem, priv_data) == 32);
static_assert(sizeof(rknn_matmul_tensor_attr) == 332 && alignof(rknn_matmul_tensor_attr) == 4);
static_assert(offsetof(rknn_matmul_tensor_attr, n_dims) == 256 && offsetof(rknn_matmul_tensor_attr, dims) == 260 &&
              offsetof(rknn_matmul_tensor_attr, size) == 324 && offsetof(rknn_matmul_tensor_attr, type) == 328);
static_assert(sizeof(rknn_matmul_io_attr) == 996 && offsetof(rknn_matmul_io_attr, B) == 332 &&
              offsetof(rknn_matmul_io_attr, C) == 664);
static_assert(sizeof(rknn_matmul_info) == 64 && offsetof(rknn_matmul_info, type) == 12 &&
              offsetof(rknn_matmul_info, B_layout) == 16 && offsetof(rknn_matmul_info, B_quant_type) == 18 &&
              offsetof(rknn_matmul_info, AC_layout) == 20 && offsetof(rknn_matmul_info, AC_quant_type) == 22 &&
              offsetof(rknn_matmul_info, iommu_domain_id) == 24 && offsetof(rknn_matmul_info, group_size) == 28 &&
              offsetof(rknn_matmul_info, reserved) == 30);
static_assert(sizeof(rknn_quant_params) == 288 && offsetof(rknn_quant_params, scale) == 256 &&
              offsetof(rknn_quant_params, scale_len) == 264 && offsetof(rknn_quant_params, zp) == 272 &&
              offsetof(rknn_quant_params, zp_len) == 280);
static_assert(sizeof(rknn_matmul_shape) == 12 && sizeof(rknn_tensor_type) == 4 && sizeof(rknn_matmul_type) == 4);

namespace {

using namespace regcmd;
using namespace regcmd::rknn;

int fail(const char* function, int code, const std::string& what) {
  static const bool quiet = [] {
    const char* v = std::getenv("REGCMD_RKNN_LOG");
    return v && std::strcmp(v, "0") == 0;
  }();
  if (!quiet) std::fprintf(stderr, "E rknn (regcmd): %s: %s\n", function, what.c_str());
  return code;
}
int fail(const char* function, const api_error& e) { return fail(function, e.code, e.what); }
int done(const char* function, const api_status& s) { return s ? fail(function, *s) : RKNN_SUCC; }

// The live contexts by handle (handles count from 1 and are never reused).
class context_registry {
 public:
  // Never destroyed: it lives until the process ends, when the kernel closes its files
  // (destroyed at exit, it would close them after libraries it calls may be gone).
  static context_registry& instance() {
    static context_registry* r = new context_registry;
    return *r;
  }
  rknn_matmul_ctx add(std::shared_ptr<matmul_context> c) {
    const std::lock_guard g{lock_};
    contexts_[next_] = std::move(c);
    return next_++;
  }
  std::shared_ptr<matmul_context> find(rknn_matmul_ctx id) {
    const std::lock_guard g{lock_};
    auto it = contexts_.find(id);
    return it == contexts_.end() ? nullptr : it->second;
  }
  bool remove(rknn_matmul_ctx id) {
    std::shared_ptr<matmul_context> last;  // destroyed outside the lock
    const std::lock_guard g{lock_};
    auto it = contexts_.find(id);
    if (it == contexts_.end()) return false;
    last = std::move(it->second);
    contexts_.erase(it);
    return true;
  }

 private:
  std::mutex lock_;
  std::map<rknn_matmul_ctx, std::shared_ptr<matmul_context>> contexts_;
  rknn_matmul_ctx next_ = 1;
};

int invalid_context(const char* function, rknn_matmul_ctx ctx) {
  return fail(function, RKNN_ERR_CTX_INVALID, "context " + std::to_string(ctx) + " is not a live matmul context");
}

int create(const char* function, rknn_matmul_ctx* ctx, const rknn_matmul_info* info,
           std::span<const rknn_matmul_shape> shapes, rknn_matmul_io_attr* attrs) {
  if (!ctx || !info || !attrs) return fail(function, RKNN_ERR_PARAM_INVALID, "a null argument");
  auto made = matmul_context::create(*info, shapes);
  if (auto* e = std::get_if<api_error>(&made)) return fail(function, *e);
  auto c = std::get<std::shared_ptr<matmul_context>>(std::move(made));
  for (std::size_t i = 0; i < shapes.size(); ++i) attrs[i] = c->io_attr(i);
  *ctx = context_registry::instance().add(std::move(c));
  return RKNN_SUCC;
}

// The IOMMU domain memory made with `ctx` lives in: its context's, or 0 without one.
std::optional<int> domain_of(rknn_context ctx, bool no_context) {
  if (ctx == 0 && no_context) return 0;
  auto c = context_registry::instance().find(ctx);
  if (!c) return std::nullopt;
  return c->domain();
}

// The bytes behind an fd: a file's (a memfd's) size, or a dma-buf's, which answers
// lseek(SEEK_END) with it (its offset stays 0: dma-bufs seek to 0 and their end only).
std::optional<std::uint64_t> fd_size(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::nullopt;
  if (S_ISREG(st.st_mode)) return static_cast<std::uint64_t>(st.st_size);
  const off_t end = ::lseek(fd, 0, SEEK_END);
  if (end < 0) return std::nullopt;
  ::lseek(fd, 0, SEEK_SET);
  return static_cast<std::uint64_t>(end);
}

rknn_tensor_mem* new_mem(std::shared_ptr<mem_record> r, std::uint32_t flags) {
  auto mem = std::make_unique<rknn_tensor_mem>();
  const std::shared_ptr<npu_memory>& m = r->memory;
  mem->virt_addr = r->foreign ? r->host - r->offset : m->buffer.bytes().data();
  mem->phys_addr = m->buffer.iova();
  mem->fd = m->fd;
  mem->offset = static_cast<std::int32_t>(r->offset);
  mem->size = r->size;
  mem->flags = flags;
  mem->priv_data = new std::shared_ptr<mem_record>(std::move(r));
  return memory_registry::instance().adopt(std::move(mem));
}

rknn_tensor_mem* allocate(const char* function, rknn_context ctx, std::uint64_t size, bool no_context) {
  const std::optional<int> domain = domain_of(ctx, no_context);
  if (!domain) return invalid_context(function, ctx), nullptr;
  if (size == 0 || size > 0xffff'ffffu)
    return fail(function, RKNN_ERR_PARAM_INVALID, "size " + std::to_string(size) + " is not in [1, 2^32)"), nullptr;
  auto m = memory_registry::instance().allocate(*domain, size);
  if (!m) return fail(function, from(m.err(), "allocating")), nullptr;
  auto r = std::make_shared<mem_record>();
  r->memory = std::move(m.value());
  r->size = static_cast<std::uint32_t>(size);
  r->host = r->memory->buffer.bytes().data();
  return new_mem(std::move(r), RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE);
}

}  // namespace

// An entry point's body: an allocation that fails anywhere in it is the API's
// RKNN_ERR_MALLOC_FAIL (a null mem from the functions that return one), never an exception
// thrown into a C caller.
template <class Body>
auto guarded(const char* function, Body&& body) -> decltype(body(function)) {
  try {
    return body(function);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  const int code = fail(function, RKNN_ERR_MALLOC_FAIL, "out of memory");
  if constexpr (std::is_pointer_v<decltype(body(function))>) {
    return nullptr;
  } else {
    return code;
  }
}

// The library builds with hidden visibility: only these are its ABI.
#define RKNN_EXPORT __attribute__((visibility("default")))

extern "C" {

RKNN_EXPORT int rknn_matmul_create(rknn_matmul_ctx* ctx, rknn_matmul_info* info, rknn_matmul_io_attr* io_attr) {
  return guarded(__func__, [&](const char* fn) -> int {
    if (!info) return fail(fn, RKNN_ERR_PARAM_INVALID, "a null info");
    const rknn_matmul_shape shape{info->M, info->K, info->N};
    return create(fn, ctx, info, {&shape, 1}, io_attr);
  });
}

RKNN_EXPORT int rknn_matmul_create_dynamic_shape(rknn_matmul_ctx* ctx, rknn_matmul_info* info, int shape_num,
                                                 rknn_matmul_shape dynamic_shapes[], rknn_matmul_io_attr io_attrs[]) {
  return guarded(__func__, [&](const char* fn) -> int {
    if (shape_num <= 0 || !dynamic_shapes)
      return fail(fn, RKNN_ERR_PARAM_INVALID,
                  "shape_num " + std::to_string(shape_num) + " with shapes " + (dynamic_shapes ? "given" : "null"));
    return create(fn, ctx, info, {dynamic_shapes, static_cast<std::size_t>(shape_num)}, io_attrs);
  });
}

RKNN_EXPORT int rknn_matmul_destroy(rknn_matmul_ctx ctx) {
  return guarded(__func__, [&](const char* fn) -> int {
    return context_registry::instance().remove(ctx) ? RKNN_SUCC : invalid_context(fn, ctx);
  });
}

RKNN_EXPORT int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem* mem, rknn_matmul_tensor_attr* attr) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    if (!mem || !attr) return fail(fn, RKNN_ERR_PARAM_INVALID, "a null mem or attr");
    if (!memory_registry::instance().known(mem))
      return fail(fn, RKNN_ERR_PARAM_INVALID, "the mem was not made by rknn_create_mem* (or was destroyed)");
    return done(fn, c->set_io_mem(mem, *attr));
  });
}

RKNN_EXPORT int rknn_matmul_set_core_mask(rknn_matmul_ctx ctx, rknn_core_mask core_mask) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    return done(fn, c->set_core_mask(raw_value(core_mask)));
  });
}

RKNN_EXPORT int rknn_matmul_set_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    if (!params) return fail(fn, RKNN_ERR_PARAM_INVALID, "null params");
    return done(fn, c->set_quant_params(*params));
  });
}

RKNN_EXPORT int rknn_matmul_get_quant_params(rknn_matmul_ctx ctx, rknn_quant_params* params, float* scale) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    if (!params) return fail(fn, RKNN_ERR_PARAM_INVALID, "null params");
    return done(fn, c->get_quant_params(*params, scale));
  });
}

RKNN_EXPORT int rknn_matmul_set_dynamic_shape(rknn_matmul_ctx ctx, rknn_matmul_shape* shape) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    if (!shape) return fail(fn, RKNN_ERR_PARAM_INVALID, "a null shape");
    return done(fn, c->set_dynamic_shape(*shape));
  });
}

RKNN_EXPORT int rknn_matmul_run(rknn_matmul_ctx ctx) {
  return guarded(__func__, [&](const char* fn) -> int {
    auto c = context_registry::instance().find(ctx);
    if (!c) return invalid_context(fn, ctx);
    return done(fn, c->run());
  });
}

RKNN_EXPORT int rknn_B_normal_layout_to_native_layout(void* B_input, void* B_output, int K, int N,
                                                      rknn_matmul_info* info) {
  return guarded(__func__, [&](const char* fn) -> int {
    if (!B_input || !B_output || !info) return fail(fn, RKNN_ERR_PARAM_INVALID, "a null argument");
    const std::optional<matmul_types> types = types_of(raw_value(info->type));
    if (!types)
      return fail(fn, RKNN_ERR_PARAM_INVALID,
                  "matmul type " + std::to_string(raw_value(info->type)) + " is not supported");
    if (const std::string e = alignment_error(K, N, types->b); !e.empty())
      return fail(fn, RKNN_ERR_PARAM_INVALID, e);
    b_to_native(static_cast<const std::uint8_t*>(B_input), layout::normal, types->b, static_cast<std::uint32_t>(K),
                static_cast<std::uint32_t>(N), static_cast<std::uint8_t*>(B_output));
    return RKNN_SUCC;
  });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem(rknn_context ctx, uint32_t size) {
  return guarded(__func__, [&](const char* fn) -> rknn_tensor_mem* {
    return allocate(fn, ctx, size, false);
  });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags) {
  return guarded(__func__, [&](const char* fn) -> rknn_tensor_mem* {
    // Cacheability flags are not needed: every buffer is cacheable and synced at each run.
    return allocate(fn, ctx, size, (alloc_flags & RKNN_MEM_FLAG_ALLOC_NO_CONTEXT) != 0);
  });
}

RKNN_EXPORT rknn_tensor_mem* rknn_create_mem_from_fd(rknn_context ctx, int32_t fd, void* virt_addr, uint32_t size,
                                                     int32_t offset) {
  return guarded(__func__, [&](const char* function) -> rknn_tensor_mem* {
    const std::optional<int> domain = domain_of(ctx, false);
    if (!domain) return invalid_context(function, ctx), nullptr;
    if (fd < 0 || size == 0 || offset < 0)
      return fail(function, RKNN_ERR_PARAM_INVALID,
                  "fd " + std::to_string(fd) + ", size " + std::to_string(size) + ", offset " + std::to_string(offset)),
             nullptr;
    auto r = std::make_shared<mem_record>();
    r->size = size;
    r->offset = static_cast<std::uint64_t>(offset);
    if (auto mine = memory_registry::instance().exported(fd)) {
      // One of this library's buffers: a view of it.
      if (r->offset + size > mine->buffer.size())
        return fail(function, RKNN_ERR_PARAM_INVALID,
                    "offset + size " + std::to_string(r->offset + size) + " is past the buffer's " +
                        std::to_string(mine->buffer.size()) + " bytes"),
               nullptr;
      r->memory = std::move(mine);
      r->host = r->memory->buffer.bytes().data() + r->offset;
      return new_mem(std::move(r), RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
    }
    // Another dma-buf (a dma-heap allocation): the NPU reads a shadow, copied at each run. Its
    // bytes must hold offset + size: a mapping past a file's end faults (SIGBUS) when read.
    const std::optional<std::uint64_t> held = fd_size(fd);
    if (!held || *held < r->offset + size)
      return fail(function, RKNN_ERR_PARAM_INVALID,
                  "fd " + std::to_string(fd) + (held ? " holds " + std::to_string(*held) + " bytes" : " has no size") +
                      ", fewer than offset + size = " + std::to_string(r->offset + size)),
             nullptr;
    auto* base = static_cast<std::uint8_t*>(virt_addr);
    if (!base) {
      void* m = ::mmap(nullptr, r->offset + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED)
        return fail(function, RKNN_ERR_PARAM_INVALID,
                    "fd " + std::to_string(fd) + " cannot be mapped: " + std::strerror(errno)),
               nullptr;
      r->mapping = m;
      r->mapping_size = r->offset + size;
      base = static_cast<std::uint8_t*>(m);
    }
    auto shadow = memory_registry::instance().allocate(*domain, size);
    if (!shadow) return fail(function, from(shadow.err(), "a shadow of a foreign dma-buf")), nullptr;
    r->memory = std::move(shadow.value());
    r->host = base + r->offset;
    r->foreign = true;
    r->dmabuf = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);  // its syncs work after the client closes fd
    r->offset = 0;  // into the shadow
    auto* mem = new_mem(r, RKNN_TENSOR_MEMORY_FLAGS_FROM_FD);
    mem->virt_addr = base;  // the client's mapping, as given
    mem->offset = offset;
    return mem;
  });
}

RKNN_EXPORT int rknn_destroy_mem(rknn_context, rknn_tensor_mem* mem) {
  return guarded(__func__, [&](const char* fn) -> int {
    // Memory belongs to no context: any context (or none) may free it.
    if (!mem) return fail(fn, RKNN_ERR_PARAM_INVALID, "a null mem");
    if (!memory_registry::instance().release(mem))
      return fail(fn, RKNN_ERR_PARAM_INVALID, "the mem was not made by rknn_create_mem* (or was destroyed)");
    return RKNN_SUCC;
  });
}

RKNN_EXPORT int rknn_mem_sync(rknn_context, rknn_tensor_mem* mem, rknn_mem_sync_mode mode) {
  return guarded(__func__, [&](const char* fn) -> int {
    if (!mem || !memory_registry::instance().known(mem))
      return fail(fn, RKNN_ERR_PARAM_INVALID, "the mem was not made by rknn_create_mem*");
    const std::int32_t sync = raw_value(mode);
    if (sync < RKNN_MEMORY_SYNC_TO_DEVICE || sync > RKNN_MEMORY_SYNC_BIDIRECTIONAL)
      return fail(fn, RKNN_ERR_PARAM_INVALID, "sync mode " + std::to_string(sync));
    // rknn_matmul_run syncs what it reads and writes; this syncs on request as well, the mem's
    // own bytes (a view syncs itself, not the buffer it views).
    const std::shared_ptr<mem_record> r = record_of(mem);
    const runtime::buffer& b = r->memory->buffer;
    if (sync & RKNN_MEMORY_SYNC_TO_DEVICE)
      if (status s = b.sync_to_device(r->offset, r->size); !s) return fail(fn, from(s.err(), "to the device"));
    if (sync & RKNN_MEMORY_SYNC_FROM_DEVICE)
      if (status s = b.sync_from_device(6000, r->offset, r->size); !s) return fail(fn, from(s.err(), "from the device"));
    return RKNN_SUCC;
  });
}

}  // extern "C"
