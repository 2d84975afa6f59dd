// Every option the stub takes from the kernel command line, read once per boot into one structure
// (boot_kernel; the EFI entries read it first, for what they decide before it, and hand it over in
// their BootInputs: one parse per boot). Each option
// is read as the code it stands in for reads it:
// - kpack.* and panic=: as the kernel's parse_args, whose options end at a bare "--" (what follows
//   is init's);
// - nokaslr, no5lvl: as the stock decompressor's cmdline_find_option_bool, over the whole line;
// - mem=, memmap=, hugepagesz= and hugepages=: as its handle_mem_options, which stops at "--"
//   (kaslr_options.h);
// - nosmp, maxcpus=, nr_cpus= and disable_cpu_apicid=: as the kernel's early parameters, with
//   get_option's numbers (a sign, then decimal, 0x hex or 0 octal digits, up to the first other
//   byte). kdump's crash kernels carry them (Debian's kdump-tools nr_cpus=1, others
//   disable_cpu_apicid=ID of the old boot CPU, which an INIT resets on some platforms).
// Where a key repeats, the last one counts, as parse_args applies each in turn.
#pragma once

#include <stdint.h>

#include "stub/options/kaslr_options.h"

namespace kpack {

struct StubOptions {
  bool debug = false;  // kpack.debug: each phase and its cycles on COM1
  uint64_t cpus = 0;   // kpack.cpus=N: decode on at most N CPUs; 0 when not given
  // The most CPUs the kernel brings up as it boots, its boot CPU included (nosmp and maxcpus=0:
  // 1), which the stub wakes no more than; 0 when the kernel's options set no limit.
  uint64_t kernel_cpus = 0;
  int64_t disabled_apic_id = -1;  // disable_cpu_apicid=N: an APIC ID never to INIT; -1: none
  bool no_five_level = false;     // no5lvl: the kernel starts with 4-level paging
  int64_t panic_seconds = 0;      // panic=N: N > 0 resets a failed boot after N seconds; else it halts
  KaslrOptions kaslr;             // nokaslr, mem=, memmap=, hugepages
  // The boot tests' switches.
  bool test_broken_trampoline = false;   // kpack.test_broken_trampoline
  bool test_stopped_helper = false;      // kpack.test_stopped_helper
  bool test_decode_before_exit = false;  // kpack.test_decode_before_exit
};

// `length` bytes of text, without the NUL.
StubOptions parse_stub_options(const char* command_line, uint64_t length);

}  // namespace kpack
