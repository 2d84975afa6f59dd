// The EFI entries: the PE entry point that makes a kpack image an EFI application (UEFI
// LoadImage/StartImage: firmware boot managers, the UEFI shell, systemd-boot, systemd-stub, shim),
// and the EFI handover entry for loaders that fill boot_params themselves (GRUB's linuxefi).
// Both take from the firmware what the Linux EFI stub takes (command line, initrd, framebuffer,
// random seed, TPM event log, PCI option ROMs), call ExitBootServices and fill efi_info and e820,
// then hand the machine to the one boot path on bare metal (stub/boot/bare_metal.h), as the stock
// 6.1 EFI stub hands it to its decompressor: it decodes the kernel on every CPU, starting the others
// itself, and enters it. A confidential VM is the exception (firmware_platform.cc): its kernel is
// decoded on the boot CPU into pages claimed from the firmware before ExitBootServices.
// Until ExitBootServices an error is printed on ConOut and returned, so a boot manager can fall
// back to another entry; after it, an error halts with its line on COM1.
#include "stub/arch/cpu.h"
#include "stub/arch/halt.h"
#include "stub/arch/serial.h"
#include "stub/boot/bare_metal.h"
#include "stub/efi/efi_boot.h"
#include "stub/efi/efi_tpm.h"
#include "stub/entry/entry_asm.h"
#include "stub/entry/stub_image.h"
#include "stub/options/stub_options.h"
#include "stub/options/utf16_command_line.h"
#include "stub/runtime/stack_protector.h"

extern "C" {
KPACK_EFIAPI kpack::efi::EfiStatus efi_pe_entry(kpack::efi::Handle image,
                                                kpack::efi::SystemTable* system) KPACK_ASM_SYMBOL;
void efi_handover_entry(kpack::efi::Handle image, kpack::efi::SystemTable* system,
                        kpack::boot::BootParams* params) KPACK_ASM_SYMBOL;
}

namespace kpack::efi {
namespace {

constexpr uint8_t kLoaderTypeEfiStub = 0x21;  // what the Linux EFI stub writes to type_of_loader

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

// The stub's options, read once here: the EFI entry needs them before the boot path, which takes
// them from BootInputs.
StubOptions read_stub_options(const boot::BootParams& params) {
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

// A machine that is not a confidential VM: everything that needs the firmware, then
// ExitBootServices, then the one boot path on bare metal decodes the kernel on every CPU, starting
// the others with INIT-SIPI-SIPI as the kernel does, and proves each frame as it lands. (EDK2's MP
// services, the way to borrow the other CPUs before ExitBootServices, wait
// PcdCpuInitIpiDelayInMicroSeconds, 10 ms, between INIT and SIPI on every wake: more than a second
// CPU saves decoding lz4 on a fast machine.) A damaged payload therefore halts the machine with its
// message on COM1, as the stock 6.1 image's decompressor does after its EFI stub. Returns only when
// the firmware is still up.
EfiStatus boot_after_exit(const Firmware& fw, const BootInputs& inputs) {
  EfiStatus status = leave_boot_services(fw, inputs);
  if (failed(status)) return status;
  boot_after_firmware(inputs);
}

// Both entries' whole job, from the firmware's hands to the kernel's, once the stub is relocated.
// Returns only on an error, which it has printed on ConOut.
EfiStatus start_kernel_from_firmware(const Firmware& fw, boot::BootParams* given, BootInputs& inputs) {
  inputs.efi_application = true;
  inputs.entry = given ? RunEntry::kEfiHandover : RunEntry::kEfiPe;
  // Before anything a confidential VM could not survive (efi_confidential_vm.cc).
  ConfidentialVm vm;
  EfiStatus status = check_confidential_vm(fw, &vm);
  if (failed(status)) return status;
  StubStatus checked = take_packer_record(&inputs);
  if (!checked.ok()) return report(fw, checked);

  void* interface = nullptr;
  status = fw.boot->handle_protocol(fw.image, &kLoadedImageProtocol, &interface);
  if (failed(status)) return report(fw, "no LoadedImage protocol", status);
  // boot_params: the handover loader's, or ours.
  boot::BootParams* params = given;
  if (!params) status = make_boot_params(fw, *static_cast<const LoadedImage*>(interface), &params);
  if (!failed(status)) status = store_confidential_vm_blob(fw, vm, params);
  if (failed(status)) return status;
  inputs.params = params;
  inputs.options = read_stub_options(*params);
  inputs.options_read = true;
  if (inputs.options.debug) serial::write("kpack: efi entry\n");
  store_framebuffer(fw, &params->screen_info);
  params->secure_boot = secure_boot_mode(fw);
  install_random_seed(fw);
  install_tpm_event_log(fw);
  inputs.entropy_size = static_cast<uint32_t>(firmware_entropy(fw, inputs.entropy, sizeof(inputs.entropy)));

  // kpack.test_decode_before_exit: a plain machine takes the confidential VMs' way, so the boot
  // tests reach it under OVMF (tests/efi/efi-before-exit.sh, tests/bad_input/boot-corrupt.sh).
  if (vm == ConfidentialVm::kNone && !inputs.options.test_decode_before_exit) return boot_after_exit(fw, inputs);
  return boot_before_exit(fw, inputs);
}

// Before any pointer is used: our own relocations (the PE image carries none), and %fs for the
// codec libraries' stack-protector canary (the firmware does not use %fs).
EfiStatus start_kernel(Handle image, SystemTable* system, boot::BootParams* given) {
  BootInputs inputs;
  inputs.start_tsc = rdtsc();
  inputs.image_base = startup_32;
  relocate_stub(&inputs);
  set_fs_base(stub_tls);
  Firmware fw{image, system, system->boot_services};
  return start_kernel_from_firmware(fw, given, inputs);
}

}  // namespace
}  // namespace kpack::efi

using namespace kpack::efi;

KPACK_EFIAPI EfiStatus efi_pe_entry(Handle image, SystemTable* system) { return start_kernel(image, system, nullptr); }

void efi_handover_entry(Handle image, SystemTable* system, kpack::boot::BootParams* params) {
  EfiStatus status = start_kernel(image, system, params);
  // The handover protocol has no return: end the calling image, as the Linux EFI stub does.
  using ExitFunction = EfiStatus(KPACK_EFIAPI*)(Handle, EfiStatus, uint64_t, void*);
  reinterpret_cast<ExitFunction>(system->boot_services->exit)(image, status, 0, nullptr);
  kpack::halt();
}
