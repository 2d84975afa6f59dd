// tests/support/boot_params_diff.h: the field table, the dump parser and the field-by-field diff
// that the setup16 boot tests rely on.
#include <doctest/doctest.h>

#include <set>

#include "tests/support/boot_params_diff.h"

using namespace kpack;
using namespace kpack::test::bpdiff;

namespace {

// The dump tests/boot/init.c prints for `page`, with CR LF line ends as a serial log has them.
std::string dump_of(const Page& page) {
  std::string s = "KPACK_BOOT_PARAMS_BEGIN\r\n";
  for (size_t off = 0; off < page.size(); off += 32) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%04zx: ", off);
    s += buf;
    for (size_t i = 0; i < 32; ++i) {
      std::snprintf(buf, sizeof buf, "%02x", page[off + i]);
      s += buf;
    }
    s += "\r\n";
  }
  return s + "KPACK_BOOT_PARAMS_END\r\n";
}

Page numbered_page() {
  Page p(kPageSize);
  for (size_t i = 0; i < p.size(); ++i) p[i] = static_cast<uint8_t>(i * 7 + 1);
  return p;
}

std::vector<std::string> lines(const std::vector<Difference>& diffs) {
  std::vector<std::string> out;
  for (const Difference& d : diffs) out.push_back(d.line());
  return out;
}

}  // namespace

TEST_CASE("boot_params_diff: the field table covers the page once, in order, with unique names") {
  size_t next = 0;
  std::set<std::string> names;
  for (const Field& f : fields()) {
    CHECK_MESSAGE(f.offset == next, f.name);
    CHECK(f.size > 0);
    if (f.kind == Kind::kScalar) CHECK((f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8));
    if (f.entry_size) CHECK(f.size % f.entry_size == 0);
    CHECK(names.insert(f.name).second);
    next = f.offset + f.size;
  }
  CHECK(next == 4096);
}

TEST_CASE("boot_params_diff: fields sit at their documented zero-page offsets") {
  auto at = [](const char* name) {
    const Field* f = find_field(name);
    REQUIRE_MESSAGE(f, name);
    return std::pair<size_t, size_t>(f->offset, f->size);
  };
  CHECK(at("screen_info.orig_x") == std::pair<size_t, size_t>(0x000, 1));
  CHECK(at("screen_info.ext_mem_k") == std::pair<size_t, size_t>(0x002, 2));
  CHECK(at("screen_info.orig_video_cols") == std::pair<size_t, size_t>(0x007, 1));
  CHECK(at("screen_info.orig_video_lines") == std::pair<size_t, size_t>(0x00E, 1));
  CHECK(at("screen_info.orig_video_isVGA") == std::pair<size_t, size_t>(0x00F, 1));
  CHECK(at("screen_info.lfb_width") == std::pair<size_t, size_t>(0x012, 2));
  CHECK(at("screen_info.lfb_base") == std::pair<size_t, size_t>(0x018, 4));
  CHECK(at("screen_info.reserved") == std::pair<size_t, size_t>(0x03E, 2));
  CHECK(at("ist_info.signature") == std::pair<size_t, size_t>(0x060, 4));
  CHECK(at("acpi_rsdp_addr") == std::pair<size_t, size_t>(0x070, 8));
  CHECK(at("edid_info") == std::pair<size_t, size_t>(0x140, 0x80));
  CHECK(at("efi_info.efi_loader_signature") == std::pair<size_t, size_t>(0x1C0, 4));
  CHECK(at("efi_info.efi_memmap") == std::pair<size_t, size_t>(0x1D0, 4));
  CHECK(at("efi_info.efi_memmap_hi") == std::pair<size_t, size_t>(0x1DC, 4));
  CHECK(at("alt_mem_k") == std::pair<size_t, size_t>(0x1E0, 4));
  CHECK(at("kbd_status") == std::pair<size_t, size_t>(0x1EB, 1));
  CHECK(at("hdr.vid_mode") == std::pair<size_t, size_t>(0x1FA, 2));
  CHECK(at("hdr.loadflags") == std::pair<size_t, size_t>(0x211, 1));
  CHECK(at("hdr.code32_start") == std::pair<size_t, size_t>(0x214, 4));
  CHECK(at("hdr.kernel_info_offset") == std::pair<size_t, size_t>(0x268, 4));
  CHECK(at("edd_mbr_sig_buffer") == std::pair<size_t, size_t>(0x290, 64));
  CHECK(at("e820_table") == std::pair<size_t, size_t>(0x2D0, 128 * 20));
  CHECK(at("eddbuf") == std::pair<size_t, size_t>(0xD00, 0x1EC));
  CHECK(find_field("e820_table")->entry_size == 20);
  CHECK(find_field("eddbuf")->entry_size == 82);  // Linux's struct edd_info
  CHECK(find_field("hdr") == nullptr);
  CHECK(find_field("screen_info") == nullptr);  // only its members
  CHECK(find_field("efi_info") == nullptr);
}

