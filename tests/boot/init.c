/*
 * Minimal /init for kpack boot tests: prove that the kernel got all the way to userspace, say when,
 * and power the machine off so QEMU exits at once.
 *
 * Build: gcc -static -O2 -o init init.c
 *
 * The TSC is read before anything else in main() so that, under `qemu -icount shift=0,sleep=off`
 * (one guest instruction per virtual nanosecond), the printed value measures the whole boot path up
 * to userspace and is repeatable; comparing two images of the same kernel gives the cost of
 * whatever ran before the kernel. (glibc's static start-up code runs before main; it is a few
 * thousand instructions and identical for every image, so it cancels out.)
 *
 * After the marker it prints where the kernel runs, for the KASLR tests:
 *   KPACK_KASLR text=<virtual _text from /proc/kallsyms> code=<physical "Kernel code" from /proc/iomem>
 * and with kpack.panic on the command line it crashes the kernel on purpose (sysrq c), so the panic
 * message shows whether the kernel saw KASLR ("Kernel Offset: 0x..." or "Kernel Offset: disabled").
 *
 * For the setup16 tests (tests/setup16), in the same write after those lines:
 *   kpack.bootparams  the boot_params page the kernel started with (/sys/kernel/boot_params/data),
 *                     as 128 lines "OOOO: <64 hex digits>" (offset, 32 bytes) between the lines
 *                     KPACK_BOOT_PARAMS_BEGIN and KPACK_BOOT_PARAMS_END; every line carries its
 *                     offset, so a reader can tell a complete dump from one a kernel message cut into
 *   kpack.screen      what the kernel made of the display and the BIOS disks, one fact a line:
 *                       KPACK_SCREEN proc_fb=<a line of /proc/fb, or "none">
 *                       KPACK_SCREEN fb0.virtual_size=W,H  KPACK_SCREEN fb0.bits_per_pixel=N
 *                       KPACK_EDD int13_dev80=present|absent
 *                       KPACK_EDD int13_dev80/<file>=<contents, lines joined by " | ">
 *                       (raw_data and mbr_signature as they are, raw_data in hex)
 * Always, for the run report's tests (tests/boot/stats.sh, tests/loaders, tests/efi):
 *   KPACK_SETUP_DATA types=<the type of each /sys/kernel/boot_params/setup_data/N, in order, comma-separated>
 *   KPACK_SETUP_DATA sums=<TYPE:LENGTH:FNV-1a of each node's data, in the same order>
 *   kpack.setupdata   and every node's bytes, between KPACK_SETUP_DATA_BEGIN and KPACK_SETUP_DATA_END:
 *                       KPACK_SETUP_DATA_NODE N type=<type file> data=<data file in hex>
 * For the 5-level paging tests (tests/loaders, tests/efi):
 *   kpack.paging      KPACK_PAGING_LEVELS=5|4 (from /proc/meminfo's VmallocTotal: 32 TiB with 4 levels,
 *                     12800 TiB with 5), or KPACK_PAGING_LEVELS=unknown
 * For the SMP tests (tests/smp):
 *   kpack.cpuonline   KPACK_CPU_ONLINE <first line of /sys/devices/system/cpu/online> (e.g. 0-3)
 *   kpack.memsum=A,S  KPACK_MEMSUM A,S fnv=<FNV-1a of the S bytes of physical memory at A, read
 *                     through /dev/mem, or "unreadable"> (A and S in 0x hex: a region memmap=
 *                     reserved, which STRICT_DEVMEM lets /dev/mem read)
 * For the measured-boot tests (tests/efi/measured-boot.sh):
 *   kpack.cmdlinehex  KPACK_CMDLINE_HEX=<every byte of /proc/cmdline in hex> (non-ASCII intact)
 *   kpack.measured    KPACK_PCR9=<the TPM's /sys/class/tpm/tpm0/pcr-sha256/9, or <unreadable>>
 *                     KPACK_EVENT_LOG bytes=<size of the firmware's event log the kernel exposes, -1: none>
 *                     and per EV_EVENT_TAG entry of that (crypto-agile) log, in order:
 *                       KPACK_EVENT_TAG pcr=N digests=<alg:hex,...> data=<hex>
 * If the initramfs holds /edd.ko (the CONFIG_EDD=m kernels' module, tests/setup16/make-initramfs-edd.sh)
 * it is loaded first, so /sys/firmware/edd exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <dirent.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

static inline uint64_t read_tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The initramfs carries no device nodes (it is built without root), so the kernel could not give us
 * a console on fds 0-2: find one ourselves. /dev/kmsg is the last resort because it only reaches the
 * serial port through the kernel log, which a "quiet" command line may suppress. */
