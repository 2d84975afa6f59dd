#include "stub/unpack/packer_record_unpack.h"

namespace kpack {

StubStatus unpack_from_packer_record(const PackerRecord& info, uint64_t image_base, const KaslrRequest& kaslr,
                                     const FreeMemory& free, PhysicalMemory& memory, UnpackTrace& trace,
                                     UnpackResult* result, FrameWorkers* workers, uint32_t max_workers) {
  UnpackRequest request;
  request.codec = static_cast<Codec>(uint32_t{info.codec});
  request.payload_addr = image_base + info.payload_offset;
  request.payload_size = info.payload_size;
  request.image = range_of(image_base, info.image_size);
  if (request.image.empty() || request.payload_addr < image_base)
    return fail("the image wraps around the address space", image_base, info.image_size);
  request.min_kernel_address = info.min_kernel_address;
  request.min_alignment = info.kernel_alignment;
  request.relocations_size = info.relocations_size;
  request.relocation_planes = info.flags & kRecordRelocationPlanes;
  request.cleared_by_kernel = Range{uint64_t{info.bss_page} * 4096, (uint64_t{info.bss_page} + info.bss_pages) * 4096};
  request.kaslr = kaslr;
  request.frame_table_addr = image_base + info.frame_table_offset;
  request.frame_count = info.frame_count;
  request.digest = static_cast<FrameDigest>(uint32_t{info.digest});
  request.workers = workers;
  request.max_workers = max_workers;
  bool raw = request.codec == Codec::kRaw;
  // Raw payloads run where they were loaded unless the packer asked for the copy a random slot costs.
  if (raw && !(info.flags & kRecordRandomizeRawPhysically)) request.kaslr.physical = false;
  return unpack_kernel(request, free, memory, trace, result);
}

}  // namespace kpack
