/*
 * libhccl.so: CANN's collective communication library (Hccl*). torch_npu links it and looks about 72
 * Hccl* functions up by name when a process group is used; none exists here, so torch_npu
 * reports "Failed to find function Hccl..." when distributed (hccl backend) code runs. Plain
 * tensor code never calls into it.
 *
 * The library exists (with CANN's soname) so that the dynamic loader can satisfy torch_npu's
 * NEEDED entry; it exports nothing. See docs/torch_npu.md.
 */
__attribute__((used)) static const char pyaclnn_compat_identity[] =
    "pyaclnn CPU emulator: libhccl.so (compatibility library, no entry points)";
