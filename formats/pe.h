// PE/COFF (Microsoft's "PE Format" specification) as far as a kpack image uses it: the MZ stub's
// pointer, the COFF header, the PE32+ optional header and the section table that make the image an
// EFI application (UEFI 2.10, 2.1.1) while it stays a boot-protocol image. One definition for the
// packer, `kpack info`, the tests and the fuzzers.
#pragma once

#include <stddef.h>

#include "formats/le.h"

namespace kpack::pe {

inline constexpr uint16_t kDosMagic = 0x5A4D;          // "MZ" at offset 0
inline constexpr uint32_t kDosNewHeaderOffset = 0x3C;  // e_lfanew: where "PE\0\0" is
inline constexpr uint32_t kLinuxPeMagicOffset = 0x38;  // where Linux keeps LINUX_PE_MAGIC
inline constexpr uint32_t kLinuxPeMagic = 0x818223CD;
inline constexpr uint32_t kSignature = 0x00004550;  // "PE\0\0"

struct CoffHeader {
  ul16 machine;
  ul16 number_of_sections;
  ul32 time_date_stamp;
  ul32 pointer_to_symbol_table;
  ul32 number_of_symbols;
  ul16 size_of_optional_header;
  ul16 characteristics;
};
static_assert(sizeof(CoffHeader) == 20);

inline constexpr uint16_t kMachineAmd64 = 0x8664;
// characteristics
inline constexpr uint16_t kRelocsStripped = 0x0001;
inline constexpr uint16_t kExecutableImage = 0x0002;
inline constexpr uint16_t kLineNumsStripped = 0x0004;
inline constexpr uint16_t kDebugStripped = 0x0200;

struct DataDirectory {
  ul32 virtual_address;
  ul32 size;
};

inline constexpr uint32_t kDirectoryCount = 6;     // as stock images: up to the base relocations
inline constexpr uint32_t kDirectorySecurity = 4;  // the Authenticode certificate table (a file offset)
inline constexpr uint32_t kDirectoryBaseReloc = 5;

struct OptionalHeader64 {
  ul16 magic;
  uint8_t major_linker_version;
  uint8_t minor_linker_version;
  ul32 size_of_code;
  ul32 size_of_initialized_data;
  ul32 size_of_uninitialized_data;
  ul32 address_of_entry_point;
  ul32 base_of_code;
  ul64 image_base;
  ul32 section_alignment;
  ul32 file_alignment;
  ul16 major_operating_system_version;
  ul16 minor_operating_system_version;
  ul16 major_image_version;
  ul16 minor_image_version;
  ul16 major_subsystem_version;
  ul16 minor_subsystem_version;
  ul32 win32_version_value;
  ul32 size_of_image;
  ul32 size_of_headers;
  ul32 check_sum;
  ul16 subsystem;
  ul16 dll_characteristics;
  ul64 size_of_stack_reserve;
  ul64 size_of_stack_commit;
  ul64 size_of_heap_reserve;
  ul64 size_of_heap_commit;
  ul32 loader_flags;
  ul32 number_of_rva_and_sizes;
  DataDirectory directories[kDirectoryCount];
};
static_assert(sizeof(OptionalHeader64) == 112 + 8 * kDirectoryCount);
static_assert(offsetof(OptionalHeader64, address_of_entry_point) == 16);
static_assert(offsetof(OptionalHeader64, image_base) == 24);
static_assert(offsetof(OptionalHeader64, major_image_version) == 44);
static_assert(offsetof(OptionalHeader64, size_of_image) == 56);
static_assert(offsetof(OptionalHeader64, check_sum) == 64);
static_assert(offsetof(OptionalHeader64, subsystem) == 68);
static_assert(offsetof(OptionalHeader64, number_of_rva_and_sizes) == 108);
static_assert(offsetof(OptionalHeader64, directories) == 112);

inline constexpr uint16_t kPe32PlusMagic = 0x020B;
inline constexpr uint16_t kSubsystemEfiApplication = 10;
inline constexpr uint16_t kDllNxCompat = 0x0100;
// major_image_version, as the Linux EFI stub uses it: which initrd sources the image understands.
inline constexpr uint16_t kImageInitrdLoadFile2 = 1 << 0;
inline constexpr uint16_t kImageInitrdCommandLine = 1 << 1;

struct SectionHeader {
  char name[8];
  ul32 virtual_size;
  ul32 virtual_address;
  ul32 size_of_raw_data;
  ul32 pointer_to_raw_data;
  ul32 pointer_to_relocations;
  ul32 pointer_to_linenumbers;
  ul16 number_of_relocations;
  ul16 number_of_linenumbers;
  ul32 characteristics;
};
static_assert(sizeof(SectionHeader) == 40);
static_assert(offsetof(SectionHeader, characteristics) == 36);

// Section characteristics.
inline constexpr uint32_t kSectionCode = 0x00000020;
inline constexpr uint32_t kSectionInitializedData = 0x00000040;
inline constexpr uint32_t kSectionDiscardable = 0x02000000;
inline constexpr uint32_t kSectionExecute = 0x20000000;
inline constexpr uint32_t kSectionRead = 0x40000000;
inline constexpr uint32_t kSectionWrite = 0x80000000;

// The headers as one block, right after the "PE\0\0" signature.
struct NtHeaders {
  ul32 signature;
  CoffHeader coff;
  OptionalHeader64 optional;
};
static_assert(sizeof(NtHeaders) == 4 + 20 + 160);

}  // namespace kpack::pe
