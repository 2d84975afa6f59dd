// The EFI entries: the PE entry point that makes a kpack image an EFI application (UEFI
// LoadImage/StartImage: firmware boot managers, the UEFI shell, systemd-boot, systemd-stub, shim),
// and the EFI handover entry for loaders that fill boot_params themselves (GRUB's linuxefi).
// Both take from the firmware what the Linux EFI stub takes (command line, initrd, framebuffer,
// random seed, TPM event log, PCI option ROMs), call ExitBootServices and fill efi_info and e820,
// then hand the machine to the 64-bit boot-protocol entry, as the stock 6.1 EFI stub hands it to
// its decompressor: that entry decodes the kernel on every CPU, starting the others itself, and
// enters it. A confidential VM is the exception: only the firmware's #VC and #VE handlers answer
// its CPUID and MSR accesses, so its kernel is decoded on the boot CPU into pages claimed from the
// firmware before ExitBootServices.
// Until ExitBootServices an error is printed on ConOut and returned, so a boot manager can fall
// back to another entry; after it, an error halts with its line on COM1.
#include "stub/boot/boot_asm.h"
#include "stub/entry/entry_asm.h"
#include "stub/runtime/linker_symbols.h"
#include "stub/runtime/stack_protector.h"
#include "stub/machine/boot_environment.h"
#include "stub/machine/reserved_memory.h"
#include "stub/boot/boot.h"
#include "stub/boot/handover.h"
#include "stub/options/stub_options.h"
#include "stub/efi/efi_boot.h"
#include "stub/efi/efi_tpm.h"
#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/machine/efi_memory_map.h"
#include "stub/entry/packer_record_check.h"
#include "stub/machine/trampoline_page.h"
#include "stub/options/utf16_command_line.h"

extern "C" {
KPACK_EFIAPI kpack::efi::EfiStatus efi_pe_entry(kpack::efi::Handle image,
                                                kpack::efi::SystemTable* system) KPACK_ASM_SYMBOL;
void efi_handover_entry(kpack::efi::Handle image, kpack::efi::SystemTable* system,
                        kpack::boot::BootParams* params) KPACK_ASM_SYMBOL;
}

