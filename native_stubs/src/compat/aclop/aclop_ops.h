/* The emulated aclop operators of libacl_op_compiler (src/compat/acl_op_compiler.c runs them; each family
 * of operators in its own file under src/compat/aclop/). Not exported. */
#ifndef PYACLNN_COMPAT_ACLOP_OPS_H
#define PYACLNN_COMPAT_ACLOP_OPS_H

#include <stddef.h>

#include "../compat.h"

#define ACLOP_MAX_IO 8          /* inputs / outputs of the emulated aclop operators */

/* One aclopCompileAndExecute(V2) call, its handles read (snapshots of the descriptions). */
typedef struct {
    const char *func;
    pyaclnn_stub_aclop_desc in[ACLOP_MAX_IO], out[ACLOP_MAX_IO];
    void *in_data[ACLOP_MAX_IO], *out_data[ACLOP_MAX_IO];
    size_t in_size[ACLOP_MAX_IO], out_size[ACLOP_MAX_IO];
    const aclopAttr *attr;
    aclrtStream stream;
} aclop_call;

/* dropout_v3.c: the byte-mask dropout of torch_npu's dropout_with_byte_mask on Atlas A2. */
aclError aclop_drop_out_gen_mask_v3(const aclop_call *c);
aclError aclop_drop_out_do_mask_v3(const aclop_call *c);

/* quantize.c: Quantize, torch_npu's npu_quantize with div_mode=True. */
aclError aclop_quantize(const aclop_call *c);

#endif
