// Real-mode entry of the setup sectors, and the two things C++ cannot say in real mode: a BIOS
// call with every register set, and the switch to protected mode. A 16-bit loader (SeaBIOS's
// -kernel ROM, GRUB linux16, ISOLINUX, qboot) enters at setup_seg+0x20:0 with DS = ES = SS =
// setup_seg; everything here is linked from the start of that segment.
#include "stub/asm_offsets/asm_offsets.h"

	.code16
	.section .text.entry16, "ax"

	// The setup header lives here; the packer writes it (formats/boot_params.h).
	. = HDR_OFFSET
	.globl setup_header
setup_header:
	.fill HDR_END - HDR_OFFSET, 1, 0

	// The header's jump lands here (HDR_END).
	.globl setup_entry
setup_entry:
	// CS = DS: the code is linked from the segment's start, and GCC's jump tables say so.
	pushw	%ds
	pushw	$normalized
	lretw
normalized:
	movw	%ds, %ax
	movw	%ax, %es
	// A stack of our own inside the loaded sectors (heap_end_ptr is optional), with ESP's upper
	// half clear: GCC's -m16 code addresses the stack through ESP.
	movw	%ax, %ss
	movl	$setup_stack_top, %esp
	cld
	// Zero-initialised data is not in the file (setup16.ld): clear it, the empty stack included.
	movw	$__bss16_start, %di
	movw	$__bss16_dwords, %cx
	xorl	%eax, %eax
	rep stosl
	// BIOS services may wait on timer or disk interrupts.
	sti
	calll	setup_main

// void bios_call(uint8_t vector, const BiosRegs* in, BiosRegs* out)
// The caller's registers and segments are kept; GCC's code assumes DS = ES = SS.
	.globl bios_call
bios_call:
	pushal
	pushw	%ds
	pushw	%es
	pushw	%fs
	pushw	%gs
	// Arguments past the saved registers (40 bytes) and the return address.
	movb	44(%esp), %al
	movb	%al, bios_call_vector
	jmp	1f			// past the patched byte: no stale prefetch on old CPUs
1:
	// *in onto the stack, then popped into every register at once.
	subl	$BIOS_REGS_SIZE, %esp
	movl	BIOS_REGS_SIZE + 48(%esp), %esi
	movl	%esp, %edi
	movl	$(BIOS_REGS_SIZE / 4), %ecx
	rep movsl
	popal
	popw	%gs
	popw	%fs
	popw	%es
	popw	%ds
	popfl
	.byte	0xCD			// int imm8
bios_call_vector:
	.byte	0
	// Every register back onto the stack in the same layout, then copied to *out.
	pushfl
	pushw	%ds
	pushw	%es
	pushw	%fs
	pushw	%gs
	pushal
	movw	%ss, %ax
	movw	%ax, %ds
	movw	%ax, %es
	cld
	movl	BIOS_REGS_SIZE + 52(%esp), %edi
	testl	%edi, %edi
	jz	2f
	movl	%esp, %esi
	movl	$(BIOS_REGS_SIZE / 4), %ecx
	rep movsl
2:
	addl	$BIOS_REGS_SIZE, %esp
	popw	%gs
	popw	%fs
	popw	%es
	popw	%ds
	popal
	retl

// void enter_protected_mode(uint32_t entry, uint32_t boot_params)
	.globl enter_protected_mode
enter_protected_mode:
	movl	4(%esp), %edi
	movl	8(%esp), %esi
	// Linear addresses need our segment base, known only now.
	xorl	%ebx, %ebx
	movw	%ds, %bx
	shll	$4, %ebx
	leal	setup_gdt(%ebx), %eax
	movl	%eax, setup_gdt_descriptor + 2
	leal	in_protected_mode(%ebx), %eax
	movl	%eax, protected_mode_target
	leal	setup_stack_top(%ebx), %edx

	lgdtl	setup_gdt_descriptor
	movl	%cr0, %eax
	orb	$CR0_PE, %al
	movl	%eax, %cr0
	ljmpl	*protected_mode_target

	.code32
in_protected_mode:
	movl	$BOOT_DS, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %fs
	movl	%eax, %gs
	movl	%eax, %ss
	movl	%edx, %esp
	// The 32-bit boot protocol: ESI = boot_params, EBP = EDI = EBX = 0.
	movl	%edi, %eax
	xorl	%ebp, %ebp
	xorl	%edi, %edi
	xorl	%ebx, %ebx
	jmp	*%eax

	.section .data.entry16, "aw"
	.balign 8
setup_gdt:
	.quad	0
	.quad	0
	.quad	0x00CF9B000000FFFF		// BOOT_CS: flat 4 GiB code, 32-bit
	.quad	0x00CF93000000FFFF		// BOOT_DS: flat 4 GiB data
setup_gdt_end:
setup_gdt_descriptor:
	.word	setup_gdt_end - setup_gdt - 1
	.long	0				// base, patched
protected_mode_target:
	.long	0				// offset, patched
	.word	BOOT_CS

	// Inside the 0x8000 bytes the loader reserves (setup16.ld checks), not in the file.
	.section .stack16, "aw", @nobits
	.balign 16
	.skip	4096
setup_stack_top:

	.section .note.GNU-stack, "", @progbits