static int open_console(void)
{
    static const char *const candidates[] = {"/dev/console", "/dev/ttyS0", "/dev/kmsg"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        int fd = open(candidates[i], O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0)
            return fd;
    }
    return -1;
}

/* The first line of `path` containing `needle`, into `out`; empty when there is none. */
static void find_line(const char *path, const char *needle, char *out, size_t size)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, needle)) {
            snprintf(out, size, "%s", line);
            break;
        }
    }
    fclose(f);
}

/* "KPACK_KASLR text=ffffffff81000000 code=01000000" from kallsyms' "ADDR T _text" and iomem's
 * "  START-END : Kernel code". */
static int kaslr_line(char *out, size_t size)
{
    char text[256], code[256], cmdline[1024];
    find_line("/proc/kallsyms", " T _text\n", text, sizeof text);
    find_line("/proc/iomem", "Kernel code", code, sizeof code);
    find_line("/proc/cmdline", "", cmdline, sizeof cmdline);
    char *text_end = strchr(text, ' ');
    if (text_end)
        *text_end = 0;
    char *code_start = code + strspn(code, " ");
    char *code_end = strchr(code_start, '-');
    if (code_end)
        *code_end = 0;
    return snprintf(out, size, "KPACK_KASLR text=%s code=%s panic=%d\n", text, code_start,
                    strstr(cmdline, "kpack.panic") != NULL);
}

/* The console output, built up and written at once. */
static char out[65536];
static size_t out_len;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + out_len, sizeof out - out_len, fmt, ap);
    va_end(ap);
    if (n > 0)
        out_len += (size_t)n < sizeof out - out_len ? (size_t)n : sizeof out - out_len - 1;
}

/* Up to `size` bytes of a file; -1 if it cannot be opened or read. */
static ssize_t read_file(const char *path, unsigned char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n <= 0) {
            if (n < 0 && got == 0)
                got = (size_t)-1;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    return (ssize_t)got;
}

static void emit_boot_params(void)
{
    static unsigned char page[4096];
    ssize_t n = read_file("/sys/kernel/boot_params/data", page, sizeof page);
    if (n != (ssize_t)sizeof page) {
        emit("KPACK_BOOT_PARAMS_ERROR read %zd bytes of /sys/kernel/boot_params/data\n", n);
        return;
    }
    emit("KPACK_BOOT_PARAMS_BEGIN\n");
    for (size_t off = 0; off < sizeof page; off += 32) {
        emit("%04zx: ", off);
        for (size_t i = 0; i < 32; i++)
            emit("%02x", page[off + i]);
        emit("\n");
    }
    emit("KPACK_BOOT_PARAMS_END\n");
}

