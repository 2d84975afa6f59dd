// kpack: packs a vmlinux into an x86 boot-protocol image, or reads one back.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "packer/input/bzimage_reader.h"
#include "packer/input/default_codec.h"
#include "packer/cli/cli.h"
#include "packer/base/cpu_count.h"
#include "packer/input/elf_reader.h"
#include "packer/image/elf_writer.h"
#include "packer/base/file_io.h"
#include "packer/image/image_writer.h"
#include "packer/read/enrolled_keys.h"
#include "packer/read/info.h"
#include "packer/input/kernel_input.h"
#include "packer/image/pack_report.h"
#include "packer/read/stats.h"
#include "packer/cli/version.h"

using namespace kpack;

namespace {

// On a terminal, a pack that runs past a second shows one self-updating line on stderr (frames
// done, elapsed time), erased when it ends; nothing at all when stderr is a file or a pipe.
class ProgressLine {
 public:
  explicit ProgressLine(const char* codec) : codec_(codec) {
    if (isatty(STDERR_FILENO)) ticker_ = std::thread([this] { run(); });
  }
  ~ProgressLine() {
    if (!ticker_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    ticker_.join();
  }
  void update(uint64_t bytes, uint64_t total) {
    bytes_ = bytes;
    total_ = total;
  }

 private:
  void run() {
    auto start = std::chrono::steady_clock::now();
    bool shown = false;
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; })) {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (seconds < 1) continue;
      uint64_t total = total_;
      std::fprintf(stderr, "\rkpack: compressing (%s) %.1f of %.1f MB, %.0f s ", codec_, bytes_ / 1e6, total / 1e6,
                   seconds);
      shown = true;
    }
    if (shown) std::fputs("\r\033[K", stderr);  // leave the terminal as it was
  }

  const char* codec_;
  std::atomic<uint64_t> bytes_{0}, total_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread ticker_;
};

void say(const std::vector<std::string>& lines) {
  for (const std::string& line : lines) std::fprintf(stderr, "kpack: %s\n", line.c_str());
}

// Compress with the codec named or `chosen`, on every usable CPU, a progress line on a terminal,
// and the SBAT file's bytes.
Result<PackOptions> pack_options(const CommandLine& cl, const std::optional<DefaultCodec>& chosen,
                                 std::optional<ProgressLine>& progress) {
  PackOptions options = cl.pack;
  if (chosen) options.compress.codec = chosen->codec, options.compress.level = chosen->level;
  if (options.compress.threads == 0) options.compress.threads = usable_cpus();
  if (cl.verbosity != Verbosity::kQuiet) progress.emplace(codec_name(options.compress.codec));
  if (!cl.sbat_input.empty()) {
    std::vector<uint8_t> sbat = KPACK_TRY_RESULT(read_file(cl.sbat_input));
    // shim reads SBAT as CSV text; a few KiB is already a long revocation history.
    if (sbat.empty() || sbat.size() > 64 * 1024)
      return error_in(cl.sbat_input, "an SBAT file holds 1 byte to 64 KiB of CSV text");
    options.sbat = std::move(sbat);
  }
  options.progress = [&progress](uint64_t done, uint64_t total) {
    if (progress) progress->update(done, total);
  };
  return options;
}

struct PackedImage {
  std::vector<uint8_t> bytes;
  std::optional<ElfLoad> elf_load;  // an ELF output's (--elf) load address and placement
};

// The payload laid out and compressed, and the image put together around it.
Result<PackedImage> build_output(Context& ctx, const CommandLine& cl, const KernelInput& kernel,
                                 const PackOptions& options) {
  const ImageBlobs blobs = built_in_blobs(options.compress.codec);
  if (!cl.elf) return PackedImage{KPACK_TRY_RESULT(build_image(ctx, kernel, options, blobs)), std::nullopt};
  ElfImage elf = KPACK_TRY_RESULT(build_elf_image(ctx, kernel, options, blobs));
  if (elf.load.placement == ElfPlacement::kAboveKernel)
    ctx.warnings.push_back("warning: " + ctx.output + " does not fit below the kernel's floor: it loads at " +
                           hex(elf.load.address) +
                           ", above the kernel, and needs more guest RAM than the stock bzImage (kpack info says how "
                           "much)");
  return PackedImage{std::move(elf.bytes), elf.load};
}

