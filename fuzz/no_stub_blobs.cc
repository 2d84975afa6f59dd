// The packer's image writer refers to the stub blobs that kpack_host embeds. Fuzzers and the seed
// generator never boot what they build, so zero-filled blobs of the right shape stand in: two
// sectors of setup, and a 16-byte "stub" after which the StubInfo record goes.
asm(R"(
  .section .rodata.kpack_blobs, "a"
  .balign 16
  .globl kpack_setup_blob, kpack_setup_blob_end, kpack_stub_blob, kpack_stub_blob_end
kpack_setup_blob:
  .zero 1024
kpack_setup_blob_end:
kpack_stub_blob:
  .zero 16
kpack_stub_blob_end:
  .previous
)");