TEST_CASE("boot_params_diff: input is a raw page or the last complete dump of a log") {
  Page page = numbered_page();
  std::string error;
  SUBCASE("a raw page") {
    auto got = parse_input(std::string(page.begin(), page.end()), &error);
    REQUIRE(got);
    CHECK(*got == page);
  }
  SUBCASE("a dump among kernel messages, with one inside it; the last dump wins") {
    Page older(kPageSize, 0xEE);
    std::string d = dump_of(page);
    size_t mid = d.find("0800: ");
    d.insert(mid, "[    3.141592] a kernel message\r\n");
    std::string log = "SeaBIOS\r\n" + dump_of(older) + "KPACK_INIT_OK tsc=1\r\n" + d + "reboot: Power down\r\n";
    auto got = parse_input(log, &error);
    REQUIRE(got);
    CHECK(*got == page);
  }
  SUBCASE("a message right after a complete record") {
    std::string d = dump_of(page);
    d.insert(d.find("0860: ") - 2, "[    2.484111] tsc: Refined TSC clocksource calibration");
    auto got = parse_input(d, &error);
    REQUIRE(got);
    CHECK(*got == page);
  }
  SUBCASE("a line cut by a message makes the dump incomplete") {
    std::string d = dump_of(page);
    d.insert(d.find("0840: ") + 20, "[ 1.0] x\r\n");
    CHECK_FALSE(parse_input(d, &error));
    CHECK(error == "the dump lacks the line for offset 0x0840");
  }
  SUBCASE("no end marker") {
    std::string d = dump_of(page);
    d.resize(d.find("KPACK_BOOT_PARAMS_END"));
    CHECK_FALSE(parse_input(d, &error));
    CHECK(error == "the last KPACK_BOOT_PARAMS_BEGIN has no KPACK_BOOT_PARAMS_END");
  }
  SUBCASE("neither") {
    CHECK_FALSE(parse_input("hello", &error));
    CHECK(error == "neither a 4096-byte page nor a log with KPACK_BOOT_PARAMS_BEGIN (5 bytes)");
  }
}

TEST_CASE("boot_params_diff: each differing field by name, arrays per entry") {
  Page a(kPageSize), b(kPageSize);
  CHECK(diff(a, a).empty());
  a[0x1FA] = 0xFF, a[0x1FB] = 0xFF;  // hdr.vid_mode 0xffff | 0x0000
  a[0x006] = 0x03, a[0x007] = 0x50;  // screen_info: orig_video_mode, orig_video_cols
  a[0x00E] = 0x19;                   // orig_video_lines
  b[0x211] = 0x02;                   // hdr.loadflags
  b[0x290 + 4 * 1] = 0x78;           // edd_mbr_sig_buffer[1]
  // e820_table[2] = 0x100000 + 0x1fee0000, type 1
  store_le<uint64_t>(a.data() + 0x2D0 + 2 * 20, 0x100000);
  store_le<uint64_t>(a.data() + 0x2D0 + 2 * 20 + 8, 0x1fee0000);
  store_le<uint32_t>(a.data() + 0x2D0 + 2 * 20 + 16, 1);
  b[0xD00 + 82 + 2] = 0x01;  // eddbuf[1], interface_support
  b[0x140 + 0x7F] = 0xAB;    // edid_info's last byte
  CHECK(lines(diff(a, b)) == std::vector<std::string>{
                                 "screen_info.orig_video_mode: 0x03 | 0x00",
                                 "screen_info.orig_video_cols: 0x50 | 0x00",
                                 "screen_info.orig_video_lines: 0x19 | 0x00",
                                 "edid_info: +0x7f: 00 | +0x7f: ab",
                                 "hdr.vid_mode: 0xffff | 0x0000",
                                 "hdr.loadflags: 0x00 | 0x02",
                                 "edd_mbr_sig_buffer[1]: 0x00000000 | 0x00000078",
                                 "e820_table[2]: 0x100000+0x1fee0000 type 1 | 0+0 type 0",
                                 "eddbuf[1]: +0x02: 00 | +0x02: 01",
                             });
}

