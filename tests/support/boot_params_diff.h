// boot_params comparison for the parity tests (tests/setup16, tests/efi): read two 4096-byte boot_params
// pages (raw, or the KPACK_BOOT_PARAMS dump tests/boot/init.c prints) and name every field that
// differs. The layout is formats/boot_params.h's, through offsetof/sizeof only; the tool
// tests/support/boot_params_diff.cc and the unit tests (tests/unit/support/boot_params_diff.cc) share this.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/boot_params.h"

namespace kpack::test::bpdiff {

using Page = std::vector<uint8_t>;  // always sizeof(boot::BootParams) bytes
inline constexpr size_t kPageSize = sizeof(boot::BootParams);

// How a field's bytes are shown and split.
enum class Kind {
  kScalar,      // a little-endian integer of 1, 2, 4 or 8 bytes
  kBytes,       // an opaque array: differing runs of bytes, offsets relative to the field
  kE820,        // boot::E820Entry[]: one line per differing entry
  kU32Array,    // ul32[]: one line per differing entry
  kEntryBytes,  // fixed-size opaque entries: one line per differing entry, its differing runs
};

struct Field {
  std::string name;
  size_t offset;
  size_t size;
  Kind kind;
  size_t entry_size = 0;  // kE820, kU32Array, kEntryBytes
};

#define KPACK_BP_FIELD(f, kind) \
  Field { #f, offsetof(boot::BootParams, f), sizeof(boot::BootParams::f), kind }
// A member of a structure inside boot_params: "outer.f".
#define KPACK_BP_MEMBER(outer, Type, f, kind) \
  Field { #outer "." #f, offsetof(boot::BootParams, outer) + offsetof(boot::Type, f), sizeof(boot::Type::f), kind }
#define KPACK_BP_HDR(f) KPACK_BP_MEMBER(hdr, SetupHeader, f, Kind::kScalar)
#define KPACK_BP_SCREEN(f) KPACK_BP_MEMBER(screen_info, ScreenInfo, f, Kind::kScalar)
#define KPACK_BP_IST(f) KPACK_BP_MEMBER(ist_info, IstInfo, f, Kind::kScalar)
#define KPACK_BP_EFI(f) KPACK_BP_MEMBER(efi_info, EfiInfo, f, Kind::kScalar)

// Every byte of the page, in offset order, each in exactly one field (the unit tests check that).
inline const std::vector<Field>& fields() {
  static const std::vector<Field> table = [] {
    std::vector<Field> t = {
        KPACK_BP_SCREEN(orig_x),
        KPACK_BP_SCREEN(orig_y),
        KPACK_BP_SCREEN(ext_mem_k),
        KPACK_BP_SCREEN(orig_video_page),
        KPACK_BP_SCREEN(orig_video_mode),
        KPACK_BP_SCREEN(orig_video_cols),
        KPACK_BP_SCREEN(flags),
        KPACK_BP_SCREEN(unused2),
        KPACK_BP_SCREEN(orig_video_ega_bx),
        KPACK_BP_SCREEN(unused3),
        KPACK_BP_SCREEN(orig_video_lines),
        KPACK_BP_SCREEN(orig_video_isVGA),
        KPACK_BP_SCREEN(orig_video_points),
        KPACK_BP_SCREEN(lfb_width),
        KPACK_BP_SCREEN(lfb_height),
        KPACK_BP_SCREEN(lfb_depth),
        KPACK_BP_SCREEN(lfb_base),
        KPACK_BP_SCREEN(lfb_size),
        KPACK_BP_SCREEN(cl_magic),
        KPACK_BP_SCREEN(cl_offset),
        KPACK_BP_SCREEN(lfb_linelength),
        KPACK_BP_SCREEN(red_size),
        KPACK_BP_SCREEN(red_pos),
        KPACK_BP_SCREEN(green_size),
        KPACK_BP_SCREEN(green_pos),
        KPACK_BP_SCREEN(blue_size),
        KPACK_BP_SCREEN(blue_pos),
        KPACK_BP_SCREEN(rsvd_size),
        KPACK_BP_SCREEN(rsvd_pos),
        KPACK_BP_SCREEN(vesapm_seg),
        KPACK_BP_SCREEN(vesapm_off),
        KPACK_BP_SCREEN(pages),
        KPACK_BP_SCREEN(vesa_attributes),
        KPACK_BP_SCREEN(capabilities),
        KPACK_BP_SCREEN(ext_lfb_base),
        KPACK_BP_MEMBER(screen_info, ScreenInfo, reserved, Kind::kBytes),
        KPACK_BP_FIELD(apm_bios_info, Kind::kBytes),
        KPACK_BP_FIELD(pad2, Kind::kBytes),
        KPACK_BP_FIELD(tboot_addr, Kind::kScalar),
        KPACK_BP_IST(signature),
        KPACK_BP_IST(command),
        KPACK_BP_IST(event),
        KPACK_BP_IST(perf_level),
        KPACK_BP_FIELD(acpi_rsdp_addr, Kind::kScalar),
        KPACK_BP_FIELD(pad3, Kind::kBytes),
        KPACK_BP_FIELD(hd0_info, Kind::kBytes),
        KPACK_BP_FIELD(hd1_info, Kind::kBytes),
        KPACK_BP_FIELD(sys_desc_table, Kind::kBytes),
        KPACK_BP_FIELD(olpc_ofw_header, Kind::kBytes),
        KPACK_BP_FIELD(ext_ramdisk_image, Kind::kScalar),
        KPACK_BP_FIELD(ext_ramdisk_size, Kind::kScalar),
        KPACK_BP_FIELD(ext_cmd_line_ptr, Kind::kScalar),
        KPACK_BP_FIELD(pad4, Kind::kBytes),
        KPACK_BP_FIELD(cc_blob_address, Kind::kScalar),
        KPACK_BP_FIELD(edid_info, Kind::kBytes),
        KPACK_BP_EFI(efi_loader_signature),
        KPACK_BP_EFI(efi_systab),
        KPACK_BP_EFI(efi_memdesc_size),
        KPACK_BP_EFI(efi_memdesc_version),
        KPACK_BP_EFI(efi_memmap),
        KPACK_BP_EFI(efi_memmap_size),
        KPACK_BP_EFI(efi_systab_hi),
        KPACK_BP_EFI(efi_memmap_hi),
        KPACK_BP_FIELD(alt_mem_k, Kind::kScalar),
        KPACK_BP_FIELD(scratch, Kind::kScalar),
        KPACK_BP_FIELD(e820_entries, Kind::kScalar),
        KPACK_BP_FIELD(eddbuf_entries, Kind::kScalar),
        KPACK_BP_FIELD(edd_mbr_sig_buf_entries, Kind::kScalar),
        KPACK_BP_FIELD(kbd_status, Kind::kScalar),
        KPACK_BP_FIELD(secure_boot, Kind::kScalar),
        KPACK_BP_FIELD(pad5, Kind::kBytes),
        KPACK_BP_FIELD(sentinel, Kind::kScalar),
        KPACK_BP_FIELD(pad6, Kind::kBytes),
        KPACK_BP_HDR(setup_sects),
        KPACK_BP_HDR(root_flags),
        KPACK_BP_HDR(syssize),
        KPACK_BP_HDR(ram_size),
        KPACK_BP_HDR(vid_mode),
        KPACK_BP_HDR(root_dev),
        KPACK_BP_HDR(boot_flag),
        KPACK_BP_HDR(jump),
        KPACK_BP_HDR(header),
        KPACK_BP_HDR(version),
        KPACK_BP_HDR(realmode_swtch),
        KPACK_BP_HDR(start_sys_seg),
        KPACK_BP_HDR(kernel_version),
        KPACK_BP_HDR(type_of_loader),
        KPACK_BP_HDR(loadflags),
        KPACK_BP_HDR(setup_move_size),
        KPACK_BP_HDR(code32_start),
        KPACK_BP_HDR(ramdisk_image),
        KPACK_BP_HDR(ramdisk_size),
        KPACK_BP_HDR(bootsect_kludge),
        KPACK_BP_HDR(heap_end_ptr),
        KPACK_BP_HDR(ext_loader_ver),
        KPACK_BP_HDR(ext_loader_type),
        KPACK_BP_HDR(cmd_line_ptr),
        KPACK_BP_HDR(initrd_addr_max),
        KPACK_BP_HDR(kernel_alignment),
        KPACK_BP_HDR(relocatable_kernel),
        KPACK_BP_HDR(min_alignment),
        KPACK_BP_HDR(xloadflags),
        KPACK_BP_HDR(cmdline_size),
        KPACK_BP_HDR(hardware_subarch),
        KPACK_BP_HDR(hardware_subarch_data),
        KPACK_BP_HDR(payload_offset),
        KPACK_BP_HDR(payload_length),
        KPACK_BP_HDR(setup_data),
        KPACK_BP_HDR(pref_address),
        KPACK_BP_HDR(init_size),
        KPACK_BP_HDR(handover_offset),
        KPACK_BP_HDR(kernel_info_offset),
        KPACK_BP_FIELD(pad7, Kind::kBytes),
        KPACK_BP_FIELD(edd_mbr_sig_buffer, Kind::kU32Array),
        KPACK_BP_FIELD(e820_table, Kind::kE820),
        KPACK_BP_FIELD(pad8, Kind::kBytes),
        KPACK_BP_FIELD(eddbuf, Kind::kEntryBytes),
        KPACK_BP_FIELD(pad9, Kind::kBytes),
    };
    for (Field& f : t) {
      if (f.kind == Kind::kE820) f.entry_size = sizeof(boot::E820Entry);
      if (f.kind == Kind::kU32Array) f.entry_size = sizeof(ul32);
      if (f.kind == Kind::kEntryBytes) f.entry_size = sizeof(boot::EddInfo);  // eddbuf
    }
    return t;
  }();
  return table;
}
#undef KPACK_BP_FIELD
#undef KPACK_BP_MEMBER
#undef KPACK_BP_HDR
#undef KPACK_BP_SCREEN
#undef KPACK_BP_IST
#undef KPACK_BP_EFI

inline const Field* find_field(std::string_view name) {
  for (const Field& f : fields())
    if (f.name == name) return &f;
  return nullptr;
}

// Does `name` cover field `f`: the field itself, or the structure it is a member of
// ("screen_info" covers "screen_info.orig_x")?
inline bool covers(std::string_view name, const Field& f) {
  return f.name == name ||
         (f.name.size() > name.size() && f.name.compare(0, name.size(), name) == 0 && f.name[name.size()] == '.');
}

// The first field `name` covers, or null.
inline const Field* find_covered(std::string_view name) {
  for (const Field& f : fields())
    if (covers(name, f)) return &f;
  return nullptr;
}

// --- Input ------------------------------------------------------------------------------------

// The page in `text`: the whole of it when it is exactly 4096 bytes without a dump marker,
// otherwise the last complete KPACK_BOOT_PARAMS_BEGIN..END section (lines "OOOO: <64 hex>", any
// other line in between, such as a kernel message, is skipped; so is text after a record). Empty optional and `error` set
// when there is no complete page.
inline std::optional<Page> parse_input(std::string_view text, std::string* error) {
  static constexpr std::string_view kBegin = "KPACK_BOOT_PARAMS_BEGIN";
  static constexpr std::string_view kEnd = "KPACK_BOOT_PARAMS_END";
  static constexpr size_t kLineBytes = 32;
  size_t begin = text.rfind(kBegin);
  if (begin == std::string_view::npos) {
    if (text.size() == kPageSize) return Page(text.begin(), text.end());
    *error = "neither a 4096-byte page nor a log with " + std::string(kBegin) + " (" + std::to_string(text.size()) +
             " bytes)";
    return std::nullopt;
  }
  size_t end = text.find(kEnd, begin);
  if (end == std::string_view::npos) {
    *error = "the last " + std::string(kBegin) + " has no " + std::string(kEnd);
    return std::nullopt;
  }
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Page page(kPageSize);
  std::vector<bool> seen(kPageSize / kLineBytes);
  std::string_view body = text.substr(begin + kBegin.size(), end - begin - kBegin.size());
  while (!body.empty()) {
    size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    // A kernel message may follow a complete record on its line (the console printed it before
    // the line's end): the record is the line's first 70 characters.
    if (line.size() < 6 + 2 * kLineBytes || line[4] != ':' || line[5] != ' ') continue;
    size_t offset = 0;
    bool ok = true;
    for (size_t i = 0; i < 4 && ok; ++i) {
      int d = hex(line[i]);
      ok = d >= 0;
      offset = offset * 16 + static_cast<size_t>(d);
    }
    uint8_t bytes[kLineBytes];
    for (size_t i = 0; i < kLineBytes && ok; ++i) {
      int hi = hex(line[6 + 2 * i]), lo = hex(line[7 + 2 * i]);
      ok = hi >= 0 && lo >= 0;
      bytes[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    if (!ok || offset % kLineBytes != 0 || offset >= kPageSize) continue;
    std::memcpy(page.data() + offset, bytes, kLineBytes);
    seen[offset / kLineBytes] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "the dump lacks the line for offset 0x%04zx", i * kLineBytes);
      *error = buf;
      return std::nullopt;
    }
  }
  return page;
}

// --- Allowlist ----------------------------------------------------------------------------------

// One --allow item: a field, a structure (all its members: "screen_info") or an entry
// ("e820_table[3]"), optionally ":MASK" for a scalar, which allows differences in those bits only.
struct Allow {
  std::string name;
  std::optional<uint64_t> mask;
};

// Parses "F1,F2:0x02,...". Unknown names are an error, so a typo cannot allow nothing quietly.
inline bool parse_allow(std::string_view list, std::vector<Allow>* out, std::string* error) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    Allow a;
    size_t colon = item.find(':');
    a.name = std::string(item.substr(0, colon));
    std::string base = a.name.substr(0, a.name.find('['));
    const Field* f = find_covered(base);
    if (!f) {
      *error = "--allow: no field named '" + base + "'";
      return false;
    }
    if (colon != std::string_view::npos) {
      std::string mask(item.substr(colon + 1));
      char* endp = nullptr;
      a.mask = std::strtoull(mask.c_str(), &endp, 0);
      if (mask.empty() || *endp != 0 || f->kind != Kind::kScalar || f->name != base) {
        *error = "--allow: '" + std::string(item) + "': a mask needs a number and a scalar field";
        return false;
      }
    }
    out->push_back(std::move(a));
  }
  return true;
}

// --- Comparison --------------------------------------------------------------------------------

struct Difference {
  std::string name;  // the field, or "field[i]" for an entry
  std::string a, b;  // the two values as printed
  bool allowed = false;
  std::string line() const { return name + ": " + a + " | " + b + (allowed ? "  (allowed)" : ""); }
};

inline uint64_t load_scalar(const uint8_t* p, size_t size) {
  uint64_t v = 0;
  for (size_t i = 0; i < size; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

inline std::string hex_value(uint64_t v, size_t bytes) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(2 * bytes), static_cast<unsigned long long>(v));
  return buf;
}

// Runs of differing bytes of [a, a+size) and [b, b+size), as "+0xOFF: aa bb" on each side,
// separated by "; " (offsets relative to the field).
inline void byte_runs(const uint8_t* a, const uint8_t* b, size_t size, std::string* sa, std::string* sb) {
  for (size_t i = 0; i < size;) {
    if (a[i] == b[i]) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < size && a[j] != b[j]) ++j;
    char head[24];
    std::snprintf(head, sizeof head, "%s+0x%02zx:", sa->empty() ? "" : "; ", i);
    *sa += head;
    *sb += head;
    for (size_t k = i; k < j; ++k) {
      char byte[4];
      std::snprintf(byte, sizeof byte, " %02x", a[k]);
      *sa += byte;
      std::snprintf(byte, sizeof byte, " %02x", b[k]);
      *sb += byte;
    }
    i = j;
  }
}

