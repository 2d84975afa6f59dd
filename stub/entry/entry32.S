// 32-bit entry, at the start of the protected-mode part (code32_start). Boot protocol contract:
// protected mode, paging off, flat CS = 0x10 / DS = 0x18, interrupts off, ESI = boot_params.
// It builds an identity map of the low 4 GiB, enters long mode and continues at the 64-bit entry,
// which then runs exactly as it does for a 64-bit loader. In a confidential VM it only gets that
// far under SEV (the C-bit set) or TDX; SEV-ES and SEV-SNP end at its first CPUID.
#include "stub/asm_offsets/asm_offsets.h"

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
	subl	$(1b - startup_32), %ebp		// EBP = the image's base from here on
	leal	(startup_64_from_32 - startup_32)(%ebp), %eax
	jmp	long_mode32

// The PVH entry (Xen's direct boot ABI; an ELF's PHYS32_ENTRY note): protected mode, paging off,
// flat segments, interrupts off, EBX = hvm_start_info, and no stack. Its 64-bit code makes
// boot_params of hvm_start_info (pvh_boot_params.cc) and goes on as the boot-protocol entries do.
	.globl startup_pvh
startup_pvh:
	cli
	cld
	// call/pop needs four bytes of stack: hvm_start_info's version word, after its magic, put back.
	movl	4(%ebx), %edx
	leal	8(%ebx), %esp
	call	1f
1:	popl	%ebp
	movl	%edx, 4(%ebx)
	subl	$(1b - startup_32), %ebp
	movl	%ebx, %esi			// carried where boot_params is on the other entries
	leal	(startup_pvh_64 - startup_32)(%ebp), %eax

// From here both entries alike: EBP = the image's base, ESI = what the loader handed over, EAX =
// the 64-bit code to continue at, kept on top of the boot stack until the far return.
long_mode32:
	leal	(boot_stack_top - startup_32)(%ebp), %esp
	pushl	%eax

	// An IDT before the first CPUID or MSR access, whose one gate is #VC: an SEV-ES or SEV-SNP
	// guest ends there with kpack's termination request instead of a reset. Its gates sit on top
	// of the stack, which the 64-bit entry takes back once it has loaded its own.
	subl	$IDT32_SIZE, %esp
	movl	%esp, %edi
	xorl	%eax, %eax
	movl	$(IDT32_SIZE / 4), %ecx
	rep stosl
	leal	(vc_terminate32 - startup_32)(%ebp), %eax
	movw	%ax, IDT32_VC_GATE(%esp)
	movw	%cs, (IDT32_VC_GATE + 2)(%esp)
	movw	$IDT32_INTERRUPT_GATE, (IDT32_VC_GATE + 4)(%esp)
	shrl	$16, %eax
	movw	%ax, (IDT32_VC_GATE + 6)(%esp)
	pushl	%esp
	pushw	$(IDT32_SIZE - 1)
	lidt	(%esp)
	addl	$6, %esp

	// Under SEV the map below carries the C-bit, so the 64-bit entry reads the image as the loader
	// wrote it, encrypted, and refuses the guest on COM1 (boot_protocol_entry.cc); EDX is 0 elsewhere.
	call	sev_c_bit32
	movl	%eax, %edx

	// Identity map 0..4 GiB with 2 MiB pages: PML4[0] -> PDPT[0..3] -> four page directories,
	// built in the first pages of the 64-bit entry's own tables (PageTables in stub/paging/identity_map.h), which
	// build_identity_map then completes without ever unmapping what is live.
	leal	(stub_page_tables - startup_32)(%ebp), %edi
	leal	(PT_PDPT + PTE_PRESENT_WRITABLE)(%edi), %eax
	movl	%eax, (%edi)
	movl	%edx, 4(%edi)
	leal	(PT_PD + PTE_PRESENT_WRITABLE)(%edi), %eax
	leal	PT_PDPT(%edi), %ebx
	movl	$PT_LOW_GIBS, %ecx
2:	movl	%eax, (%ebx)
	movl	%edx, 4(%ebx)
	addl	$0x1000, %eax
	addl	$8, %ebx
	loop	2b
	leal	PT_PD(%edi), %ebx
	movl	$(PTE_PRESENT_WRITABLE | PTE_LARGE), %eax
	movl	$(PT_LOW_GIBS * 512), %ecx
3:	movl	%eax, (%ebx)
	movl	%edx, 4(%ebx)
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
	leal	(boot_gdt - startup_32)(%ebp), %eax
	pushl	%eax
	pushw	$BOOT_GDT_LIMIT
	lgdt	(%esp)
	addl	$6, %esp
	movl	%cr0, %eax
	orl	$(CR0_PG | CR0_PE), %eax
	movl	%eax, %cr0

	// A far return into the 64-bit code segment completes the switch, at the code the entry chose.
	movl	(boot_stack_top - 4 - startup_32)(%ebp), %eax
	pushl	$BOOT_CS
	pushl	%eax
	lret

// EAX = the C-bit of an SEV guest's page-table entries as a bit of their upper half (CPUID
// 0x8000001F EBX[5:0], always 32 or more; BTS on a register takes it modulo 32), when SEV_STATUS
// says SEV is on; 0 elsewhere. Asks in the engine's order (probe_confidential_vm): a TDX guest is
// never asked AMD's leaves. Keeps ESI and EBP.
sev_c_bit32:
	movl	$CPUID_TDX_LEAF, %eax
	xorl	%ecx, %ecx
	cpuid
	cmpl	$TDX_SIGNATURE_EBX, %ebx
	jne	1f
	cmpl	$TDX_SIGNATURE_ECX, %ecx
	jne	1f
	cmpl	$TDX_SIGNATURE_EDX, %edx
	je	2f
1:	movl	$CPUID_MAX_EXTENDED_LEAF, %eax
	cpuid
	cmpl	$CPUID_ENCRYPTION_LEAF, %eax
	jb	2f
	movl	$CPUID_ENCRYPTION_LEAF, %eax
	cpuid
	testl	$ENCRYPTION_LEAF_SEV, %eax
	jz	2f
	movl	%ebx, %edi
	movl	$MSR_SEV_STATUS, %ecx
	rdmsr
	testl	$SEV_STATUS_SEV, %eax
	jz	2f
	xorl	%eax, %eax
	btsl	%edi, %eax
	ret
2:	xorl	%eax, %eax
	ret

// #VC: only an SEV-ES or SEV-SNP guest gets one, and COM1 would raise the next. The GHCB
// termination request terminate_sev_es_guest sends in 64-bit mode (confidential_exit.cc).
vc_terminate32:
	movl	$MSR_SEV_STATUS, %ecx
	rdmsr
	movl	$GHCB_TERMINATE_SEV_ES, %ebx
	testl	$SEV_STATUS_SNP, %eax
	jz	1f
	movl	$GHCB_TERMINATE_SEV_SNP, %ebx
1:	movl	%ebx, %eax
	xorl	%edx, %edx
	movl	$MSR_SEV_ES_GHCB, %ecx
	wrmsr
	rep; vmmcall
2:	hlt
	jmp	2b

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
	.long	startup_pvh - startup_32
