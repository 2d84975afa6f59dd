#include "packer/read/enrolled_keys.h"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "formats/efi_signature_list.h"
#include "packer/base/byte_io.h"
#include "packer/base/file_io.h"

namespace kpack {
namespace {

bool same_guid(const efi::Guid& a, const efi::Guid& b) { return std::memcmp(&a, &b, sizeof(a)) == 0; }

SignatureKind kind_of(const efi::Guid& type) {
  if (same_guid(type, efi::kCertX509)) return SignatureKind::kX509;
  if (same_guid(type, efi::kCertSha256)) return SignatureKind::kSha256;
  return SignatureKind::kOther;
}

}  // namespace

Result<std::vector<EnrolledEntry>> parse_signature_lists(const FileView& file, const std::string& variable) {
  std::span<const uint8_t> bytes = file.bytes;
  if (bytes.size() < efi::kEfivarAttributesSize) return file.error("too short for an EFI variable's attributes");
  std::vector<EnrolledEntry> entries;
  uint64_t at = efi::kEfivarAttributesSize;
  while (at < bytes.size()) {
    const std::string where = " (signature list at " + hex(at) + ")";
    if (bytes.size() - at < sizeof(efi::SignatureListHeader))
      return file.error("a signature list header runs past the variable's end" + where);
    const auto list = get<efi::SignatureListHeader>(bytes, at);
    const uint64_t list_size = list.list_size, header = list.signature_header_size, each = list.signature_size;
    if (list_size < sizeof(list) + header || list_size > bytes.size() - at)
      return file.error("a signature list of " + std::to_string(list_size) + " bytes does not fit" + where);
    const uint64_t signatures = list_size - sizeof(list) - header;
    if (each <= efi::kSignatureOwnerSize || signatures % each != 0)
      return file.error("signatures of " + std::to_string(each) + " bytes do not divide the list's " +
                        std::to_string(signatures) + where);
    for (uint64_t s = at + sizeof(list) + header; s < at + list_size; s += each) {
      EnrolledEntry entry;
      entry.variable = variable;
      entry.kind = kind_of(list.signature_type);
      entry.owner = get<efi::Guid>(bytes, s);
      entry.data.assign(bytes.begin() + s + efi::kSignatureOwnerSize, bytes.begin() + s + each);
      entries.push_back(std::move(entry));
    }
    at += list_size;
  }
  return entries;
}

std::string guid_text(const efi::Guid& g) {
  char text[40];
  std::snprintf(text, sizeof(text), "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g.data1, g.data2, g.data3,
                g.data4[0], g.data4[1], g.data4[2], g.data4[3], g.data4[4], g.data4[5], g.data4[6], g.data4[7]);
  return text;
}

Result<std::vector<EnrolledEntry>> read_enrolled_keys(const std::string& efivars) {
  std::error_code error;
  if (!std::filesystem::is_directory(efivars, error))
    return error_in(efivars, "no such directory: not a UEFI machine, or efivarfs is not mounted");
  std::vector<EnrolledEntry> all;
  auto read_variable = [&](const std::string& name, const efi::Guid& vendor) -> Result<bool> {
    const std::string path = efivars + "/" + name + "-" + guid_text(vendor);
    if (!std::filesystem::exists(path, error)) return false;
    std::vector<uint8_t> bytes = KPACK_TRY_RESULT(read_file(path));
    std::vector<EnrolledEntry> entries = KPACK_TRY_RESULT(parse_signature_lists({bytes, path}, name));
    all.insert(all.end(), entries.begin(), entries.end());
    return true;
  };
  KPACK_TRY_RESULT(read_variable("db", efi::kImageSecurityDatabase));
  // shim mirrors a list too long for one variable into MokListRT, MokListRT1, MokListRT2, ...
  if (KPACK_TRY_RESULT(read_variable("MokListRT", efi::kShimLock)))
    for (int i = 1; KPACK_TRY_RESULT(read_variable("MokListRT" + std::to_string(i), efi::kShimLock)); ++i) {
    }
  return all;
}

std::string pem_certificate(std::span<const uint8_t> der) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string base64;
  for (size_t i = 0; i < der.size(); i += 3) {
    uint32_t chunk = uint32_t{der[i]} << 16;
    if (i + 1 < der.size()) chunk |= uint32_t{der[i + 1]} << 8;
    if (i + 2 < der.size()) chunk |= der[i + 2];
    base64 += kAlphabet[chunk >> 18 & 63];
    base64 += kAlphabet[chunk >> 12 & 63];
    base64 += i + 1 < der.size() ? kAlphabet[chunk >> 6 & 63] : '=';
    base64 += i + 2 < der.size() ? kAlphabet[chunk & 63] : '=';
  }
  std::string pem = "-----BEGIN CERTIFICATE-----\n";
  for (size_t i = 0; i < base64.size(); i += 64) pem += base64.substr(i, 64) + "\n";
  return pem + "-----END CERTIFICATE-----\n";
}

std::string describe_entry(const EnrolledEntry& entry) {
  const char* kind = entry.kind == SignatureKind::kX509     ? "X.509 certificate"
                     : entry.kind == SignatureKind::kSha256 ? "SHA-256 digest"
                                                            : "signature of another type";
  return entry.variable + ": " + kind + ", " + std::to_string(entry.data.size()) + " bytes, owner " +
         guid_text(entry.owner);
}

Status print_enrolled_keys(const std::string& efivars, bool pem, std::FILE* out) {
  std::vector<EnrolledEntry> entries = KPACK_TRY_RESULT(read_enrolled_keys(efivars));
  for (const EnrolledEntry& entry : entries) {
    if (!pem)
      std::fprintf(out, "%s\n", describe_entry(entry).c_str());
    else if (entry.kind == SignatureKind::kX509)
      std::fputs(pem_certificate(entry.data).c_str(), out);
  }
  return Ok{};
}

}  // namespace kpack