namespace kpack::efi {
namespace {

constexpr uint64_t kBelow4G = 0xFFFFFFFF;
constexpr uint8_t kLoaderTypeEfiStub = 0x21;  // what the Linux EFI stub writes to type_of_loader

// Before any pointer is used: our own relocations (the PE image carries none), and %fs for the
// codec libraries' stack-protector canary (the firmware does not use %fs).
void prepare_stub() {
  apply_relocations(startup_32);
  set_fs_base(stub_tls);
}

// Every error before ExitBootServices: its line on the firmware's console, and what to return.
EfiStatus report(const Firmware& fw, StubStatus status, StatusNumbers numbers = StatusNumbers::kPair) {
  write_error([&fw](const char* text) { print(fw, text); }, status, numbers);
  return kLoadError;
}

EfiStatus report(const Firmware& fw, const char* message, EfiStatus status) {
  report(fw, fail(message, status), StatusNumbers::kEfiStatus);
  return failed(status) ? status : kLoadError;
}

// LoadOptions is UTF-16 text; the kernel gets it as UTF-8 within its COMMAND_LINE_SIZE (the
// header's cmdline_size, plus the NUL). PCR 9 gets the UTF-16 bytes, as the Linux stub measures them.
EfiStatus store_command_line(const Firmware& fw, const LoadedImage& image, boot::BootParams* params) {
  if (image.load_options_size)
    measure_into_pcr9(fw, reinterpret_cast<uint64_t>(image.load_options), image.load_options_size,
                      MeasuredData::kLoadOptions);
  uint32_t limit = params->hdr.cmdline_size + 1;
  uint64_t address = allocate_pages(fw, limit, kBelow4G);
  if (!address) return kOutOfResources;
  const auto* text = static_cast<const char16_t*>(image.load_options);
  utf16_command_line_to_utf8(text, image.load_options_size / 2, reinterpret_cast<char*>(address), limit);
  params->set_command_line_address(address);
  return kSuccess;
}

const char* command_line(const boot::BootParams& params) {
  return reinterpret_cast<const char*>(params.command_line_address());
}

uint64_t length(const char* text) {
  uint64_t n = 0;
  while (text && text[n]) ++n;
  return n;
}

// The stub's options, as the EFI entry needs them before the common path reads them itself.
StubOptions read_options(const boot::BootParams& params) {
  return parse_stub_options(command_line(params), length(command_line(params)));
}

// boot_params.secure_boot as the Linux EFI stub reports it (efi_secureboot_mode).
uint8_t secure_boot_mode(const Firmware& fw) {
  constexpr uint8_t kDisabled = 2, kEnabled = 3, kUnknown = 1;
  auto variable = [&](const char16_t* name, uint8_t* value) {
    uint64_t size = 1;
    return fw.system->runtime_services->get_variable(name, &kGlobalVariable, nullptr, &size, value);
  };
  uint8_t secure_boot = 0, setup_mode = 0;
  EfiStatus status = variable(u"SecureBoot", &secure_boot);
  if (status == kNotFound) return kDisabled;
  if (failed(status) || failed(variable(u"SetupMode", &setup_mode))) return kUnknown;
  return secure_boot == 1 && setup_mode == 0 ? kEnabled : kDisabled;
}

// EFI_RNG_PROTOCOL's bytes for KASLR, when the firmware has it.
uint64_t firmware_entropy(const Firmware& fw, uint8_t* bytes, uint64_t size) {
  Rng* rng = locate_protocol<Rng, kRngProtocol>(fw);
  if (!rng) return 0;
  return failed(rng->get_rng(rng, nullptr, size, bytes)) ? 0 : size;
}

// ExitBootServices needs the key of the current map; the map changes under us (timers), so the
// specification's retry: read it again, without allocating, and try once more.
EfiStatus exit_boot_services(const Firmware& fw, MemoryMap* map) {
  EfiStatus status = fw.boot->exit_boot_services(fw.image, map->key);
  if (status != kInvalidParameter) return status;
  status = reread_memory_map(fw, map);
  if (failed(status)) return status;
  return fw.boot->exit_boot_services(fw.image, map->key);
}

// After ExitBootServices: the kernel's view of the firmware (efi_info, e820; the unaccepted memory
// table's bits, when the kernel accepts memory itself).
void hand_over_memory_map(const MemoryMap& map, const Firmware& fw, boot::BootParams* params, boot::SetupData* extended,
                          uint32_t extended_capacity, LinuxUnacceptedMemory* unaccepted) {
  boot::EfiInfo& info = params->efi_info;
  uint64_t system = reinterpret_cast<uint64_t>(fw.system), buffer = reinterpret_cast<uint64_t>(map.view.descriptors);
  info.efi_loader_signature = boot::kEfiLoaderSignature64;
  info.efi_systab = static_cast<uint32_t>(system);
  info.efi_systab_hi = static_cast<uint32_t>(system >> 32);
  info.efi_memdesc_size = static_cast<uint32_t>(map.view.descriptor_size);
  info.efi_memdesc_version = map.descriptor_version;
  info.efi_memmap = static_cast<uint32_t>(buffer);
  info.efi_memmap_hi = static_cast<uint32_t>(buffer >> 32);
  info.efi_memmap_size = static_cast<uint32_t>(map.view.size);
  auto* entries = reinterpret_cast<boot::E820Entry*>(extended + 1);
  uint32_t extra =
      efi_memory_map_to_e820(map.view, E820View::kHandover, params, entries, extended_capacity, unaccepted);
  if (!extra) return;
  extended->type = boot::kSetupE820Ext;
  extended->len = static_cast<uint32_t>(extra * sizeof(boot::E820Entry));
  extended->next = params->hdr.setup_data;
  params->hdr.setup_data = reinterpret_cast<uint64_t>(extended);
}

// Our own boot_params, for a loader that gave none (UEFI LoadImage/StartImage): zeroed, with the
// image's setup header, and the command line and initrd the loader meant for it.
EfiStatus make_boot_params(const Firmware& fw, const LoadedImage& image, boot::BootParams** out) {
  auto* params = reinterpret_cast<boot::BootParams*>(allocate_pages(fw, sizeof(boot::BootParams), kBelow4G));
  if (!params) return report(fw, "no memory for boot_params", kOutOfResources);
  *params = boot::BootParams{};
  __builtin_memcpy(&params->hdr, static_cast<const uint8_t*>(image.image_base) + boot::kSetupHeaderOffset,
                   sizeof(params->hdr));
  params->hdr.type_of_loader = kLoaderTypeEfiStub;
  EfiStatus status = store_command_line(fw, image, params);
  if (failed(status)) return report(fw, "no memory for the command line", status);
  status = load_initrd(fw, image.device_handle, command_line(*params), params);
  if (failed(status) && status != kNotFound) return report(fw, "cannot load the initrd", status);
  *out = params;
  return kSuccess;
}

// The kernel's place is chosen in free memory as the firmware sees it now.
EfiStatus store_free_memory(const Firmware& fw, boot::BootParams* params) {
  MemoryMap now;
  EfiStatus status = read_memory_map(fw, 0, &now);
  if (failed(status)) return report(fw, "cannot read the memory map", status);
  memory_map_to_e820(now, true, params, nullptr, 0);
  fw.boot->free_pool(now.buffer());
  return kSuccess;
}

// A confidential VM's boot (unpack_for_boot) with the firmware's memory, on the boot CPU: each
// range the engine writes is claimed from the firmware first; on an error every claimed page goes back.
EfiStatus unpack_into_firmware_pages(const Firmware& fw, Handover& handover, const StubOptions& options, RunReport* run,
                                     UnpackResult* result) {
  handover.firmware.entropy_size =
      static_cast<uint32_t>(firmware_entropy(fw, handover.firmware.entropy, sizeof(handover.firmware.entropy)));
  FirmwareMemory memory(fw);
  // Debian's codec libraries are built for user space: their leaf functions keep data below the
  // stack pointer (the SysV red zone), which the firmware's timer interrupt would overwrite. So
  // the engine runs with interrupts off (FirmwareMemory turns them off again after each call into
  // the firmware, which turns them back on).
  asm volatile("cli" ::: "memory");
  BootEnvironment env;
  // The e820 table store_free_memory wrote from the firmware's free memory.
  StubStatus unpacked = read_boot_environment(*handover.params, reinterpret_cast<uint64_t>(handover.params), memory,
                                              &env, RamSource::kE820);
  // As on the common path: nothing placed where the command line keeps memory from the kernel.
  if (unpacked.ok()) unpacked = keep_command_line_memory(options.kaslr, env);
  if (unpacked.ok())
    unpacked = unpack_for_boot(handover, options, BootResources{&memory, &env, nullptr, 0, run}, result);
  // The whole span is the kernel's, gaps between segments included, before the firmware hands
  // any of it out.
  if (unpacked.ok() && !memory.claim(range_of(result->base, result->kernel.span())))
    unpacked = fail("the firmware refused the kernel's pages", result->base, result->kernel.span());
  asm volatile("sti" ::: "memory");
  if (!unpacked.ok()) {
    memory.release();
    return report(fw, unpacked);
  }
  HelperCounts one_cpu{};
  if (options.debug) print_helper_counts(one_cpu, *result, *handover.packer_record);
  report_result(*run, *result, one_cpu);
  EfiStatus status = protect_kernel_text(fw, *result);
  if (!failed(status)) return kSuccess;
  memory.release();
  return report(fw, "cannot make the kernel's text executable", status);
}

// The run report in a page of loader data, which the kernel keeps as a setup_data node. No page
// leaves the boot without one.
RunReport* leave_run_report(const Firmware& fw, const RunReport& run, boot::BootParams* params) {
  uint64_t address = allocate_pages(fw, kRunReportNodeSize, kBelow4G);
  if (!address) return nullptr;
  return link_run_report(*params, address, reinterpret_cast<uint8_t*>(address), run);
}

// The paging mode the kernel starts in, as the Linux EFI stub picks it (x86-5lvl.c): when the
// firmware's differs, pages below 4 GiB for the switch now, the switch after ExitBootServices.
struct PagingSwitch {
  bool five_levels = false;
  uint64_t low_pages = 0;  // none: no switch
};

EfiStatus prepare_paging_switch(const Firmware& fw, const PackerRecord& record, const StubOptions& options,
                                PagingSwitch* out) {
  out->five_levels = kernel_wants_five_levels(record, options);
  if (out->five_levels == five_level_paging_on()) return kSuccess;
  out->low_pages = allocate_pages(fw, kLevelSwitchSize, kBelow4G, kLoaderCode);
  return out->low_pages ? kSuccess : report(fw, "no memory below 4 GiB to switch the paging levels", kOutOfResources);
}

// Room for e820 entries past the zero page's 128 (and the unaccepted memory table, for a kernel
// that accepts memory itself), then the final map and ExitBootServices, efi_info and e820. On
// success boot services are gone: the caller may call nothing of the firmware's but its runtime
// services.
EfiStatus leave_boot_services(const Firmware& fw, boot::BootParams* params, bool kernel_accepts_memory) {
  MemoryMap final_map;
  EfiStatus status = read_memory_map(fw, 16, &final_map);
  if (failed(status)) return report(fw, "cannot read the memory map", status);
  uint32_t extended_capacity = static_cast<uint32_t>(final_map.capacity / final_map.view.descriptor_size);
  void* extended = nullptr;
  status = fw.boot->allocate_pool(kLoaderData, sizeof(boot::SetupData) + extended_capacity * sizeof(boot::E820Entry),
                                  &extended);
  if (failed(status)) return report(fw, "no memory for the e820 table", status);
  LinuxUnacceptedMemory* unaccepted = nullptr;
  if (kernel_accepts_memory) status = prepare_unaccepted_memory(fw, final_map, &unaccepted);
  if (failed(status)) return report(fw, "cannot hand over unaccepted memory", status);
  status = reread_memory_map(fw, &final_map);
  if (!failed(status)) status = exit_boot_services(fw, &final_map);
  if (failed(status)) return report(fw, "ExitBootServices failed", status);
  hand_over_memory_map(final_map, fw, params, static_cast<boot::SetupData*>(extended), extended_capacity, unaccepted);
  return kSuccess;
}

// The 64-bit entry's common path (stub/entry/entry64.S, startup_efi_64), RSI = boot_params, RDX =
// what this entry keeps for it: its own GDT, stack and identity map, and from there the boot every
// loader's entry runs (stub/boot/stub_main.cc).
[[noreturn]] void enter_entry64(boot::BootParams* params, const FirmwareFacts* facts) {
  asm volatile("jmp startup_efi_64" : : "S"(params), "d"(facts) : "memory");
  __builtin_unreachable();
}

// A machine that is not a confidential VM: everything that needs the firmware, then
// ExitBootServices, then the 64-bit entry decodes the kernel on every CPU, starting the others
// with INIT-SIPI-SIPI as the kernel does, and proves each frame as it lands. (EDK2's MP services,
// the way to borrow the other CPUs before ExitBootServices, wait PcdCpuInitIpiDelayInMicroSeconds,
// 10 ms, between INIT and SIPI on every wake: more than a second CPU saves decoding lz4 on a fast
// machine.) A damaged payload therefore halts the machine with its message on COM1, as the stock
// 6.1 image's decompressor does after its EFI stub. Returns only when the firmware is still up.
EfiStatus hand_over_to_entry64(const Firmware& fw, const Handover& handover) {
  boot::BootParams* params = handover.params;
  store_pci_roms(fw, params);
  // In loader data below 4 GiB, where the 64-bit entry's identity map reaches; stub_entry copies it
  // before anything is decoded.
  auto* facts = reinterpret_cast<FirmwareFacts*>(allocate_pages(fw, sizeof(FirmwareFacts), kBelow4G));
  if (!facts) return report(fw, "no memory for the hand-over", kOutOfResources);
  *facts = FirmwareFacts{};
  facts->entry = handover.entry;
  facts->start_tsc = handover.start_tsc;
  facts->entropy_size = static_cast<uint32_t>(firmware_entropy(fw, facts->entropy, sizeof(facts->entropy)));
  EfiStatus status = leave_boot_services(fw, params, handover.packer_record->flags & kStubKernelAcceptsMemory);
  if (failed(status)) return status;
  enter_entry64(params, facts);
}

// A confidential VM: the kernel decoded into the firmware's pages on the boot CPU (see above),
// then ExitBootServices, then the kernel. Returns only when the firmware is still up.
EfiStatus boot_confidential_vm(const Firmware& fw, Handover& handover, const StubOptions& options) {
  const PackerRecord& record = *handover.packer_record;
  boot::BootParams* params = handover.params;
  RunReport run = start_run_report(static_cast<Codec>(uint32_t{record.codec}), handover.entry, handover.start_tsc);
  UnpackResult result;
  PagingSwitch paging;
  EfiStatus status = store_free_memory(fw, params);
  if (!failed(status)) status = unpack_into_firmware_pages(fw, handover, options, &run, &result);
  if (!failed(status)) status = prepare_paging_switch(fw, record, options, &paging);
  if (failed(status)) return status;
  store_pci_roms(fw, params);
  RunReport* left = leave_run_report(fw, run, params);
  status = leave_boot_services(fw, params, record.flags & kStubKernelAcceptsMemory);
  if (failed(status)) return status;
  if (paging.low_pages) {
    StubStatus switched = switch_paging_levels(paging.five_levels, paging.low_pages);
    if (!switched.ok()) stop_boot(switched, options);
  }
  if (left) left->kernel_entry_tsc = rdtsc();
  enter_kernel(result.entry, params);
}

// Both entries' whole job, from the firmware's hands to the kernel's. Returns only on an error,
// which it has printed on ConOut.
EfiStatus start_kernel_from_firmware(const Firmware& fw, boot::BootParams* given) {
  Handover handover;
  handover.start_tsc = rdtsc();
  handover.efi_application = true;
  // Before anything a confidential VM could not survive (efi_confidential_vm.cc).
  ConfidentialVm vm;
  EfiStatus status = check_confidential_vm(fw, &vm);
  if (failed(status)) return status;
  const auto* record = reinterpret_cast<const PackerRecord*>(__stub_end);
  StubStatus checked = check_packer_record(*record, static_cast<uint64_t>(__stub_end - startup_32));
  if (!checked.ok()) return report(fw, checked);
  handover.packer_record = record;
  handover.image_base = startup_32;
  handover.entry = given ? RunEntry::kEfiHandover : RunEntry::kEfiPe;

  void* interface = nullptr;
  status = fw.boot->handle_protocol(fw.image, &kLoadedImageProtocol, &interface);
  if (failed(status)) return report(fw, "no LoadedImage protocol", status);
  // boot_params: the handover loader's, or ours.
  boot::BootParams* params = given;
  if (!params) status = make_boot_params(fw, *static_cast<const LoadedImage*>(interface), &params);
  if (!failed(status)) status = store_confidential_vm_blob(fw, vm, params);
  if (failed(status)) return status;
  handover.params = params;
  StubOptions options = read_options(*params);
  if (options.debug) serial::write("kpack: efi entry\n");
  store_framebuffer(fw, &params->screen_info);
  params->secure_boot = secure_boot_mode(fw);
  install_random_seed(fw);
  install_tpm_event_log(fw);

  // kpack.test_decode_before_exit: a plain machine takes the confidential VMs' way, so the boot
  // tests reach it under OVMF (tests/efi/efi-before-exit.sh, tests/bad_input/boot-corrupt.sh).
  if (vm == ConfidentialVm::kNone && !options.test_decode_before_exit) return hand_over_to_entry64(fw, handover);
  handover.boot_services_up = true;
  return boot_confidential_vm(fw, handover, options);
}

}  // namespace
}  // namespace kpack::efi

using namespace kpack::efi;

KPACK_EFIAPI EfiStatus efi_pe_entry(Handle image, SystemTable* system) {
  prepare_stub();
  Firmware fw{image, system, system->boot_services};
  return start_kernel_from_firmware(fw, nullptr);
}

void efi_handover_entry(Handle image, SystemTable* system, kpack::boot::BootParams* params) {
  prepare_stub();
  Firmware fw{image, system, system->boot_services};
  EfiStatus status = start_kernel_from_firmware(fw, params);
  // The handover protocol has no return: end the calling image, as the Linux EFI stub does.
  using ExitFunction = EfiStatus(KPACK_EFIAPI*)(Handle, EfiStatus, uint64_t, void*);
  reinterpret_cast<ExitFunction>(fw.boot->exit)(image, status, 0, nullptr);
  kpack::halt();
}
