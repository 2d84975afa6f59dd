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
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
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

    char lines[704];
    int len = snprintf(lines, sizeof lines, "KPACK_INIT_OK tsc=%llu\n%s", (unsigned long long)tsc, kaslr);

    int fd = open_console();
    if (fd >= 0) {
        /* One write() so the marker is never split by interleaved kernel messages; tcdrain() so
         * it has left the UART before the power-off below. */
        ssize_t unused = write(fd, lines, (size_t)len);
        (void)unused;
        tcdrain(fd);
        close(fd);
    }
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
