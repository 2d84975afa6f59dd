#include "stub/machine/efi_configuration_table.h"

namespace kpack {

uint64_t configuration_table(const efi::ConfigurationTable* entries, uint64_t count, const efi::Guid& guid) {
  for (uint64_t i = 0; i < count; ++i)
    if (__builtin_memcmp(&entries[i].vendor_guid, &guid, sizeof(guid)) == 0)
      return reinterpret_cast<uint64_t>(entries[i].vendor_table);
  return 0;
}

}  // namespace kpack
