// Every option the stub reads, parsed once (stub/options/stub_options.h): each as the code it
// stands in for reads it, quotes, repeats and "--" included.
#include <doctest/doctest.h>

#include <cstring>

#include "stub/options/stub_options.h"

using namespace kpack;

namespace {

StubOptions parse(const char* text) { return parse_stub_options(text, std::strlen(text)); }

}  // namespace

TEST_CASE("no options: nothing asked for") {
  StubOptions o = parse("console=ttyS0 quiet");
  CHECK_FALSE(o.debug);
  CHECK(o.cpus == 0);
  CHECK_FALSE(o.no_five_level);
  CHECK(o.panic_seconds == 0);
  CHECK_FALSE(o.kaslr.disabled);
  CHECK(o.kaslr.memory_limit == kMaxPhysicalAddress);
  CHECK_FALSE(o.test_broken_trampoline);
  CHECK_FALSE(o.test_stopped_helper);
  CHECK_FALSE(o.test_decode_before_exit);
  StubOptions empty = parse_stub_options(nullptr, 0);
  CHECK_FALSE(empty.debug);
  CHECK(empty.cpus == 0);
}

TEST_CASE("each option is read") {
  StubOptions o = parse(
      "kpack.debug kpack.cpus=3 no5lvl panic=5 nokaslr mem=1G kpack.test_broken_trampoline "
      "kpack.test_stopped_helper kpack.test_decode_before_exit");
  CHECK(o.debug);
  CHECK(o.cpus == 3);
  CHECK(o.no_five_level);
  CHECK(o.panic_seconds == 5);
  CHECK(o.kaslr.disabled);
  CHECK(o.kaslr.memory_limit == (1ull << 30));
  CHECK(o.test_broken_trampoline);
  CHECK(o.test_stopped_helper);
  CHECK(o.test_decode_before_exit);
}

TEST_CASE("flags are whole words: a value or a longer name is not the flag") {
  StubOptions o = parse("kpack.debug=1 kpack.debugger xkpack.debug no5lvl=0 nokaslrx");
  CHECK_FALSE(o.debug);
  CHECK_FALSE(o.no_five_level);
  CHECK_FALSE(o.kaslr.disabled);
}

TEST_CASE("quotes: a quoted word or value is read without its quotes, as next_arg reads it") {
  CHECK(parse("\"kpack.debug\"").debug);
  CHECK(parse("kpack.cpus=\"2\"").cpus == 2);
  CHECK(parse("panic=\"7\"").panic_seconds == 7);
  // A separator inside quotes does not end the word: "a kpack.debug" is one value.
  CHECK_FALSE(parse("dyndbg=\"a kpack.debug\"").debug);
}

TEST_CASE("a repeated key: the last one counts, as parse_args applies each in turn") {
  CHECK(parse("kpack.cpus=2 kpack.cpus=3").cpus == 3);
  CHECK(parse("panic=5 panic=0").panic_seconds == 0);
  CHECK(parse("panic=0 panic=-1").panic_seconds == -1);
  // A value that is not a number leaves the earlier one, as the kernel ignores a bad int.
  CHECK(parse("panic=5 panic=x").panic_seconds == 5);
  CHECK(parse("kpack.cpus=2 kpack.cpus=two").cpus == 2);
  CHECK(parse("kpack.debug kpack.debug").debug);
}

TEST_CASE("-- ends the kernel's options: kpack.*, panic= and mem= after it are init's") {
  StubOptions o = parse("quiet -- kpack.debug kpack.cpus=2 panic=5 mem=1G memmap=1G$2G");
  CHECK_FALSE(o.debug);
  CHECK(o.cpus == 0);
  CHECK(o.panic_seconds == 0);
  CHECK(o.kaslr.memory_limit == kMaxPhysicalAddress);
  CHECK(o.kaslr.memory.reserved_count == 0);
  // A quoted "--" ends them too; a word that only starts with -- does not.
  CHECK_FALSE(parse("\"--\" kpack.debug").debug);
  CHECK(parse("--x kpack.debug").debug);
  CHECK(parse("kpack.debug --").debug);
  CHECK(parse("--=1 kpack.debug").debug);
}

