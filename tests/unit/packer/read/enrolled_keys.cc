// The signature lists of db and MokListRT as efivarfs shows them, byte by byte, and the keys read
// from an efivarfs directory.
#include <doctest/doctest.h>

#include <cstring>

#include "formats/efi_signature_list.h"
#include "packer/read/enrolled_keys.h"
#include "tests/support/temp_dir.h"

using namespace kpack;

namespace {

constexpr efi::Guid kOwner = {0x11223344, 0x5566, 0x7788, {0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF, 0x00}};

void put_bytes(std::vector<uint8_t>& out, const void* data, size_t size) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  out.insert(out.end(), bytes, bytes + size);
}

// One EFI_SIGNATURE_LIST of `type` holding `signatures`, each owned by kOwner (all the same size).
std::vector<uint8_t> signature_list(const efi::Guid& type, const std::vector<std::vector<uint8_t>>& signatures) {
  const uint32_t each = efi::kSignatureOwnerSize + static_cast<uint32_t>(signatures.front().size());
  efi::SignatureListHeader header{};
  header.signature_type = type;
  header.list_size = static_cast<uint32_t>(sizeof(header) + each * signatures.size());
  header.signature_size = each;
  std::vector<uint8_t> list;
  put_bytes(list, &header, sizeof(header));
  for (const std::vector<uint8_t>& s : signatures) {
    put_bytes(list, &kOwner, sizeof(kOwner));
    list.insert(list.end(), s.begin(), s.end());
  }
  return list;
}

// An efivarfs file: the attributes (non-volatile, boot service and runtime access), then `lists`.
std::vector<uint8_t> variable(const std::vector<std::vector<uint8_t>>& lists) {
  std::vector<uint8_t> file = {0x07, 0x00, 0x00, 0x00};
  for (const std::vector<uint8_t>& l : lists) file.insert(file.end(), l.begin(), l.end());
  return file;
}

const std::vector<uint8_t> kCertA(40, 0xA1), kCertB(40, 0xB2), kDigest(32, 0xD3);

}  // namespace

TEST_CASE("the signature lists of a variable: every certificate and digest with its owner") {
  std::vector<uint8_t> file =
      variable({signature_list(efi::kCertX509, {kCertA, kCertB}), signature_list(efi::kCertSha256, {kDigest})});
  CHECK(file.size() == 4 + (28 + 2 * 56) + (28 + 48));
  Result<std::vector<EnrolledEntry>> entries = parse_signature_lists({file, "db-var"}, "db");
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  CHECK((*entries)[0].kind == SignatureKind::kX509);
  CHECK((*entries)[0].data == kCertA);
  CHECK((*entries)[1].data == kCertB);
  CHECK((*entries)[2].kind == SignatureKind::kSha256);
  CHECK((*entries)[2].data == kDigest);
  CHECK(std::memcmp(&(*entries)[0].owner, &kOwner, sizeof(kOwner)) == 0);
  CHECK(describe_entry((*entries)[0]) == "db: X.509 certificate, 40 bytes, owner 11223344-5566-7788-99aa-bbccddeeff00");
  CHECK(describe_entry((*entries)[2]) == "db: SHA-256 digest, 32 bytes, owner 11223344-5566-7788-99aa-bbccddeeff00");
  // An empty variable holds no list.
  CHECK(parse_signature_lists({variable({}), "v"}, "db")->empty());
}

TEST_CASE("a damaged signature list is refused in one line naming the variable and the list") {
  std::vector<uint8_t> good = variable({signature_list(efi::kCertX509, {kCertA})});
  std::vector<uint8_t> cut(good.begin(), good.end() - 1);
  CHECK(parse_signature_lists({cut, "db-x"}, "db").error().message ==
        "db-x: a signature list of 84 bytes does not fit (signature list at 0x4)");
  std::vector<uint8_t> short_header(good.begin(), good.begin() + 20);
  CHECK(parse_signature_lists({short_header, "db-x"}, "db").error().message ==
        "db-x: a signature list header runs past the variable's end (signature list at 0x4)");
  std::vector<uint8_t> odd = good;
  odd[4 + 24] = 50;  // signature_size: 56 bytes of signatures are not a whole number of 50
  CHECK(parse_signature_lists({odd, "db-x"}, "db").error().message ==
        "db-x: signatures of 50 bytes do not divide the list's 56 (signature list at 0x4)");
  std::vector<uint8_t> owner_only = good;
  owner_only[4 + 24] = 16;  // no byte after the owner
  CHECK_FALSE(parse_signature_lists({owner_only, "db-x"}, "db").ok());
  CHECK(parse_signature_lists({std::vector<uint8_t>{7, 0}, "db-x"}, "db").error().message ==
        "db-x: too short for an EFI variable's attributes");
}

TEST_CASE("the keys of db and of every part of shim's MokListRT, read from efivarfs") {
  test::TempDir efivars;
  efivars.write("db-d719b2cb-3d3a-4596-a3bc-dad00e67656f", variable({signature_list(efi::kCertX509, {kCertA})}));
  efivars.write("MokListRT-605dab50-e046-4300-abb6-3dd810dd8b23", variable({signature_list(efi::kCertX509, {kCertB})}));
  efivars.write("MokListRT1-605dab50-e046-4300-abb6-3dd810dd8b23",
                variable({signature_list(efi::kCertSha256, {kDigest})}));
  // Not a key list kpack reads: dbx (revocations) and a MokListRT of another vendor GUID.
  efivars.write("dbx-d719b2cb-3d3a-4596-a3bc-dad00e67656f", variable({signature_list(efi::kCertX509, {kCertA})}));
  efivars.write("MokListRT2-00000000-0000-0000-0000-000000000000", variable({}));
  Result<std::vector<EnrolledEntry>> keys = read_enrolled_keys(efivars.path());
  REQUIRE(keys.ok());
  REQUIRE(keys->size() == 3);
  CHECK(((*keys)[0].variable == "db" && (*keys)[0].data == kCertA));
  CHECK(((*keys)[1].variable == "MokListRT" && (*keys)[1].data == kCertB));
  CHECK(((*keys)[2].variable == "MokListRT1" && (*keys)[2].data == kDigest));

  test::TempDir empty;
  CHECK(read_enrolled_keys(empty.path())->empty());
  CHECK(read_enrolled_keys(empty / "missing").error().message ==
        empty / "missing" + ": no such directory: not a UEFI machine, or efivarfs is not mounted");
}

TEST_CASE("a DER certificate as PEM: base64 in lines of 64, padded") {
  CHECK(pem_certificate(std::vector<uint8_t>{'M', 'a', 'n'}) ==
        "-----BEGIN CERTIFICATE-----\nTWFu\n-----END CERTIFICATE-----\n");
  CHECK(pem_certificate(std::vector<uint8_t>{'M', 'a'}) ==
        "-----BEGIN CERTIFICATE-----\nTWE=\n-----END CERTIFICATE-----\n");
  CHECK(pem_certificate(std::vector<uint8_t>{'M'}) == "-----BEGIN CERTIFICATE-----\nTQ==\n-----END CERTIFICATE-----\n");
  std::string long_pem = pem_certificate(std::vector<uint8_t>(60, 0));
  CHECK(long_pem == "-----BEGIN CERTIFICATE-----\n" + std::string(64, 'A') + "\n" + std::string(16, 'A') +
                        "\n-----END CERTIFICATE-----\n");
}
