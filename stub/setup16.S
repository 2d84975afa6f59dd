// Real-mode setup: the code a 16-bit loader (QEMU -kernel with SeaBIOS, GRUB linux16) enters at
// setup_seg+0x20:0, with DS = ES = SS = setup_seg. It does what the boot protocol's setup code
// must do before the 32-bit entry, and nothing more, then runs on through code32_start so every
// 16-bit boot also exercises the 32-bit and 64-bit entries.
#include "asm_offsets.h"

	.code16
	.section .text.setup, "ax"

	// The setup header lives here; the packer writes it (formats/boot_params.h).
	. = HDR_OFFSET
	.fill HDR_END - HDR_OFFSET, 1, 0

setup_entry:
	cli
	cld
	// Our own stack inside the loaded setup sectors: a loader's heap_end_ptr is optional.
	movw	%ds, %ax
	movw	%ax, %es
	movw	%ax, %ss
	movw	$setup_stack_top, %sp

	// boot_params starts as a copy of the header the loader filled in (command line, initrd, ...).
	movw	$HDR_OFFSET, %si
	movw	$(boot_params + HDR_OFFSET), %di
	movw	$(HDR_END - HDR_OFFSET), %cx
	rep movsb

	// The e820 memory map, straight into boot_params.e820_table.
	xorl	%ebx, %ebx
	movw	$(boot_params + BP_E820_TABLE), %di
next_e820:
	movl	$0xE820, %eax
	movl	$0x534D4150, %edx		// "SMAP"
	movl	$E820_ENTRY_SIZE, %ecx
	int	$0x15
	jc	e820_done
	cmpl	$0x534D4150, %eax
	jne	e820_done
	addw	$E820_ENTRY_SIZE, %di
	incb	boot_params + BP_E820_ENTRIES
	cmpb	$E820_MAX_ENTRIES, boot_params + BP_E820_ENTRIES
	jae	e820_done
	testl	%ebx, %ebx
	jnz	next_e820
e820_done:

	// A20: ask the BIOS, then the fast gate; without it odd megabytes alias even ones.
	movw	$0x2401, %ax
	int	$0x15
	inb	$0x92, %al
	orb	$2, %al
	andb	$0xFE, %al
	outb	%al, $0x92

	// No interrupts from here on: mask both PICs and NMI, as the kernel's own setup does.
	movb	$0xFF, %al
	outb	%al, $0xA1
	outb	%al, $0x21
	movb	$0x80, %al
	outb	%al, $0x70

	// Linear addresses need our segment base, known only now.
	xorl	%ebx, %ebx
	movw	%ds, %bx
	shll	$4, %ebx
	leal	setup_gdt(%ebx), %eax
	movl	%eax, setup_gdt_descriptor + 2
	leal	in_protected_mode(%ebx), %eax
	movl	%eax, protected_mode_target
	leal	boot_params(%ebx), %esi
	leal	setup_stack_top(%ebx), %edx

	lgdtl	setup_gdt_descriptor
	movl	%cr0, %eax
	orb	$1, %al
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
	// The 32-bit protocol: ESI = boot_params, EBP = EDI = EBX = 0.
	movl	BP_HDR_CODE32_START(%esi), %eax
	xorl	%ebp, %ebp
	xorl	%edi, %edi
	xorl	%ebx, %ebx
	jmp	*%eax

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

	// boot_params and the stack are part of the file so they sit in memory the loader reserved.
	.balign 16
boot_params:
	.fill	BP_SIZE, 1, 0
	.fill	1024, 1, 0
setup_stack_top:
	.balign 512, 0
