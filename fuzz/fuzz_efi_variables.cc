// fuzz_efi_variables: `kpack keys` on a hostile efivarfs variable, the EFI_SIGNATURE_LISTs of db
// and MokListRT by which the kernel hook decides whether this machine trusts its signing key.
// Whatever the bytes: an error of one line naming the variable, or entries that each hold bytes of
// the variable (owner and signature inside it, never empty), together no more than it holds; and
// every certificate's PEM, which openssl then reads, decodes back to exactly its DER.
#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "formats/efi_signature_list.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_packer_checks.h"
#include "fuzz/self_test.h"
#include "packer/read/enrolled_keys.h"

using namespace kpack;

namespace {

const std::string kName = "db-d719b2cb-3d3a-4596-a3bc-dad00e67656f";

// The harness's own base64 reader, independent of pem_certificate: the body's lines, joined.
std::vector<uint8_t> decode_pem(const std::string& pem) {
  static const std::string kBegin = "-----BEGIN CERTIFICATE-----\n", kEnd = "-----END CERTIFICATE-----\n";
  std::vector<uint8_t> der;
  if (pem.rfind(kBegin, 0) != 0 || pem.size() < kBegin.size() + kEnd.size() ||
      pem.compare(pem.size() - kEnd.size(), kEnd.size(), kEnd) != 0)
    return der;
  uint32_t bits = 0;
  int held = 0;
  for (size_t i = kBegin.size(); i < pem.size() - kEnd.size(); ++i) {
    const char c = pem[i];
    int value = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '+'             ? 62
                : c == '/'             ? 63
                                       : -1;
    if (value < 0) continue;  // newlines and padding
    bits = bits << 6 | uint32_t(value);
    held += 6;
    if (held >= 8) {
      held -= 8;
      der.push_back(uint8_t(bits >> held));
    }
  }
  return der;
}

// Each entry is a signature of the variable's lists: non-empty, found in the variable, and all of
// them (with their owners and at least one list header) fit in what follows the attributes.
void check_entries(const std::vector<EnrolledEntry>& entries, std::span<const uint8_t> variable) {
  uint64_t held = 0;
  for (const EnrolledEntry& entry : entries) {
    FUZZ_CHECK(entry.variable == "db" && !entry.data.empty());
    FUZZ_CHECK(std::search(variable.begin(), variable.end(), entry.data.begin(), entry.data.end()) != variable.end());
    held += efi::kSignatureOwnerSize + entry.data.size();
  }
  if (!entries.empty())
    FUZZ_CHECK(held + sizeof(efi::SignatureListHeader) + efi::kEfivarAttributesSize <= variable.size());
}

void check_pem(const std::string& pem, const std::vector<uint8_t>& der) { FUZZ_CHECK(decode_pem(pem) == der); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> variable(data, size);
  Result<std::vector<EnrolledEntry>> entries = parse_signature_lists({variable, kName}, "db");
  if (!entries) return check_message(entries.error(), kName), 0;
  check_entries(*entries, variable);
  for (const EnrolledEntry& entry : *entries) {
    (void)describe_entry(entry);
    if (entry.kind == SignatureKind::kX509) check_pem(pem_certificate(entry.data), entry.data);
  }
  return 0;
}

#ifdef KPACK_FUZZ_SELF_TEST
// Each case breaks one invariant above with a spoiled entry, variable or PEM.
namespace {

const std::vector<uint8_t> kVariable = {7,  0,  0,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                        15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
                                        33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50};

EnrolledEntry entry_of(std::vector<uint8_t> data, std::string variable = "db") {
  EnrolledEntry entry;
  entry.variable = std::move(variable);
  entry.data = std::move(data);
  return entry;
}

}  // namespace

FUZZ_SPOIL("an entry of another variable") { check_entries({entry_of({1, 2}, "MokListRT")}, kVariable); }
FUZZ_SPOIL("an empty signature") { check_entries({entry_of({})}, kVariable); }
FUZZ_SPOIL("a signature that is not in the variable") { check_entries({entry_of({99, 98})}, kVariable); }
FUZZ_SPOIL("signatures that hold more than the variable") {
  check_entries({entry_of({1, 2, 3, 4, 5, 6, 7, 8}), entry_of({1, 2, 3, 4, 5, 6, 7, 8})}, kVariable);
}
FUZZ_SPOIL("a PEM that decodes to other bytes") { check_pem(pem_certificate(std::vector<uint8_t>{1, 2, 3}), {1, 2}); }
FUZZ_SPOIL("an error that does not name the variable") { check_message(Error{"problem"}, kName); }
#endif
