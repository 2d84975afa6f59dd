// The signature lists of the UEFI image security databases (db, dbx) and of shim's machine owner
// keys (MokListRT, which shim mirrors from MokList with its built-in vendor certificate appended),
// as efivarfs shows them: the variable's 4-byte attributes, then EFI_SIGNATURE_LISTs back to back
// (UEFI 2.10, 32.4.1 "Signature Database").
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "formats/le.h"
#include "formats/uefi.h"

namespace kpack::efi {

// One EFI_SIGNATURE_LIST: this header, signature_header_size bytes of the type's own header (none
// for X.509 and SHA-256), then signatures of signature_size bytes each, every one an owner GUID
// followed by the signature itself (a DER certificate, a SHA-256 digest).
struct SignatureListHeader {
  Guid signature_type;
  ul32 list_size;  // the whole list, this header included
  ul32 signature_header_size;
  ul32 signature_size;
};
static_assert(sizeof(SignatureListHeader) == 28);
static_assert(offsetof(SignatureListHeader, list_size) == 16);
static_assert(offsetof(SignatureListHeader, signature_header_size) == 20);
static_assert(offsetof(SignatureListHeader, signature_size) == 24);
inline constexpr uint32_t kSignatureOwnerSize = sizeof(Guid);

inline constexpr Guid kCertX509 = {0xA5C059A1, 0x94E4, 0x4AA7, {0x87, 0xB5, 0xAB, 0x15, 0x5C, 0x2B, 0xF0, 0x72}};
inline constexpr Guid kCertSha256 = {0xC1C41626, 0x504C, 0x4092, {0xAC, 0xA9, 0x41, 0xF9, 0x36, 0x93, 0x43, 0x28}};

// The variables' vendor GUIDs: db and dbx, and shim's (SHIM_LOCK_GUID) for MokListRT.
inline constexpr Guid kImageSecurityDatabase = {
    0xD719B2CB, 0x3D3A, 0x4596, {0xA3, 0xBC, 0xDA, 0xD0, 0x0E, 0x67, 0x65, 0x6F}};
inline constexpr Guid kShimLock = {0x605DAB50, 0xE046, 0x4300, {0xAB, 0xB6, 0x3D, 0xD8, 0x10, 0xDD, 0x8B, 0x23}};

// efivarfs puts the variable's attributes before its data.
inline constexpr uint64_t kEfivarAttributesSize = 4;

}  // namespace kpack::efi
