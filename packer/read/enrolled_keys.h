// The keys a Secure Boot machine trusts, as its EFI variables list them (efivarfs): the X.509
// certificates and SHA-256 digests of the firmware's db and of shim's MokListRT (the machine owner
// keys, with shim's built-in vendor certificate: Debian's CA on Debian). The kernel hook asks which
// certificates these are to check that the key it signs with chains to one of them, as shim checks
// a kernel, before it replaces a signed kernel with a packed one.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "formats/uefi.h"
#include "packer/base/context.h"
#include "packer/base/result.h"

namespace kpack {

enum class SignatureKind { kX509, kSha256, kOther };

struct EnrolledEntry {
  std::string variable;  // "db", "MokListRT", "MokListRT1", ...
  SignatureKind kind = SignatureKind::kOther;
  efi::Guid owner{};
  std::vector<uint8_t> data;  // a DER certificate, a digest, or what another type holds
};

// Every signature of the lists in `file`, an efivarfs variable (its attributes, then the lists),
// named `variable` in the entries.
Result<std::vector<EnrolledEntry>> parse_signature_lists(const FileView& file, const std::string& variable);

// db and MokListRT (shim splits a long list into MokListRT, MokListRT1, ...) under `efivars`, the
// efivarfs directory (/sys/firmware/efi/efivars); a variable that does not exist holds nothing.
// An error when the directory is not there: no UEFI, or efivarfs not mounted.
Result<std::vector<EnrolledEntry>> read_enrolled_keys(const std::string& efivars);

// "d719b2cb-3d3a-4596-a3bc-dad00e67656f", as efivarfs names variables.
std::string guid_text(const efi::Guid& guid);

// The certificate as PEM text, which openssl reads.
std::string pem_certificate(std::span<const uint8_t> der);

// One line per entry for `kpack keys`: "db: X.509 certificate, 1032 bytes, owner ...".
std::string describe_entry(const EnrolledEntry& entry);

// `kpack keys`: every entry of db and MokListRT under `efivars`, one line each, or with `pem` the
// X.509 certificates as PEM and nothing else.
Status print_enrolled_keys(const std::string& efivars, bool pem, std::FILE* out);

}  // namespace kpack
