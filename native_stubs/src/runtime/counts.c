/*
 * pyaclnn_stub_live_counts: what is alive right now, for leak checks in tests and the optional
 * report at aclFinalize. The runtime counts its own objects; the aclnn objects are counted by
 * libnnopbase, asked through dlsym so that libascendcl does not depend on it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "rt_internal.h"

typedef void (*nnopbase_counts_fn)(pyaclnn_stub_counts *out);

PYACLNN_STUB_API void pyaclnn_stub_live_counts(pyaclnn_stub_counts *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    nnopbase_counts_fn nnopbase = (nnopbase_counts_fn)dlsym(RTLD_DEFAULT, "pyaclnn_stub_nnopbase_counts");
    if (!nnopbase) {   /* loaded with RTLD_LOCAL: find it by its soname, without loading it */
        void *lib = dlopen("libnnopbase.so", RTLD_LAZY | RTLD_NOLOAD);
        if (lib) {
            nnopbase = (nnopbase_counts_fn)dlsym(lib, "pyaclnn_stub_nnopbase_counts");
            dlclose(lib);
        }
    }
    if (nnopbase) {
        pyaclnn_stub_counts theirs;
        memset(&theirs, 0, sizeof theirs);
        nnopbase(&theirs);
        out->tensors = theirs.tensors;
        out->scalars = theirs.scalars;
        out->arrays = theirs.arrays;
        out->tensor_lists = theirs.tensor_lists;
        out->scalar_lists = theirs.scalar_lists;
        out->executors = theirs.executors;
    }
    rt_mem_table_totals(&out->device_allocations, &out->device_bytes, &out->host_allocations,
                        &out->host_registrations);
    out->streams = rt_stream_user_count();
    out->events = rt_event_count();
    out->contexts = rt_context_user_count();
}
