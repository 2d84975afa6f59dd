// The stub's C++ entry: gathers what the loader handed over, runs the unpack engine on the record
// entry64.S has checked, and returns the kernel's entry point to entry64.S. Any error halts with
// one line on COM1.
#include "asm_symbols.h"
#include "boot_environment.h"
#include "exceptions.h"
#include "halt.h"
#include "paging.h"
#include "serial.h"
#include "stub_record.h"

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

bool debug_requested(const BootEnvironment& env) {
  if (env.command_line.empty()) return false;
  const char* text = reinterpret_cast<const char*>(env.command_line.begin);
  return command_line_has(text, env.command_line.size() - 1, "kpack.debug");
}

void print_summary(const StubInfo& record, uint64_t base, const UnpackResult& result, uint64_t cycles) {
  serial::write("kpack: ");
  serial::write(codec_name(static_cast<Codec>(uint32_t{record.codec})));
  serial::write(" image at ");
  serial::write_hex(base);
  serial::write(", kernel at ");
  serial::write_hex(result.base);
  serial::write(result.in_place ? " (in place)" : "");
  serial::write(", entry ");
  serial::write_hex(result.entry);
  serial::write(", total cycles=");
  serial::write_decimal(cycles);
  serial::write("\n");
}

}  // namespace
}  // namespace kpack

extern "C" uint64_t stub_main(kpack::boot::BootParams* params, uint8_t* image_base, const kpack::StubInfo* record) {
  using namespace kpack;
  uint64_t start = rdtsc();
  install_exception_handlers();

  // What the loader handed over: usable RAM minus everything live.
  IdentityMemory memory;
  BootEnvironment env;
  StubStatus status = read_boot_environment(*params, reinterpret_cast<uint64_t>(params), memory, &env);
  if (!status.ok()) halt_with(status);
  bool debug = debug_requested(env);
  DebugTrace trace(debug, start);
  trace.phase("environment", 0);

  // Unpack the kernel straight to where it will run.
  uint64_t base = reinterpret_cast<uint64_t>(image_base);
  uint64_t record_offset = reinterpret_cast<const uint8_t*>(record) - image_base;
  UnpackResult result;
  status = unpack_from_record(*record, record_offset, base, env.free, memory, trace, &result);
  if (!status.ok()) halt_with(status);
  if (debug) print_summary(*record, base, result, trace.total());
  return result.entry;
}