inline std::string e820_text(const uint8_t* p) {
  boot::E820Entry e;
  std::memcpy(&e, p, sizeof e);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%#llx+%#llx type %u", static_cast<unsigned long long>(uint64_t(e.addr)),
                static_cast<unsigned long long>(uint64_t(e.size)), unsigned(uint32_t(e.type)));
  return buf;
}

// Is `d` (of field `f`, with scalar values va/vb when scalar) allowed by `allow`?
inline bool is_allowed(const std::vector<Allow>& allow, const Field& f, const std::string& name, uint64_t va,
                       uint64_t vb) {
  for (const Allow& a : allow) {
    if (!covers(a.name, f) && a.name != name) continue;
    if (!a.mask || ((va ^ vb) & ~*a.mask) == 0) return true;
  }
  return false;
}

// The value of scalar field `name` in `page`; empty when there is no such scalar.
inline std::optional<uint64_t> get_scalar(const Page& page, std::string_view name) {
  const Field* f = find_field(name);
  if (!f || f->kind != Kind::kScalar) return std::nullopt;
  return load_scalar(page.data() + f->offset, f->size);
}

// Every differing field of a and b, in offset order; each entry of an array apart.
inline std::vector<Difference> diff(const Page& a, const Page& b, const std::vector<Allow>& allow = {}) {
  std::vector<Difference> out;
  for (const Field& f : fields()) {
    const uint8_t* pa = a.data() + f.offset;
    const uint8_t* pb = b.data() + f.offset;
    if (std::memcmp(pa, pb, f.size) == 0) continue;
    switch (f.kind) {
      case Kind::kScalar: {
        uint64_t va = load_scalar(pa, f.size), vb = load_scalar(pb, f.size);
        out.push_back({f.name, hex_value(va, f.size), hex_value(vb, f.size), is_allowed(allow, f, f.name, va, vb)});
        break;
      }
      case Kind::kBytes: {
        Difference d{f.name, "", "", is_allowed(allow, f, f.name, 0, 0)};
        byte_runs(pa, pb, f.size, &d.a, &d.b);
        out.push_back(d);
        break;
      }
      case Kind::kE820:
      case Kind::kU32Array:
      case Kind::kEntryBytes:
        for (size_t i = 0; i + f.entry_size <= f.size; i += f.entry_size) {
          if (std::memcmp(pa + i, pb + i, f.entry_size) == 0) continue;
          std::string name = f.name + "[" + std::to_string(i / f.entry_size) + "]";
          Difference d{name, "", "", is_allowed(allow, f, name, 0, 0)};
          if (f.kind == Kind::kE820) {
            d.a = e820_text(pa + i);
            d.b = e820_text(pb + i);
          } else if (f.kind == Kind::kU32Array) {
            d.a = hex_value(load_scalar(pa + i, f.entry_size), f.entry_size);
            d.b = hex_value(load_scalar(pb + i, f.entry_size), f.entry_size);
          } else {
            byte_runs(pa + i, pb + i, f.entry_size, &d.a, &d.b);
          }
          out.push_back(d);
        }
        break;
    }
  }
  return out;
}

}  // namespace kpack::test::bpdiff
