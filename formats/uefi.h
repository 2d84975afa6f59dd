// The UEFI interfaces the EFI entry uses (UEFI 2.10), declared as the specification lays them
// out: tables of MS-ABI function pointers. Only what kpack calls is typed; the rest is padding.
// Also the TCG2 protocol and the event layouts measured boot writes (TCG PC Client Platform EFI
// Protocol Specification; EDK2 Tcg2Protocol.h) and Linux's TPM event-log table.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "formats/efi_memory.h"

namespace kpack::efi {

#define KPACK_EFIAPI __attribute__((ms_abi))

using EfiStatus = uint64_t;
using Handle = void*;

inline constexpr EfiStatus kSuccess = 0;
inline constexpr EfiStatus kErrorBit = 1ull << 63;
inline constexpr EfiStatus kLoadError = kErrorBit | 1;
inline constexpr EfiStatus kInvalidParameter = kErrorBit | 2;
inline constexpr EfiStatus kUnsupported = kErrorBit | 3;
inline constexpr EfiStatus kBufferTooSmall = kErrorBit | 5;
inline constexpr EfiStatus kOutOfResources = kErrorBit | 9;
inline constexpr EfiStatus kNotFound = kErrorBit | 14;
inline bool failed(EfiStatus s) { return s & kErrorBit; }

struct Guid {
  uint32_t data1;
  uint16_t data2, data3;
  uint8_t data4[8];
};
static_assert(sizeof(Guid) == 16);

inline constexpr Guid kLoadedImageProtocol = {
    0x5B1B31A1, 0x9562, 0x11D2, {0x8E, 0x3F, 0x00, 0xA0, 0xC9, 0x69, 0x72, 0x3B}};
inline constexpr Guid kGraphicsOutputProtocol = {
    0x9042A9DE, 0x23DC, 0x4A38, {0x96, 0xFB, 0x7A, 0xDE, 0xD0, 0x80, 0x51, 0x6A}};
inline constexpr Guid kRngProtocol = {0x3152BCA5, 0xEADE, 0x433D, {0x86, 0x2E, 0xC0, 0x1C, 0xDC, 0x29, 0x1F, 0x44}};
inline constexpr Guid kLoadFile2Protocol = {
    0x4006C0C1, 0xFCB3, 0x403E, {0x99, 0x6D, 0x4A, 0x6C, 0x87, 0x24, 0xE0, 0x6D}};
inline constexpr Guid kDevicePathProtocol = {
    0x09576E91, 0x6D3F, 0x11D2, {0x8E, 0x39, 0x00, 0xA0, 0xC9, 0x69, 0x72, 0x3B}};
inline constexpr Guid kSimpleFileSystemProtocol = {
    0x964E5B22, 0x6459, 0x11D2, {0x8E, 0x39, 0x00, 0xA0, 0xC9, 0x69, 0x72, 0x3B}};
inline constexpr Guid kFileInfo = {0x09576E92, 0x6D3F, 0x11D2, {0x8E, 0x39, 0x00, 0xA0, 0xC9, 0x69, 0x72, 0x3B}};
inline constexpr Guid kGlobalVariable = {0x8BE4DF61, 0x93CA, 0x11D2, {0xAA, 0x0D, 0x00, 0xE0, 0x98, 0x03, 0x2B, 0x8C}};
// The vendor media device path Linux loaders install their LoadFile2 initrd on.
inline constexpr Guid kLinuxInitrdMedia = {
    0x5568E427, 0x68FC, 0x4F3D, {0xAC, 0x74, 0xCA, 0x55, 0x52, 0x31, 0xCC, 0x68}};
// The configuration table's ACPI entries: the 2.0 RSDP, and the 1.0 one older firmware gives.
inline constexpr Guid kAcpi20Table = {0x8868E871, 0xE4F1, 0x11D3, {0xBC, 0x22, 0x00, 0x80, 0xC7, 0x3C, 0x88, 0x81}};
inline constexpr Guid kAcpi10Table = {0xEB9D2D30, 0x2D88, 0x11D3, {0x9A, 0x16, 0x00, 0x90, 0x27, 0x3F, 0xC1, 0x4D}};
// Measured boot: the TPM's protocol, its final events table, and the table the kernel reads the
// event log from (Linux's LINUX_EFI_TPM_EVENT_LOG_GUID).
inline constexpr Guid kTcg2Protocol = {0x607F766C, 0x7455, 0x42BE, {0x93, 0x0B, 0xE4, 0xD7, 0x6D, 0xB2, 0x72, 0x0F}};
inline constexpr Guid kTcg2FinalEventsTable = {
    0x1E2ED096, 0x30E2, 0x4254, {0xBD, 0x89, 0x86, 0x3B, 0xBE, 0xF8, 0x23, 0x25}};
inline constexpr Guid kLinuxTpmEventLog = {
    0xB7799CB0, 0xECA2, 0x4943, {0x96, 0x67, 0x1F, 0xAE, 0x07, 0xB7, 0x47, 0xFA}};

// Linux's random seed table (LINUX_EFI_RANDOM_SEED_TABLE_GUID, struct linux_efi_random_seed: a
// 32-bit size, then the bytes), and the algorithm GUID that asks EFI_RNG_PROTOCOL for raw entropy.
inline constexpr Guid kLinuxRandomSeedTable = {
    0x1CE1E5BC, 0x7CEB, 0x42F2, {0x81, 0xE5, 0x8A, 0xAD, 0xF1, 0x80, 0xF5, 0x7B}};
inline constexpr Guid kRngAlgorithmRaw = {0xE43176D7, 0xB6E8, 0x4827, {0xB7, 0x84, 0x7F, 0xFD, 0xC4, 0xB6, 0x85, 0x61}};
struct LinuxRandomSeed {
  uint32_t size;
  uint8_t bits[];
};
static_assert(offsetof(LinuxRandomSeed, bits) == 4);
inline constexpr uint32_t kRandomSeedSize = 32;      // EFI_RANDOM_SEED_SIZE
inline constexpr uint32_t kRandomSeedMaxKept = 512;  // a larger earlier seed is taken as corrupt
// SEV-SNP: the firmware's confidential-computing blob (EFI_CC_BLOB_GUID), which starts with
// CC_BLOB_SEV_HDR_MAGIC ("AMDE" little-endian).
inline constexpr Guid kCcBlobTable = {0x067B1F5F, 0xCF26, 0x44C5, {0x85, 0x54, 0x93, 0xD7, 0x77, 0x91, 0x2D, 0x42}};
inline constexpr uint32_t kCcBlobMagic = 0x45444D41;
// EFI_MEMORY_ATTRIBUTE_PROTOCOL (UEFI 2.10, 7.6): page protections on the firmware's page tables.
inline constexpr Guid kMemoryAttributeProtocol = {
    0xF4560CF6, 0x40EC, 0x4B4A, {0xA1, 0x92, 0xBF, 0x1D, 0x57, 0xD0, 0xB1, 0x89}};
// Unaccepted memory (EfiUnacceptedMemoryType) in confidential VMs. EDK2's memory acceptance protocol
// (OvmfPkg's OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL; Linux's OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID):
// without its one call the firmware accepts all memory at ExitBootServices. Then Linux's table of
// what is still unaccepted (LINUX_EFI_UNACCEPTED_MEM_TABLE_GUID, struct efi_unaccepted_memory): one
// bit per unit_size bytes from phys_base, bit n in byte n / 8 (Linux's unsigned long bitmap on a
// little-endian CPU), set while the unit is unaccepted.
inline constexpr Guid kMemoryAcceptanceProtocol = {
    0xC5A010FE, 0x38A7, 0x4531, {0x8A, 0x4A, 0x05, 0x00, 0xD2, 0xFD, 0x16, 0x49}};
inline constexpr Guid kLinuxUnacceptedMemoryTable = {
    0xD5D1DE3C, 0x105C, 0x44F9, {0x9E, 0xA9, 0xBC, 0xEF, 0x98, 0x12, 0x00, 0x31}};
struct LinuxUnacceptedMemory {
  uint32_t version;
  uint32_t unit_size;
  uint64_t phys_base;
  uint64_t size;  // bytes of bitmap
  uint8_t bitmap[];
};
static_assert(offsetof(LinuxUnacceptedMemory, unit_size) == 4 && offsetof(LinuxUnacceptedMemory, phys_base) == 8);
static_assert(offsetof(LinuxUnacceptedMemory, size) == 16 && offsetof(LinuxUnacceptedMemory, bitmap) == 24);
static_assert(sizeof(LinuxUnacceptedMemory) == 24);
inline constexpr uint32_t kUnacceptedMemoryTableVersion = 1;
inline constexpr uint32_t kUnacceptedUnitSize = 2u << 20;  // x86's EFI_UNACCEPTED_UNIT_SIZE (PMD_SIZE)
// EFI_PCI_IO_PROTOCOL (UEFI 2.10, 14.4; EDK2 MdePkg/Include/Protocol/PciIo.h): one per PCI function,
// which also carries the copy of the function's option ROM the firmware read at enumeration.
inline constexpr Guid kPciIoProtocol = {0x4CF5B200, 0x68B8, 0x4CA5, {0x9E, 0xEC, 0xB2, 0x3E, 0x3F, 0x50, 0x02, 0x9A}};

struct TableHeader {
  uint64_t signature;
  uint32_t revision, header_size, crc32, reserved;
};

struct SimpleTextOutput {
  void* reset;
  EfiStatus(KPACK_EFIAPI* output_string)(SimpleTextOutput* self, const char16_t* text);
};

enum AllocateType : uint32_t { kAllocateAnyPages = 0, kAllocateMaxAddress = 1, kAllocateAddress = 2 };
enum LocateSearchType : uint32_t { kLocateAllHandles = 0, kLocateByRegisterNotify = 1, kLocateByProtocol = 2 };

struct BootServices {
  TableHeader header;
  void* raise_tpl;
  void* restore_tpl;
  EfiStatus(KPACK_EFIAPI* allocate_pages)(AllocateType type, MemoryType memory_type, uint64_t pages, uint64_t* address);
  EfiStatus(KPACK_EFIAPI* free_pages)(uint64_t address, uint64_t pages);
  EfiStatus(KPACK_EFIAPI* get_memory_map)(uint64_t* map_size, MemoryDescriptor* map, uint64_t* map_key,
                                          uint64_t* descriptor_size, uint32_t* descriptor_version);
  EfiStatus(KPACK_EFIAPI* allocate_pool)(MemoryType type, uint64_t size, void** buffer);
  EfiStatus(KPACK_EFIAPI* free_pool)(void* buffer);
  EfiStatus(KPACK_EFIAPI* create_event)(uint32_t type, uint64_t notify_tpl, void* notify, void* context, void** event);
  void* set_timer;
  void* wait_for_event;
  void* signal_event;
  EfiStatus(KPACK_EFIAPI* close_event)(void* event);
  EfiStatus(KPACK_EFIAPI* check_event)(void* event);
  void* install_protocol_interface;
  void* reinstall_protocol_interface;
  void* uninstall_protocol_interface;
  EfiStatus(KPACK_EFIAPI* handle_protocol)(Handle handle, const Guid* protocol, void** interface);
  void* reserved;
  void* register_protocol_notify;
  void* locate_handle;
  EfiStatus(KPACK_EFIAPI* locate_device_path)(const Guid* protocol, void** device_path, Handle* device);
  EfiStatus(KPACK_EFIAPI* install_configuration_table)(const Guid* guid, void* table);
  void* load_image;
  void* start_image;
  void* exit;
  void* unload_image;
  EfiStatus(KPACK_EFIAPI* exit_boot_services)(Handle image, uint64_t map_key);
  void* get_next_monotonic_count;
  void* stall;
  void* set_watchdog_timer;
  void* connect_controller;
  void* disconnect_controller;
  void* open_protocol;
  void* close_protocol;
  void* open_protocol_information;
  void* protocols_per_handle;
  // Allocates the handle array from pool itself (the caller frees it).
  EfiStatus(KPACK_EFIAPI* locate_handle_buffer)(LocateSearchType search, const Guid* protocol, void* key,
                                                uint64_t* count, Handle** buffer);
  EfiStatus(KPACK_EFIAPI* locate_protocol)(const Guid* protocol, void* registration, void** interface);
};
static_assert(offsetof(BootServices, allocate_pages) == 0x28);
static_assert(offsetof(BootServices, handle_protocol) == 0x98);
static_assert(offsetof(BootServices, locate_handle) == 0xB0);
static_assert(offsetof(BootServices, locate_handle_buffer) == 0x138);
static_assert(offsetof(BootServices, install_configuration_table) == 0xC0);
static_assert(offsetof(BootServices, exit_boot_services) == 0xE8);
static_assert(offsetof(BootServices, locate_protocol) == 0x140);

struct RuntimeServices {
  TableHeader header;
  void* get_time;
  void* set_time;
  void* get_wakeup_time;
  void* set_wakeup_time;
  void* set_virtual_address_map;
  void* convert_pointer;
  EfiStatus(KPACK_EFIAPI* get_variable)(const char16_t* name, const Guid* vendor, uint32_t* attributes, uint64_t* size,
                                        void* data);
};
static_assert(offsetof(RuntimeServices, get_variable) == 0x48);

// The one definition of the system and configuration tables: the EFI entries call through them,
// and the engine reads them on the host too (the RSDP of a boot-protocol entry under UEFI, through
// efi_info.efi_systab), so the layout is the 64-bit one whatever the host's pointers.
struct ConfigurationTable {
  Guid vendor_guid;
  void* vendor_table;
};
static_assert(sizeof(ConfigurationTable) == 24);
static_assert(offsetof(ConfigurationTable, vendor_table) == 16);

struct SystemTable {
  TableHeader header;
  char16_t* firmware_vendor;
  uint32_t firmware_revision;
  Handle console_in_handle;
  void* con_in;
  Handle console_out_handle;
  SimpleTextOutput* con_out;
  Handle standard_error_handle;
  SimpleTextOutput* std_err;
  RuntimeServices* runtime_services;
  BootServices* boot_services;
  uint64_t number_of_table_entries;
  ConfigurationTable* configuration_table;
};
inline constexpr uint64_t kSystemTableSignature = 0x5453595320494249;  // "IBI SYST"
static_assert(sizeof(SystemTable) == 0x78);
static_assert(offsetof(SystemTable, con_out) == 0x40);
static_assert(offsetof(SystemTable, boot_services) == 0x60);
static_assert(offsetof(SystemTable, number_of_table_entries) == 0x68);
static_assert(offsetof(SystemTable, configuration_table) == 0x70);

struct LoadedImage {
  uint32_t revision;
  Handle parent_handle;
  SystemTable* system_table;
  Handle device_handle;
  void* file_path;
  void* reserved;
  uint32_t load_options_size;
  void* load_options;
  void* image_base;
  uint64_t image_size;
  MemoryType image_code_type;
  MemoryType image_data_type;
  void* unload;
};
static_assert(offsetof(LoadedImage, load_options_size) == 0x30);
static_assert(offsetof(LoadedImage, image_base) == 0x40);

struct PixelBitmask {
  uint32_t red, green, blue, reserved;
};
enum PixelFormat : uint32_t { kPixelRgbx8 = 0, kPixelBgrx8 = 1, kPixelBitMask = 2, kPixelBltOnly = 3 };
struct GraphicsModeInfo {
  uint32_t version;
  uint32_t horizontal_resolution;
  uint32_t vertical_resolution;
  PixelFormat pixel_format;
  PixelBitmask pixel_information;
  uint32_t pixels_per_scan_line;
};
struct GraphicsMode {
  uint32_t max_mode;
  uint32_t mode;
  GraphicsModeInfo* info;
  uint64_t size_of_info;
  uint64_t frame_buffer_base;
  uint64_t frame_buffer_size;
};
struct GraphicsOutput {
  void* query_mode;
  void* set_mode;
  void* blt;
  GraphicsMode* mode;
};

struct Rng {
  void* get_info;
  EfiStatus(KPACK_EFIAPI* get_rng)(Rng* self, const Guid* algorithm, uint64_t size, uint8_t* value);
};

struct MemoryAttribute {
  void* get_memory_attributes;
  EfiStatus(KPACK_EFIAPI* set_memory_attributes)(MemoryAttribute* self, uint64_t base, uint64_t length,
                                                 uint64_t attributes);
  EfiStatus(KPACK_EFIAPI* clear_memory_attributes)(MemoryAttribute* self, uint64_t base, uint64_t length,
                                                   uint64_t attributes);
};
static_assert(offsetof(MemoryAttribute, clear_memory_attributes) == 16);

// The PCI I/O protocol up to its ROM fields; the access pairs are {Read, Write}.
enum PciIoWidth : uint32_t { kPciIoWidthUint8 = 0, kPciIoWidthUint16 = 1, kPciIoWidthUint32 = 2 };
struct PciIo {
  void* poll_mem;
  void* poll_io;
  void* mem[2];
  void* io[2];
  EfiStatus(KPACK_EFIAPI* pci_read)(PciIo* self, PciIoWidth width, uint32_t offset, uint64_t count, void* buffer);
  void* pci_write;
  void* copy_mem;
  void* map;
  void* unmap;
  void* allocate_buffer;
  void* free_buffer;
  void* flush;
  EfiStatus(KPACK_EFIAPI* get_location)(PciIo* self, uint64_t* segment, uint64_t* bus, uint64_t* device,
                                        uint64_t* function);
  void* attributes;
  void* get_bar_attributes;
  void* set_bar_attributes;
  uint64_t rom_size;
  void* rom_image;
};
static_assert(offsetof(PciIo, mem) == 0x10 && offsetof(PciIo, io) == 0x20 && offsetof(PciIo, pci_read) == 0x30);
static_assert(offsetof(PciIo, pci_write) == 0x38 && offsetof(PciIo, copy_mem) == 0x40 && offsetof(PciIo, map) == 0x48);
static_assert(offsetof(PciIo, unmap) == 0x50 && offsetof(PciIo, allocate_buffer) == 0x58);
static_assert(offsetof(PciIo, free_buffer) == 0x60 && offsetof(PciIo, flush) == 0x68);
static_assert(offsetof(PciIo, get_location) == 0x70 && offsetof(PciIo, attributes) == 0x78);
static_assert(offsetof(PciIo, get_bar_attributes) == 0x80 && offsetof(PciIo, set_bar_attributes) == 0x88);
static_assert(offsetof(PciIo, rom_size) == 0x90 && offsetof(PciIo, rom_image) == 0x98 && sizeof(PciIo) == 0xA0);
// Configuration space offsets the ROM's owner is named by (PCI Local Bus 3.0, 6.2.1).
inline constexpr uint32_t kPciVendorIdOffset = 0x00;
inline constexpr uint32_t kPciDeviceIdOffset = 0x02;

struct MemoryAcceptance {
  EfiStatus(KPACK_EFIAPI* allow_unaccepted_memory)(MemoryAcceptance* self);
};

struct DevicePath {
  uint8_t type, subtype;
  uint8_t length[2];
};

struct LoadFile2 {
  EfiStatus(KPACK_EFIAPI* load_file)(LoadFile2* self, void* file_path, bool boot_policy, uint64_t* size, void* buffer);
};

struct File {
  uint64_t revision;
  EfiStatus(KPACK_EFIAPI* open)(File* self, File** file, const char16_t* name, uint64_t mode, uint64_t attributes);
  EfiStatus(KPACK_EFIAPI* close)(File* self);
  void* remove;
  EfiStatus(KPACK_EFIAPI* read)(File* self, uint64_t* size, void* buffer);
  void* write;
  void* get_position;
  void* set_position;
  EfiStatus(KPACK_EFIAPI* get_info)(File* self, const Guid* type, uint64_t* size, void* buffer);
};
inline constexpr uint64_t kFileModeRead = 1;
inline constexpr uint64_t kFileInfoFileSizeOffset = 8;  // EFI_FILE_INFO.FileSize

struct SimpleFileSystem {
  uint64_t revision;
  EfiStatus(KPACK_EFIAPI* open_volume)(SimpleFileSystem* self, File** root);
};

// EFI_TCG2_PROTOCOL (TCG PC Client Platform EFI Protocol Specification; EDK2 Tcg2Protocol.h).
struct Tcg2Event;
struct Tcg2 {
  void* get_capability;
  EfiStatus(KPACK_EFIAPI* get_event_log)(Tcg2* self, uint32_t format, uint64_t* location, uint64_t* last_entry,
                                         uint8_t* truncated);
  EfiStatus(KPACK_EFIAPI* hash_log_extend_event)(Tcg2* self, uint64_t flags, uint64_t data, uint64_t data_size,
                                                 const Tcg2Event* event);
};
inline constexpr uint32_t kEventLogFormatTcg12 = 1;  // SHA-1 only, fixed-size entries
inline constexpr uint32_t kEventLogFormatTcg2 = 2;   // crypto agile: a digest per PCR bank

// EFI_TCG2_EVENT: packed, so the header starts at byte 4 and the event data at byte 18.
struct [[gnu::packed]] Tcg2Event {
  uint32_t size;  // all of it: this header and the event data
  uint32_t header_size;
  uint16_t header_version;
  uint32_t pcr_index;
  uint32_t event_type;
};
static_assert(sizeof(Tcg2Event) == 18);
inline constexpr uint16_t kTcg2EventHeaderVersion = 1;
inline constexpr uint32_t kTcg2EventHeaderSize = 14;  // header_size .. event_type

// An EV_EVENT_TAG event's data: TCG_PCClientTaggedEvent, then `data_size` bytes.
struct [[gnu::packed]] TaggedEvent {
  uint32_t id;
  uint32_t data_size;
};
inline constexpr uint32_t kEventTypeEventTag = 6;  // EV_EVENT_TAG

// EFI_TCG2_FINAL_EVENTS_TABLE: events logged after GetEventLog, which the kernel reads from here.
struct Tcg2FinalEvents {
  uint64_t version;
  uint64_t number_of_events;  // TCG_PCR_EVENT2 entries follow
};

// Linux's struct linux_efi_tpm_eventlog, the LINUX_EFI_TPM_EVENT_LOG_GUID table: the log starts
// at byte 9 (C's flexible array; sizeof stays 12 as in Linux, whose allocation counts it).
struct LinuxTpmEventLog {
  uint32_t size;
  uint32_t final_events_preboot_size;  // bytes of the final events table the log already holds
  uint8_t version;                     // kEventLogFormatTcg12 or kEventLogFormatTcg2
  uint8_t log[3];
};
static_assert(offsetof(LinuxTpmEventLog, log) == 9 && sizeof(LinuxTpmEventLog) == 12);

}  // namespace kpack::efi