// The pipeline: open the output, read the kernel, lay out and compress, write; each phase timed.
Status pack(const CommandLine& cl) {
  Context ctx{.input = cl.input, .output = cl.output, .relocs_input = cl.relocs_input};
  // The output's directory first: a run that cannot write its image fails before any work.
  OutputFile output = KPACK_TRY_RESULT(OutputFile::open(ctx.output));
  KernelInput kernel = KPACK_TRY_RESULT(load_kernel(ctx, cl.hints));
  add_pack_warnings(ctx, kernel);
  ctx.times.end("read the kernel");
  std::optional<DefaultCodec> chosen;
  if (!cl.codec_named) chosen = default_codec_for(kernel);
  std::optional<ProgressLine> progress;
  PackOptions options = KPACK_TRY_RESULT(pack_options(cl, chosen, progress));
  PackedImage image = KPACK_TRY_RESULT(build_output(ctx, cl, kernel, options));
  progress.reset();  // its line erased before anything else is said
  ctx.times.end("laid out and compressed");
  // Replace the output in one step; an ELF is an executable, as a vmlinux is.
  KPACK_TRY_RESULT(output.commit(image.bytes, cl.elf ? 0755 : 0644));
  ctx.times.end("wrote");
  // After success only, so that a failed pack still prints its one error line and nothing else.
  if (cl.verbosity == Verbosity::kVerbose) {
    say(pack_details(ctx, kernel, options, image.bytes, image.elf_load));
    say({ctx.times.line()});
  }
  if (cl.verbosity == Verbosity::kQuiet) return Ok{};
  if (chosen)
    say({std::string("packed with ") + codec_name(chosen->codec) + ", as no codec was named: " + chosen->reason});
  say(ctx.warnings);
  return Ok{};
}

Status extract(const CommandLine& cl) {
  // Both outputs' directories first, then find the payload, decode it, and split it into the ELF
  // and the relocation table.
  OutputFile output = KPACK_TRY_RESULT(OutputFile::open(cl.output));
  std::optional<OutputFile> relocs_output;
  if (!cl.relocs_output.empty()) relocs_output.emplace(KPACK_TRY_RESULT(OutputFile::open(cl.relocs_output)));
  std::vector<uint8_t> bytes = KPACK_TRY_RESULT(read_file(cl.input));
  const FileView file{bytes, cl.input};
  PackedPayload image;
  if (looks_like_elf(bytes))
    image = KPACK_TRY_RESULT(read_kpack_elf(file)).payload;
  else
    image = KPACK_TRY_RESULT(read_bzimage(file));
  KernelPayload payload = KPACK_TRY_RESULT(extract_kernel(image, file));
  // Write both atomically; the relocations only when asked for.
  if (relocs_output) {
    if (payload.relocation_table.empty()) return file.error("has no relocation table after its ELF");
    KPACK_TRY_RESULT(relocs_output->commit(payload.relocation_table, 0644));
  }
  return output.commit(payload.elf, 0755);
}

}  // namespace

int main(int argc, char** argv) {
  Result<CommandLine> cl = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
  if (!cl) {
    std::fprintf(stderr, "%s\n", cl.error().message.c_str());
    return 2;
  }
  Status status = Ok{};
  try {
    switch (cl->command) {
      case Command::kHelp: std::fputs(help_text(cl->help_topic), stdout); return 0;
      case Command::kVersion: std::fputs(version_text().c_str(), stdout); return 0;
      case Command::kPack: status = pack(*cl); break;
      case Command::kExtract: status = extract(*cl); break;
      case Command::kInfo: status = print_info(cl->input, stdout); break;
      case Command::kStats: status = print_stats(cl->stats_from, stdout); break;
      case Command::kKeys: status = print_enrolled_keys(cl->efivars, cl->pem, stdout); break;
    }
  } catch (const std::bad_alloc&) {
    // Inputs are bounded before anything is allocated for them; this is the last line of defence.
    status = error_in(cl->input, "out of memory");
  }
  if (!status) {
    std::fprintf(stderr, "kpack: %s\n", status.error().message.c_str());
    return 1;
  }
  return 0;
}