TEST_CASE("-- does not hide nokaslr or no5lvl: the stock decompressor finds those anywhere") {
  StubOptions o = parse("quiet -- nokaslr no5lvl");
  CHECK(o.kaslr.disabled);
  CHECK(o.no_five_level);
}

TEST_CASE("panic=: a signed decimal") {
  CHECK(parse("panic=30").panic_seconds == 30);
  CHECK(parse("panic=-1").panic_seconds == -1);
  CHECK(parse("panic=").panic_seconds == 0);
  CHECK(parse("panic=1x").panic_seconds == 0);
  CHECK(parse("panic=99999999999999999999").panic_seconds == 0);
}

TEST_CASE("the command line ends at its NUL or its length") {
  const char text[] = "quiet\0kpack.debug";
  CHECK_FALSE(parse_stub_options(text, sizeof(text) - 1).debug);
  CHECK_FALSE(parse_stub_options("kpack.debug", 5).debug);
}

TEST_CASE("the kernel's CPU limits: nosmp, maxcpus=, nr_cpus= and disable_cpu_apicid=, as its early parameters") {
  StubOptions none = parse("console=ttyS0");
  CHECK(none.kernel_cpus == 0);
  CHECK(none.disabled_apic_id == -1);
  CHECK(parse("nosmp").kernel_cpus == 1);
  CHECK(parse("nosmp=1").kernel_cpus == 1);    // an early parameter's key, with a value or without
  CHECK(parse("maxcpus=0").kernel_cpus == 1);  // 0 disables SMP, as nosmp
  CHECK(parse("maxcpus=1").kernel_cpus == 1);
  CHECK(parse("maxcpus=3").kernel_cpus == 3);
  CHECK(parse("nr_cpus=1").kernel_cpus == 1);  // Debian's kdump-tools
  CHECK(parse("nr_cpus=0").kernel_cpus == 0);  // only a positive nr_cpus counts
  CHECK(parse("nr_cpus=-2").kernel_cpus == 0);
  CHECK(parse("maxcpus=-1").kernel_cpus == 0);           // setup_max_cpus is unsigned: no limit
  CHECK(parse("maxcpus=4 nr_cpus=2").kernel_cpus == 2);  // the smaller counts
  CHECK(parse("nr_cpus=2 maxcpus=4 nosmp").kernel_cpus == 1);
  CHECK(parse("maxcpus=2 maxcpus=6").kernel_cpus == 6);  // the last of a key, as parse_args applies them
  CHECK(parse("maxcpus=abc").kernel_cpus == 0);          // no digits: ignored, as get_option ignores it
  // get_option's numbers: hex, octal, and digits up to the first other byte.
  CHECK(parse("maxcpus=0x10").kernel_cpus == 16);
  CHECK(parse("maxcpus=010").kernel_cpus == 8);
  CHECK(parse("nr_cpus=2,3").kernel_cpus == 2);
  CHECK(parse("maxcpus=99999999999999999999999").kernel_cpus == uint64_t{INT64_MAX});
  CHECK(parse("maxcpus=0x123456789abcdef01234").kernel_cpus == uint64_t{INT64_MAX});  // fuzz_stub_inputs: overflowed
  CHECK(parse("maxcpus=0x7fffffffffffffff").kernel_cpus == uint64_t{INT64_MAX});
  CHECK(parse("nr_cpus=0x7ffffffffffffffe").kernel_cpus == uint64_t{INT64_MAX} - 1);
  CHECK(parse("disable_cpu_apicid=0").disabled_apic_id == 0);
  CHECK(parse("disable_cpu_apicid=0x1f").disabled_apic_id == 31);
  CHECK(parse("disable_cpu_apicid=-1").disabled_apic_id == -1);
  CHECK(parse("disable_cpu_apicid=").disabled_apic_id == -1);
  // Behind "--" they are init's.
  CHECK(parse("-- nr_cpus=1 nosmp disable_cpu_apicid=0").kernel_cpus == 0);
  CHECK(parse("-- disable_cpu_apicid=0").disabled_apic_id == -1);
  // A word that only begins like one is not it.
  CHECK(parse("nosmpx maxcpus_x=1 xnr_cpus=1").kernel_cpus == 0);
}
