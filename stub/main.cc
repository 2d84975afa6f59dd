// The stub's C++ entry: gathers what the loader handed over, runs the unpack engine, and returns
// the kernel's entry point to entry64.S. Any error prints one line on COM1 and halts.
#include "boot_environment.h"
#include "formats/boot_params.h"
#include "formats/kpack_image.h"
#include "runtime.h"
#include "serial.h"
#include "unpack.h"

extern "C" bool identity_mapped(uint64_t addr, uint64_t size);  // paging.cc

namespace kpack {
namespace {

uint64_t rdtsc() {
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return lo | uint64_t{hi} << 32;
}

// The identity map covers 0..4 GiB plus the windows above it that paging.cc mapped for the
// image, boot_params and the command line; the engine only writes below 4 GiB.
class IdentityMemory final : public PhysicalMemory {
 public:
  const uint8_t* readable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override { return pointer(addr, size); }

 private:
  static uint8_t* pointer(uint64_t addr, uint64_t size) {
    if (!identity_mapped(addr, size)) return nullptr;
    return reinterpret_cast<uint8_t*>(addr);
  }
};

// With kpack.debug on the command line, each phase prints its TSC cycle count.
class DebugTrace final : public UnpackTrace {
 public:
  DebugTrace(bool enabled, uint64_t start) : enabled_(enabled), last_(start), start_(start) {}
  void phase(const char* name, uint64_t bytes) override {
    uint64_t now = rdtsc();
    if (enabled_) {
      serial::write("kpack: ");
      serial::write(name);
      serial::write(" bytes=");
      serial::write_decimal(bytes);
      serial::write(" cycles=");
      serial::write_decimal(now - last_);
      serial::write("\n");
    }
    last_ = now;
  }
  uint64_t total() const { return last_ - start_; }

 private:
  bool enabled_;
  uint64_t last_;
  uint64_t start_;
};

[[noreturn]] void halt_on(StubStatus status) {
  serial::write("kpack: error: ");
  serial::write(status.message);
  serial::write(" (");
  serial::write_hex(status.a);
  serial::write(", ");
  serial::write_hex(status.b);
  serial::write(")\nkpack: halted; the kernel was not started\n");
  halt();
}

bool debug_requested(const BootEnvironment& env) {
  if (env.command_line.empty()) return false;
  const char* text = reinterpret_cast<const char*>(env.command_line.begin);
  return command_line_has(text, env.command_line.size() - 1, "kpack.debug");
}

}  // namespace
}  // namespace kpack

extern "C" uint8_t __stub_end[] __attribute__((visibility("hidden")));

extern "C" uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base) {
  using namespace kpack;
  uint64_t start = rdtsc();
  install_exception_handlers();
  const auto& info = *reinterpret_cast<const StubInfo*>(__stub_end);
  if (__builtin_memcmp(info.magic, kStubInfoMagic, sizeof(info.magic)) != 0 || info.version != kStubInfoVersion)
    halt_with("the image has no valid kpack record after the stub");

  // What the loader handed over: usable RAM minus everything live.
  IdentityMemory memory;
  BootEnvironment env;
  uint64_t params_addr = reinterpret_cast<uint64_t>(params);
  StubStatus status = read_boot_environment(*params, params_addr, memory, &env);
  if (!status.ok()) halt_on(status);
  bool debug = debug_requested(env);
  DebugTrace trace(debug, start);
  trace.phase("environment", 0);

  // Unpack the kernel straight to where it will run.
  UnpackRequest request;
  request.codec = static_cast<Codec>(uint32_t{info.codec});
  uint64_t base = reinterpret_cast<uint64_t>(image_base);
  request.payload_addr = base + info.payload_offset;
  request.payload_size = info.payload_size;
  request.image = range_of(base, info.image_size);
  request.min_kernel_address = info.min_kernel_address;
  UnpackResult result;
  status = unpack_kernel(request, env.free, memory, trace, &result);
  if (!status.ok()) halt_on(status);

  if (debug) {
    serial::write("kpack: ");
    serial::write(codec_name(request.codec));
    serial::write(" image at ");
    serial::write_hex(base);
    serial::write(", kernel at ");
    serial::write_hex(result.base);
    serial::write(result.in_place ? " (in place)" : "");
    serial::write(", entry ");
    serial::write_hex(result.entry);
    serial::write(", total cycles=");
    serial::write_decimal(trace.total());
    serial::write("\n");
  }
  return result.entry;
}
