#include "packer/read/placement_report.h"

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "packer/read/mapped_ram.h"
#include "stub/machine/free_memory.h"
#include "stub/unpack/packer_record_unpack.h"

namespace kpack {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// RAM at [0, size) that records every range the engine asks to write, so the report can check it
// never wrote over the image.
class SimulatedRam final : public PhysicalMemory {
 public:
  explicit SimulatedRam(uint64_t size) : ram_(size) {}
  bool ok() const { return ram_.ok(); }

  const uint8_t* readable(uint64_t addr, uint64_t size) override { return ram_.at(addr, size); }
  uint8_t* writable(uint64_t addr, uint64_t size) override {
    uint8_t* p = ram_.at(addr, size);
    if (p) writes.push_back(range_of(addr, size));
    return p;
  }
  void load(uint64_t addr, std::span<const uint8_t> data) { std::memcpy(ram_.data() + addr, data.data(), data.size()); }

  std::vector<Range> writes;

 private:
  MappedRam ram_;
};

}  // namespace

// One load address: run the engine as the stub would and say what it did.
void print_placement_at(const PackedPayload& image, std::span<const uint8_t> protected_part, uint64_t load,
                        const char* label, std::FILE* out, uint64_t ram_size) {
  const PackerRecord& info = *image.packer_record;
  std::fprintf(out, "  at 0x%08" PRIx64 " (%s): ", load, label);
  // Overflow-safe: a crafted pref_address may lie anywhere up to 2^64.
  if (load < kMiB || load > ram_size || protected_part.size() > ram_size - load) {
    std::fprintf(out, "does not fit the simulated %" PRIu64 " MiB machine\n", ram_size / kMiB);
    return;
  }
  SimulatedRam ram(ram_size);
  if (!ram.ok()) {
    std::fprintf(out, "cannot allocate the simulated machine\n");
    return;
  }
  ram.load(load, protected_part);

  FreeMemory free;
  UnpackResult result;
  NoTrace trace;
  // KASLR on, with fixed draws: the lowest physical slot (where nokaslr would put the kernel too)
  // and the highest virtual offset, so the relocation table is applied and checked as well.
  KaslrRequest kaslr;
  kaslr.physical = kaslr.virtual_base = true;
  kaslr.physical_random = 0;
  kaslr.virtual_random = ~0ull;
  StubStatus status = free.add(Range{kMiB, ram_size});
  if (status.ok()) status = unpack_from_packer_record(info, load, kaslr, free, ram, trace, &result);
  if (!status.ok()) {
    std::fprintf(out, "the stub halts: %s (0x%" PRIx64 ", 0x%" PRIx64 ")\n", status.message, status.a, status.b);
    return;
  }

  std::fprintf(out, "kernel at 0x%08" PRIx64 ", entry 0x%08" PRIx64, result.base, result.entry);
  if (result.in_place && !result.moved)
    std::fprintf(out, ", in place (nothing moved)");
  else if (result.in_place)
    std::fprintf(out, ", in place (the segments above the first moved up: %" PRIu64 " bytes)", result.moved);
  else if (result.moved)
    std::fprintf(out, ", moved: %" PRIu64 " bytes", result.moved);
  else
    std::fprintf(out, ", decoded %" PRIu64 " bytes straight to it", result.decoded);
  if (result.physical_slots) std::fprintf(out, "; KASLR: %" PRIu64 " physical slots", result.physical_slots);
  if (result.virtual_slots)
    std::fprintf(out, ", %" PRIu64 " virtual offsets (%" PRIu64 " relocations applied)", result.virtual_slots,
                 result.relocations);
  // The engine's promise, checked here too: nothing written over the stub and its record, nor (for
  // compressed payloads) over the payload it is still reading.
  bool raw = static_cast<Codec>(uint32_t{info.codec}) == Codec::kRaw;
  Range live = range_of(load, raw ? uint64_t{info.payload_offset} : uint64_t{info.image_size});
  bool clobbered = false;
  for (Range w : ram.writes) clobbered |= w.overlaps(live);
  bool aligned = result.base % info.kernel_alignment == 0 && result.base >= info.min_kernel_address;
  std::fprintf(out, "%s%s\n", clobbered ? "; WROTE OVER THE LIVE IMAGE" : "",
               aligned ? "" : "; KERNEL ADDRESS NOT ACCEPTABLE");
}

void print_placement_heading(std::FILE* out, uint64_t ram_size) {
  std::fprintf(out, "placement (the stub's engine on a simulated %" PRIu64 " MiB machine, RAM from 1 MiB):\n",
               ram_size / kMiB);
}

void print_placement_report(const BzImage& image, std::span<const uint8_t> file, std::FILE* out, uint64_t ram_size) {
  if (!image.packer_record) return;
  const boot::SetupHeader& h = image.header;
  uint64_t alignment = h.kernel_alignment ? uint64_t{h.kernel_alignment} : 2 * kMiB;
  print_placement_heading(out, ram_size);
  // Every loader of a bzImage loads all of the file after the setup sectors.
  auto report_one = [&](uint64_t load, const char* label) {
    print_placement_at(image, file.subspan(image.setup_size), load, label, out, ram_size);
  };
  report_one(kMiB, "1 MiB: QEMU -kernel, GRUB linux16, ISOLINUX");
  if (h.pref_address != kMiB)
    report_one(h.pref_address, "pref_address");
  else
    std::fprintf(out, "  at pref_address 0x%08" PRIx64 ": as at 1 MiB\n", uint64_t{h.pref_address});
  report_one(16 * kMiB, "16 MiB: kexec_file_load's lowest");
  // kexec-tools' bzImage64 loader takes the highest aligned hole that holds init_size.
  uint64_t top = h.init_size < ram_size ? (ram_size - h.init_size) / alignment * alignment : 0;
  report_one(top, "highest aligned fit of init_size: kexec-tools");
}

}  // namespace kpack