TEST_CASE("boot_params_diff: --get reads a scalar field by name") {
  Page p(kPageSize);
  p[0x007] = 80;
  p[0x1FA] = 0xFE, p[0x1FB] = 0xFF;
  CHECK(get_scalar(p, "screen_info.orig_video_cols") == 80u);
  CHECK(get_scalar(p, "hdr.vid_mode") == 0xFFFEu);
  CHECK_FALSE(get_scalar(p, "edid_info"));  // not a scalar
  CHECK_FALSE(get_scalar(p, "nope"));
}

TEST_CASE("boot_params_diff: --allow by field, structure, entry and bit mask; unknown names refused") {
  Page a(kPageSize), b(kPageSize);
  a[0x211] = 0x83, b[0x211] = 0x81;  // hdr.loadflags: KASLR_FLAG only
  a[0x070] = 0x10;                   // acpi_rsdp_addr
  b[0x290 + 4 * 3] = 1;              // edd_mbr_sig_buffer[3]
  std::vector<Allow> allow;
  std::string error;
  REQUIRE(parse_allow("hdr.loadflags:0x02,acpi_rsdp_addr,edd_mbr_sig_buffer[3]", &allow, &error));
  REQUIRE(allow.size() == 3);
  CHECK(allow[0].name == "hdr.loadflags");
  CHECK(allow[0].mask == 0x02u);
  auto d = diff(a, b, allow);
  REQUIRE(d.size() == 3);
  CHECK(d[0].line() == "acpi_rsdp_addr: 0x0000000000000010 | 0x0000000000000000  (allowed)");
  CHECK(d[1].line() == "hdr.loadflags: 0x83 | 0x81  (allowed)");
  CHECK(d[2].allowed);

  b[0x211] = 0x01;  // now bit 7 (CAN_USE_HEAP) differs too: outside the mask
  d = diff(a, b, allow);
  CHECK(d[1].line() == "hdr.loadflags: 0x83 | 0x01");
  b[0x290 + 4 * 4] = 1;  // another entry: not allowed
  d = diff(a, b, allow);
  REQUIRE(d.size() == 4);
  CHECK(d[3].name == "edd_mbr_sig_buffer[4]");
  CHECK_FALSE(d[3].allowed);

  // A structure covers all its members.
  a[0x000] = 5;  // screen_info.orig_x
  b[0x012] = 1;  // screen_info.lfb_width
  d = diff(a, b, allow);
  CHECK_FALSE(d[0].allowed);
  std::vector<Allow> screen;
  REQUIRE(parse_allow("screen_info", &screen, &error));
  d = diff(a, b, screen);
  REQUIRE(d.size() == 6);
  CHECK(d[0].line() == "screen_info.orig_x: 0x05 | 0x00  (allowed)");
  CHECK(d[1].line() == "screen_info.lfb_width: 0x0000 | 0x0001  (allowed)");
  CHECK_FALSE(d[2].allowed);
  CHECK_FALSE(parse_allow("screen_info.orig", &allow, &error));

  CHECK_FALSE(parse_allow("hdr.vidmode", &allow, &error));
  CHECK(error == "--allow: no field named 'hdr.vidmode'");
  CHECK_FALSE(parse_allow("screen_info:0xff", &allow, &error));
  CHECK(error == "--allow: 'screen_info:0xff': a mask needs a number and a scalar field");
  CHECK_FALSE(parse_allow("hdr.loadflags:x", &allow, &error));
}
