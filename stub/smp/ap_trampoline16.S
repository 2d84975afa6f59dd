// The application processors' way from a START IPI to C++: real mode, protected mode, long mode on
// the boot CPU's page tables, a wait for the stacks, a stack of its own, then ap_entry (smp.cc).
// smp.cc copies these bytes to a free page below 1 MiB and fills the data block at AP_DATA in that
// page; the code is position independent, every address it needs comes from that block. Interrupts
// stay off throughout.
#include "stub/asm_offsets/asm_offsets.h"

	// Only ever copied, never run in place.
	.section .rodata.ap_trampoline, "a"
	.globl ap_trampoline_start, ap_trampoline_code32, ap_trampoline_code64, ap_trampoline_end

	.code16
ap_trampoline_start:
	// A START IPI enters here at CS:0, CS being this page's segment.
	cli
	// DS = CS: the data block is addressed from the page's start.
	movw	%cs, %ax
	movw	%ax, %ds
	// EBX = the page's physical address, the base of every access once segments are flat.
	movzwl	%ax, %ebx
	shll	$4, %ebx
	// The page's own GDT: a 32-bit code segment plus the boot protocol's BOOT_CS and BOOT_DS.
	lgdtl	AP_DATA + AP_GDT_DESCRIPTOR
	// Protected mode, CR0 written whole: INIT leaves caching off (CD, NW set).
	movl	$AP_CR0_PROTECTED, %eax
	movl	%eax, %cr0
	// The far jump loads the 32-bit code segment.
	ljmpl	*(AP_DATA + AP_TO_CODE32)

	.code32
ap_trampoline_code32:
	// Flat data segments, as the 64-bit code and C++ expect them.
	movl	$BOOT_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	// CR4: PAE, which long mode needs, SSE's OSFXSR and OSXMMEXCPT, and LA57 when the boot CPU
	// runs with 5-level paging (a kexec from a 5-level kernel): its CR3 below is then a PML5, which
	// an AP without LA57 would walk as a PML4. LA57 can only be set with paging off, as here.
	movl	AP_DATA + AP_CR4(%ebx), %eax
	movl	%eax, %cr4
	// The boot CPU's identity map.
	movl	AP_DATA + AP_CR3(%ebx), %eax
	movl	%eax, %cr3
	// EFER.LME, and NXE when the boot CPU's page tables may use the NX bit.
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	AP_DATA + AP_EFER(%ebx), %eax
	wrmsr
	// Paging on activates long mode; CR0's SSE bits (MP set, EM clear) as entry64.S sets them.
	movl	AP_DATA + AP_CR0(%ebx), %eax
	movl	%eax, %cr0
	// The far jump to BOOT_CS leaves compatibility mode for 64-bit mode.
	ljmpl	*AP_DATA + AP_TO_CODE64(%ebx)

	.code64
ap_trampoline_code64:
	// The upper halves of registers are undefined after the switch.
	movl	%ebx, %ebx
	// The APs are woken before the boot CPU knows where the stacks go (it is still reading the
	// kernel's headers): wait, touching nothing but this page, until it says how many there are.
2:	cmpl	$AP_STACKS_PENDING, AP_DATA + AP_STACKS(%rbx)
	jne	3f
	// A countdown between the reads, not PAUSE: under QEMU's TCG every PAUSE leaves the translated
	// code and takes QEMU's global lock, which the boot CPU needs for each port access meanwhile.
	movl	$AP_WAIT_SPINS, %ecx
4:	decl	%ecx
	jnz	4b
	jmp	2b
3:
	// A stack of its own: tickets number the APs in arrival order; one without a stack parks.
	movl	$1, %eax
	lock xaddl	%eax, AP_DATA + AP_TICKET(%rbx)
	cmpl	AP_DATA + AP_STACKS(%rbx), %eax
	jae	1f
	// ap_entry(ticket) on stack `ticket`, whose top is stack_base + (ticket + 1) * stack_size.
	movl	%eax, %edi
	incl	%eax
	imulq	AP_DATA + AP_STACK_SIZE(%rbx), %rax
	addq	AP_DATA + AP_STACK_BASE(%rbx), %rax
	movq	%rax, %rsp
	call	*AP_DATA + AP_ENTRY(%rbx)
	// ap_entry never returns; should it, or without a stack, halt until the boot CPU's INIT. The
	// one halt loop outside stub/arch/cpu.h's halt(): an AP that reaches it may have no stack to
	// call anything with.
1:	hlt
	jmp	1b
ap_trampoline_end:
