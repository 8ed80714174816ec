/*
 * libacl_tdt_channel.so: CANN's host-device data transfer channels. torch_npu's libtensorpipe links it
 * but binds no symbol from it (its acl* needs come from libascendcl).
 *
 * The library exists (with CANN's soname) so that the dynamic loader can satisfy torch_npu's
 * NEEDED entry; it exports nothing. See docs/torch_npu.md.
 */
__attribute__((used)) static const char pyaclnn_compat_identity[] =
    "pyaclnn CPU emulator: libacl_tdt_channel.so (compatibility library, no entry points)";
