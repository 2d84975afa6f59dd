// 64-bit entry, at protected-mode start + 0x200. Boot protocol contract: long mode, an identity map
// covering the image, boot_params and the command line, CS = 0x10 / DS = 0x18, RSI = boot_params.
// The 32-bit and PVH entries (entry32.S) continue here too, once in long mode. Sets the CPU state
// C++ and the codec libraries need, then hands over to C++: prepare_boot_inputs (before
// relocation), then the one boot path (boot_from_entry), which enters the kernel itself.
#include "stub/asm_offsets/asm_offsets.h"

	.code64
	.section .text.entry64, "ax"
	.globl startup_64
startup_64:
	movl	$RUN_ENTRY_LEGACY64, %r13d
	jmp	1f

// entry32.S, from the boot protocol's 32-bit entry.
	.globl startup_64_from_32
startup_64_from_32:
	movl	$RUN_ENTRY_LEGACY, %r13d
	jmp	1f

// entry32.S, from the PVH entry: RSI = hvm_start_info, turned into boot_params below.
	.globl startup_pvh_64
startup_pvh_64:
	movl	$RUN_ENTRY_PVH, %r13d
	jmp	1f

	// R13D = the entry (RunEntry), callee-saved.
1:	cli
	cld
	leaq	boot_stack_top(%rip), %rsp
	movq	%rsi, %r15			// boot_params or hvm_start_info, kept in a callee-saved register

	// Our GDT, so the kernel is entered with the protocol's selectors whatever the loader had, and
	// our exception handlers on it before the first CPUID, MSR or port access: in a confidential
	// VM those raise #VC or #VE, which only our handlers turn into a reason instead of a reset.
	call	load_boot_gdt
	call	install_exception_handlers

	// SSE, so the codec libraries run their normal code: CR0.EM off, CR0.MP on, CR4.OSFXSR and
	// CR4.OSXMMEXCPT on. Before any C++ that may use SSE (the handlers above never do).
	movq	%cr0, %rax
	andq	$~CR0_EM, %rax
	orq	$CR0_MP, %rax
	movq	%rax, %cr0
	movq	%cr4, %rax
	orq	$(CR4_OSFXSR | CR4_OSXMMEXCPT), %rax
	movq	%rax, %cr4

	// Debian builds the libraries with -fstack-protector: the canary is read at %fs:0x28.
	leaq	stub_tls(%rip), %rax
	movq	%rax, %rdx
	shrq	$32, %rdx
	movl	$MSR_FS_BASE, %ecx
	wrmsr

	// The BootInputs on the boot stack: filled before relocation, then the boot path, which
	// never returns (the kernel, or a halt with its line on COM1).
	subq	$BOOT_INPUTS_FRAME, %rsp
	movq	%r15, %rdi
	movl	%r13d, %esi
	movq	%rsp, %rdx
	call	prepare_boot_inputs
	movq	%rsp, %rdi
	call	boot_from_entry
	ud2

	.section .bss.stack, "aw", @nobits
	.balign 16
	.globl boot_stack, boot_stack_top
boot_stack:
	.fill	32 * 1024, 1, 0
boot_stack_top:
