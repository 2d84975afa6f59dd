// 64-bit entry, at protected-mode start + 0x200. Boot protocol contract: long mode, an identity map
// covering the image, boot_params and the command line, CS = 0x10 / DS = 0x18, RSI = boot_params.
// Every other entry continues here too, once in long mode: the 32-bit and PVH entries (entry32.S)
// and the EFI entries after ExitBootServices. Sets up what C++ and the codec libraries need, then
// calls stub_entry with which entry ran and jumps to the kernel.
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

// efi_entry.cc, after ExitBootServices: RSI = boot_params, RDX = the FirmwareFacts it kept, which
// name the entry.
	.globl startup_efi_64
startup_efi_64:
	xorl	%r13d, %r13d
	movq	%rdx, %r12
	jmp	2f

	// R13D = the entry (RunEntry), R12 = the EFI entry's FirmwareFacts or 0; both callee-saved.
1:	xorl	%r12d, %r12d
2:	cli
	cld
	leaq	boot_stack_top(%rip), %rsp
	movq	%rsi, %r15			// boot_params, kept in a callee-saved register

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

	// Nothing may use the packer's record before it is checked: a bad one prints an error on
	// COM1 and halts here. Runs before relocation, like build_identity_map (the build checks both).
	leaq	startup_32(%rip), %rdi
	call	checked_packer_record
	movq	%rax, %r14			// the record, kept in a callee-saved register

	// PVH: boot_params made of hvm_start_info, before the identity map covers what it names; a
	// damaged one prints a line on COM1 and halts. Also before relocation.
	cmpl	$RUN_ENTRY_PVH, %r13d
	jne	3f
	movq	%r15, %rdi
	call	boot_params_from_pvh
	movq	%rax, %r15
3:
	// Our own identity map of 0..4 GiB: a loader's may cover only the image, and the kernel may
	// go anywhere in RAM. It also maps the 1 GiB windows holding the image, boot_params and the
	// command line when a loader put them above 4 GiB (too many such windows: an error and a halt).
	leaq	stub_page_tables(%rip), %rdi
	leaq	startup_32(%rip), %rsi
	movq	%r15, %rdx
	movq	PACKER_RECORD_IMAGE_SIZE(%r14), %rcx
	call	build_identity_map
	movq	%rax, %cr3

	// Debian builds the libraries with -fstack-protector: the canary is read at %fs:0x28.
	leaq	stub_tls(%rip), %rax
	movq	%rax, %rdx
	shrq	$32, %rdx
	movl	$MSR_FS_BASE, %ecx
	wrmsr

	// We are linked at 0 as a PIE: fix our absolute pointers for where we run.
	leaq	startup_32(%rip), %rdi
	call	apply_relocations

	movq	%r15, %rdi
	leaq	startup_32(%rip), %rsi
	movq	%r14, %rdx
	movl	%r13d, %ecx
	movq	%r12, %r8
	call	stub_entry			// returns the kernel's entry, or halts on any error

	// The 64-bit protocol into the kernel: RSI = boot_params.
	movq	%r15, %rsi
	xorl	%ebp, %ebp
	jmp	*%rax

	.section .bss.stack, "aw", @nobits
	.balign 16
	.globl boot_stack, boot_stack_top
boot_stack:
	.fill	32 * 1024, 1, 0
boot_stack_top:
