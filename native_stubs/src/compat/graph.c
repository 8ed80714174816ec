/*
 * libgraph.so: CANN's graph construction library. torch_npu links it but binds no C symbol from it;
 * only torchair uses its C++ (ge::) API, which the emulator does not provide.
 *
 * The library exists (with CANN's soname) so that the dynamic loader can satisfy torch_npu's
 * NEEDED entry; it exports nothing. See docs/torch_npu.md.
 */
__attribute__((used)) static const char pyaclnn_compat_identity[] =
    "pyaclnn CPU emulator: libgraph.so (compatibility library, no entry points)";
