// What every 64-bit entry shares on its way into the kernel: the boot protocol's GDT and selectors,
// the switch between 4- and 5-level paging, and the jump itself with the 64-bit protocol's registers.
#include "stub/asm_offsets/asm_offsets.h"

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

// void enter_kernel(uint64_t entry, BootParams* params): every boot's one way into the kernel, on
// the stub's identity map or (a confidential VM's EFI entry) the firmware's: the 64-bit boot
// protocol's state, RSI = boot_params.
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

// void run_on_boot_stack(void (*run)(void*), void* arg): the EFI entries after ExitBootServices,
// whose stack is the firmware's, i.e. free memory the kernel may be decoded over.
	.globl run_on_boot_stack
	.hidden run_on_boot_stack
run_on_boot_stack:
	leaq	boot_stack_top(%rip), %rsp
	movq	%rdi, %rax
	movq	%rsi, %rdi
	xorl	%ebp, %ebp
	call	*%rax
	ud2

// void level_switch(uint32_t root): toggles CR4.LA57 and loads `root` into CR3, which needs paging
// off, i.e. a trip through 32-bit compatibility mode. A template: switch_paging_levels (paging_levels.cc)
// copies it below 4 GiB and adds the copy's address to the far jump's offset, so the 32-bit code
// uses no stack (ours may lie above 4 GiB). Needs the boot GDT and the identity map of the copy.
	.section .rodata.level_switch, "a"
	.globl level_switch_start
	.hidden level_switch_start
level_switch_start:
	// A 32-bit trip leaves the upper halves of the registers undefined: keep the callee-saved ones
	// on the stack, and the upper half of RSP in EBX.
	pushq	%rbx
	pushq	%rbp
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	movq	%rsp, %rbx
	shrq	$32, %rbx
	pushq	$BOOT_CS32
	leaq	1f(%rip), %rax
	pushq	%rax
	lretq
2:	movl	%esp, %esp
	shlq	$32, %rbx
	orq	%rbx, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbp
	popq	%rbx
	ret

	.code32
1:	movl	%cr0, %eax
	andl	$~CR0_PG, %eax
	movl	%eax, %cr0
	movl	%edi, %cr3
	movl	%cr4, %eax
	xorl	$CR4_LA57, %eax
	movl	%eax, %cr4
	movl	%cr0, %eax
	orl	$CR0_PG, %eax
	movl	%eax, %cr0
	.globl level_switch_far_jump
	.hidden level_switch_far_jump
level_switch_far_jump:
	ljmpl	$BOOT_CS, $(2b - level_switch_start)
	.globl level_switch_end
	.hidden level_switch_end
level_switch_end:
	.code64

	// The entries' GDT: the 32-bit entry loads it to reach long mode, load_boot_gdt to leave the
	// loader's or the firmware's.
	.section .rodata.boot_gdt, "a"
	.balign 8
	.globl boot_gdt
	.hidden boot_gdt
boot_gdt:
	.quad	0
	.quad	0x00CF9B000000FFFF		// BOOT_CS32: 32-bit code, for level_switch only
	.quad	0x00AF9B000000FFFF		// BOOT_CS: 64-bit code
	.quad	0x00CF93000000FFFF		// BOOT_DS: flat data
