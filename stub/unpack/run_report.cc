#include "stub/unpack/run_report.h"

namespace kpack {

namespace {

bool same_text(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return *a == *b;
}

constexpr uint64_t kPage = 4096;
constexpr uint64_t kLowMemoryEnd = 1 << 20;

}  // namespace

RunReport start_run_report(Codec codec, RunEntry entry, uint64_t start_tsc) {
  RunReport run{};
  __builtin_memcpy(run.magic, kRunReportMagic, sizeof(run.magic));
  run.version = kRunReportVersion;
  run.size = sizeof(RunReport);
  run.codec = static_cast<uint32_t>(codec);
  run.entry = static_cast<uint32_t>(entry);
  run.start_tsc = start_tsc;
  return run;
}

void report_phase(RunReport& run, const char* name, uint64_t bytes, uint64_t cycles) {
  uint32_t count = run.phase_count;
  if (count == kRunReportMaxPhases) return;
  for (uint32_t id = 0; id < kRunPhaseKinds; ++id) {
    if (!same_text(name, kRunPhaseNames[id])) continue;
    run.phases[count].id = id;
    run.phases[count].bytes = bytes;
    run.phases[count].cycles = cycles;
    run.phase_count = count + 1;
    return;
  }
}

void report_result(RunReport& run, const UnpackResult& result, const HelperCounts& helpers) {
  run.kernel_base = result.base;
  run.kernel_entry = result.entry;
  run.virtual_offset = result.virtual_offset;
  run.flags = (result.physical_slots ? kRunKaslrPhysical : 0) | (result.virtual_offset ? kRunKaslrVirtual : 0) |
              (result.in_place ? kRunInPlace : 0);
  run.cpus_found = static_cast<uint32_t>(helpers.found);
  run.cpus_started = static_cast<uint32_t>(helpers.started);
  run.cpus_ran = static_cast<uint32_t>(helpers.ran);
  run.cpus_returned = static_cast<uint32_t>(helpers.returned);
  run.cpus_late = static_cast<uint32_t>(helpers.late);
  run.helper_join_cycles = helpers.join_cycles;
  run.frames = result.frames;
  run.frames_by_helpers = result.frames - result.frames_by_caller;
  run.frames_redone = result.redone;
}

bool place_run_report(const FreeMemory& free, Range kernel, Range image, uint64_t* address) {
  FreeMemory room = free;
  if (!room.remove(kernel).ok() || !room.remove(image).ok()) return false;
  return room.lowest_fit(kRunReportNodeSize, kPage, kLowMemoryEnd, address);
}

RunReport* link_run_report(boot::BootParams& params, uint64_t address, uint8_t* node, const RunReport& run) {
  boot::SetupData header;
  header.next = params.hdr.setup_data;
  header.type = kSetupKpackRunReport;
  header.len = sizeof(RunReport);
  __builtin_memcpy(node, &header, sizeof(header));
  __builtin_memcpy(node + sizeof(header), &run, sizeof(run));
  params.hdr.setup_data = address;
  return reinterpret_cast<RunReport*>(node + sizeof(header));
}

}  // namespace kpack
