// What every 64-bit entry shares on its way into the kernel: the boot protocol's GDT and selectors,
// and the jump itself with the 64-bit protocol's registers.
#include "stub/runtime/asm_offsets.h"

	.code64
	.text
// The boot protocol's GDT (BOOT_CS 64-bit code, BOOT_DS flat data) and its selectors loaded
// (FS's base becomes 0: the canary's base is set after this).
	.globl load_boot_gdt
	.hidden load_boot_gdt
load_boot_gdt:
	subq	$16, %rsp
	movw	$BOOT_GDT_LIMIT, (%rsp)
	leaq	boot_gdt(%rip), %rax
	movq	%rax, 2(%rsp)
	lgdt	(%rsp)
	addq	$16, %rsp
	pushq	$BOOT_CS
	leaq	1f(%rip), %rax
	pushq	%rax
	lretq
1:	movl	$BOOT_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	ret

// void enter_kernel(uint64_t entry, BootParams* params): the EFI entry's way into the kernel,
// after ExitBootServices, on the firmware's identity map: the 64-bit boot protocol's state.
	.globl enter_kernel
	.hidden enter_kernel
enter_kernel:
	cli
	movq	%rdi, %r12
	movq	%rsi, %r15
	call	load_boot_gdt
	movq	%r15, %rsi
	xorl	%ebp, %ebp
	jmp	*%r12


	// The entries' GDT: the 32-bit entry loads it to reach long mode, load_boot_gdt to leave the
	// loader's or the firmware's.
	.section .rodata.boot_gdt, "a"
	.balign 8
	.globl boot_gdt
	.hidden boot_gdt
boot_gdt:
	.quad	0
	.quad	0
	.quad	0x00AF9B000000FFFF		// BOOT_CS: 64-bit code
	.quad	0x00CF93000000FFFF		// BOOT_DS: flat data
