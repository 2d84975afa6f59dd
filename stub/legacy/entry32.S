// 32-bit entry, at the start of the protected-mode part (code32_start). Boot protocol contract:
// protected mode, paging off, flat CS = 0x10 / DS = 0x18, interrupts off, ESI = boot_params.
// It builds an identity map of the low 4 GiB, enters long mode and continues at the 64-bit entry,
// which then runs exactly as it does for a 64-bit loader.
#include "stub/runtime/asm_offsets.h"

	.code32
	.section .text.entry32, "ax"
	.globl startup_32
startup_32:
	cli
	cld
	// We may be loaded anywhere: find out where with call/pop, borrowing boot_params.scratch as a
	// 4-byte stack (the protocol reserves it for exactly this).
	leal	(BP_SCRATCH + 4)(%esi), %esp
	call	1f
1:	popl	%ebp
	movb	$1, (entered_at_startup_32 - 1b)(%ebp)	// for the run record: not the 64-bit entry

	leal	(boot_stack_top - 1b)(%ebp), %esp

	// Identity map 0..4 GiB with 2 MiB pages: PML4[0] -> PDPT[0..3] -> four page directories,
	// built in the first pages of the 64-bit entry's own tables (PageTables in paging.h), which
	// build_identity_map then completes without ever unmapping what is live.
	leal	(stub_page_tables - 1b)(%ebp), %edi
	leal	(PT_PDPT + PTE_PRESENT_WRITABLE)(%edi), %eax
	movl	%eax, (%edi)
	leal	(PT_PD + PTE_PRESENT_WRITABLE)(%edi), %eax
	leal	PT_PDPT(%edi), %ebx
	movl	$PT_LOW_GIBS, %ecx
2:	movl	%eax, (%ebx)
	addl	$0x1000, %eax
	addl	$8, %ebx
	loop	2b
	leal	PT_PD(%edi), %ebx
	movl	$(PTE_PRESENT_WRITABLE | PTE_LARGE), %eax
	movl	$(PT_LOW_GIBS * 512), %ecx
3:	movl	%eax, (%ebx)
	addl	$0x200000, %eax
	addl	$8, %ebx
	loop	3b

	// Long mode: PAE, the page tables, EFER.LME, then paging on.
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	%edi, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	// A GDT with a 64-bit code segment; its base is only known at run time, so build the
	// descriptor on the stack.
	leal	(boot_gdt - 1b)(%ebp), %eax
	pushl	%eax
	pushw	$BOOT_GDT_LIMIT
	lgdt	(%esp)
	addl	$6, %esp
	movl	%cr0, %eax
	orl	$(CR0_PG | CR0_PE), %eax
	movl	%eax, %cr0

	// A far return into the 64-bit code segment completes the switch.
	pushl	$BOOT_CS
	leal	(startup_64 - 1b)(%ebp), %eax
	pushl	%eax
	lret

	// What the packer needs to describe the stub as PE sections (StubLayout in
	// formats/kpack_image.h): offsets from startup_32, which is offset 0.
	.org STUB_LAYOUT_OFFSET
	.globl stub_layout
stub_layout:
	.ascii	"kpackLAY"
	.long	__rodata_start - startup_32
	.long	__data_start - startup_32
	.long	efi_pe_entry - startup_32
	.long	efi_handover_entry - startup_32