/* "PREFIX=contents": text with newlines joined by " | ", or hex for binary files. */
static void emit_file(const char *prefix, const char *path, int hex)
{
    unsigned char buf[1024];
    ssize_t n = read_file(path, buf, sizeof buf);
    emit("%s=", prefix);
    if (n < 0) {
        emit("<unreadable>\n");
        return;
    }
    while (!hex && n > 0 && buf[n - 1] == '\n')
        n--;
    for (ssize_t i = 0; i < n; i++) {
        if (hex)
            emit("%02x", buf[i]);
        else if (buf[i] == '\n')
            emit(" | ");
        else
            emit("%c", buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '?');
    }
    emit("\n");
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void emit_screen(void)
{
    char line[256];
    int any = 0;
    FILE *f = fopen("/proc/fb", "r");
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        emit("KPACK_SCREEN proc_fb=%s\n", line);
        any = 1;
    }
    if (f)
        fclose(f);
    if (!any)
        emit("KPACK_SCREEN proc_fb=none\n");
    if (access("/sys/class/graphics/fb0", F_OK) == 0) {
        emit_file("KPACK_SCREEN fb0.virtual_size", "/sys/class/graphics/fb0/virtual_size", 0);
        emit_file("KPACK_SCREEN fb0.bits_per_pixel", "/sys/class/graphics/fb0/bits_per_pixel", 0);
        emit_file("KPACK_SCREEN fb0.name", "/sys/class/graphics/fb0/name", 0);
    }

    static const char dir[] = "/sys/firmware/edd/int13_dev80";
    if (access(dir, F_OK) != 0) {
        emit("KPACK_EDD int13_dev80=absent\n");
        return;
    }
    emit("KPACK_EDD int13_dev80=present\n");
    struct dirent **names;
    int count = scandir(dir, &names, NULL, by_name);
    for (int i = 0; i < count; i++) {
        const char *name = names[i]->d_name;
        char path[512], prefix[300];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        snprintf(prefix, sizeof prefix, "KPACK_EDD int13_dev80/%s", name);
        if (names[i]->d_type == DT_REG)
            emit_file(prefix, path, strcmp(name, "raw_data") == 0);
        free(names[i]);
    }
    if (count >= 0)
        free(names);
}

static int is_number(const struct dirent *entry)
{
    return entry->d_name[0] && strspn(entry->d_name, "0123456789") == strlen(entry->d_name);
}

static int by_number(const struct dirent **a, const struct dirent **b)
{
    return atoi((*a)->d_name) - atoi((*b)->d_name);
}

/* FNV-1a over a whole file (a SETUP_PCI node holds an option ROM of tens of KB); -1: unreadable. */
static long long file_fnv1a(const char *path, uint64_t *hash)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    unsigned char buf[4096];
    long long total = 0;
    ssize_t n;
    *hash = 0xcbf29ce484222325ull;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            *hash = (*hash ^ buf[i]) * 0x100000001b3ull;
        total += n;
    }
    close(fd);
    return n < 0 ? -1 : total;
}

/* kpack.memsum=0xADDR,0xSIZE: the FNV-1a of that physical memory, as tests/boot/reserved-memory.sh
 * checks the bytes it loaded there survived the boot. */
static void emit_memory_sum(const char *cmdline)
{
    const char *word = strstr(cmdline, "kpack.memsum=");
    unsigned long long addr = 0, size = 0;
    if (!word || sscanf(word, "kpack.memsum=%llx,%llx", &addr, &size) != 2)
        return;
    uint64_t hash = 0xcbf29ce484222325ull;
    unsigned long long done = 0;
    int fd = open("/dev/mem", O_RDONLY);
    unsigned char buf[4096];
    while (fd >= 0 && done < size) {
        size_t want = size - done < sizeof buf ? (size_t)(size - done) : sizeof buf;
        ssize_t n = pread(fd, buf, want, (off_t)(addr + done));
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            hash = (hash ^ buf[i]) * 0x100000001b3ull;
        done += (unsigned long long)n;
    }
    if (fd >= 0)
        close(fd);
    if (done == size)
        emit("KPACK_MEMSUM 0x%llx,0x%llx fnv=%016llx\n", addr, size, (unsigned long long)hash);
    else
        emit("KPACK_MEMSUM 0x%llx,0x%llx fnv=unreadable\n", addr, size);
}

static void emit_setup_data(int with_data)
{
    static const char dir[] = "/sys/kernel/boot_params/setup_data";
    struct dirent **names;
    int count = scandir(dir, &names, is_number, by_number);
    char types[512] = "";
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        char path[300], type[64];
        snprintf(path, sizeof path, "%s/%s/type", dir, names[i]->d_name);
        find_line(path, "", type, sizeof type);
        type[strcspn(type, "\n")] = 0;
        used += snprintf(types + used, sizeof types - used, "%s%s", i ? "," : "", type);
        if (used >= sizeof types)
            used = sizeof types - 1;
    }
    emit("KPACK_SETUP_DATA types=%s\n", count > 0 ? types : "none");
    /* Each node's data length and FNV-1a, on a line short enough that no kernel message cuts it. */
    char sums[1024] = "";
    used = 0;
    for (int i = 0; i < count; i++) {
        char path[300], type[64];
        uint64_t hash = 0;
        snprintf(path, sizeof path, "%s/%s/type", dir, names[i]->d_name);
        find_line(path, "", type, sizeof type);
        type[strcspn(type, "\n")] = 0;
        snprintf(path, sizeof path, "%s/%s/data", dir, names[i]->d_name);
        long long length = file_fnv1a(path, &hash);
        used += snprintf(sums + used, sizeof sums - used, "%s%s:%lld:%016llx", i ? "," : "", type, length,
                         (unsigned long long)hash);
        if (used >= sizeof sums)
            used = sizeof sums - 1;
    }
    emit("KPACK_SETUP_DATA sums=%s\n", count > 0 ? sums : "none");
    if (with_data) {
        emit("KPACK_SETUP_DATA_BEGIN\n");
        for (int i = 0; i < count; i++) {
            char path[300], prefix[400], type[64];
            snprintf(path, sizeof path, "%s/%s/type", dir, names[i]->d_name);
            find_line(path, "", type, sizeof type);
            type[strcspn(type, "\n")] = 0;
            snprintf(prefix, sizeof prefix, "KPACK_SETUP_DATA_NODE %s type=%s data", names[i]->d_name, type);
            snprintf(path, sizeof path, "%s/%s/data", dir, names[i]->d_name);
            emit_file(prefix, path, 1);
        }
        emit("KPACK_SETUP_DATA_END\n");
    }
    for (int i = 0; i < count; i++)
        free(names[i]);
    if (count >= 0)
        free(names);
}

static uint32_t le32(const unsigned char *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The TCG2 (crypto-agile) event log: a SHA-1-format first event whose data, the Spec ID event,
 * gives each digest algorithm's size; then TCG_PCR_EVENT2 entries. Prints the EV_EVENT_TAG ones. */
static void emit_event_log(void)
{
    static unsigned char log[256 * 1024];
    ssize_t n = read_file("/sys/kernel/security/tpm0/binary_bios_measurements", log, sizeof log);
    emit("KPACK_EVENT_LOG bytes=%zd\n", n);
    if (n < 32 + 28 || memcmp(log + 32, "Spec ID Event03", 16) != 0)
        return;
    const unsigned char *spec = log + 32, *end = log + n;
    uint32_t algorithms = le32(spec + 24);
    const unsigned char *at = log + 32 + le32(log + 28);
    while (at + 12 <= end) {
        uint32_t pcr = le32(at), type = le32(at + 4), count = le32(at + 8);
        char digests[1024] = "";
        size_t used = 0;
        at += 12;
        for (uint32_t i = 0; i < count && at + 2 <= end; i++) {
            uint16_t alg = le16(at), size = 0;
            for (uint32_t j = 0; j < algorithms; j++)
                if (le16(spec + 28 + 4 * j) == alg)
                    size = le16(spec + 28 + 4 * j + 2);
            used += snprintf(digests + used, sizeof digests - used, "%s%04x:", i ? "," : "", alg);
            for (uint16_t k = 0; k < size && at + 2 + k < end && used < sizeof digests; k++)
                used += snprintf(digests + used, sizeof digests - used, "%02x", at[2 + k]);
            at += 2 + size;
        }
        if (at + 4 > end)
            return;
        uint32_t data_size = le32(at);
        const unsigned char *data = at + 4;
        at = data + data_size;
        if (at > end)
            return;
        if (type != 6) /* EV_EVENT_TAG */
            continue;
        emit("KPACK_EVENT_TAG pcr=%u digests=%s data=", pcr, digests);
        for (uint32_t k = 0; k < data_size; k++)
            emit("%02x", data[k]);
        emit("\n");
    }
}

static void write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t unused = write(fd, text, strlen(text));
    (void)unused;
    close(fd);
}

/* The edd module of kernels that have CONFIG_EDD=m, when the initramfs carries it. */
static void load_edd_module(void)
{
    int fd = open("/edd.ko", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (syscall(SYS_finit_module, fd, "", 0) != 0)
        emit("KPACK_EDD module load failed: %s\n", strerror(errno));
    close(fd);
}

int main(void)
{
    uint64_t tsc = read_tsc();

    /* devtmpfs supplies /dev/console and friends. The result is deliberately ignored: EBUSY means
     * the kernel mounted it already, and for any other error /dev/console may still exist (and
     * complaining would need a console anyway). */
    (void)mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);

    /* Where the kernel runs, for the KASLR tests; read after the TSC, so it costs the marker
     * nothing. */
    (void)mount("proc", "/proc", "proc", 0, NULL);
    char kaslr[640];
    kaslr_line(kaslr, sizeof kaslr);

    emit("KPACK_INIT_OK tsc=%llu\n%s", (unsigned long long)tsc, kaslr);

    char cmdline[1024];
    find_line("/proc/cmdline", "", cmdline, sizeof cmdline);
    int want_params = strstr(cmdline, "kpack.bootparams") != NULL;
    int want_screen = strstr(cmdline, "kpack.screen") != NULL;
    int want_cpus = strstr(cmdline, "kpack.cpuonline") != NULL;
    int want_measured = strstr(cmdline, "kpack.measured") != NULL;
    int want_setup_data = strstr(cmdline, "kpack.setupdata") != NULL;
    (void)mount("sysfs", "/sys", "sysfs", 0, NULL);
    emit_setup_data(want_setup_data);
    if (strstr(cmdline, "kpack.paging")) {
        char vmalloc[128];
        unsigned long long kib = 0;
        find_line("/proc/meminfo", "VmallocTotal:", vmalloc, sizeof vmalloc);
        int known = sscanf(vmalloc, "VmallocTotal: %llu", &kib) == 1;
        emit("KPACK_PAGING_LEVELS=%s\n", !known ? "unknown" : kib > (1ull << 36) ? "5" : "4");
    }
    if (strstr(cmdline, "kpack.cmdlinehex"))
        emit_file("KPACK_CMDLINE_HEX", "/proc/cmdline", 1);
    if (want_measured) {
        (void)mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
        emit_file("KPACK_PCR9", "/sys/class/tpm/tpm0/pcr-sha256/9", 0);
        emit_event_log();
    }
    if (want_cpus) {
        char online[64];
        find_line("/sys/devices/system/cpu/online", "", online, sizeof online);
        emit("KPACK_CPU_ONLINE %s%s", online[0] ? online : "unreadable", strchr(online, '\n') ? "" : "\n");
    }
    emit_memory_sum(cmdline);
    if (want_screen)
        load_edd_module();
    if (want_params)
        emit_boot_params();
    if (want_screen)
        emit_screen();

    /* The dumps are long enough for an asynchronous kernel message to land in the middle of them on
     * the console: keep the kernel's messages off the console while they are written. */
    char printk[64] = "";
    if (want_params || want_screen || want_setup_data) {
        find_line("/proc/sys/kernel/printk", "", printk, sizeof printk);
        write_text("/proc/sys/kernel/printk", "1");
    }

    int fd = open_console();
    if (fd >= 0) {
        /* One write() so the marker is never split by interleaved kernel messages; tcdrain() so
         * it has left the UART before the power-off below. */
        ssize_t unused = write(fd, out, out_len);
        (void)unused;
        tcdrain(fd);
        close(fd);
    }
    if (printk[0])
        write_text("/proc/sys/kernel/printk", printk);
    if (strstr(kaslr, "panic=1")) {
        int sysrq = open("/proc/sysrq-trigger", O_WRONLY);
        if (sysrq >= 0) {
            ssize_t unused = write(sysrq, "c", 1);
            (void)unused;
        }
    }

    sync();
    reboot(RB_POWER_OFF);

    /* Returning from init panics the kernel; with panic=-1 QEMU would reboot (exit under
     * -no-reboot) and hide the failure. Stay put instead and let the harness time out. */
    for (;;)
        pause();
}
