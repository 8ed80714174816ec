/* The emulated aclop operators of libacl_op_compiler (src/compat/acl_op_compiler.c runs them; each family
 * of operators in its own file under src/compat/aclop/). Not exported. */
#ifndef PYACLNN_COMPAT_ACLOP_OPS_H
#define PYACLNN_COMPAT_ACLOP_OPS_H

#include <stddef.h>
#include <stdint.h>

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

/* aclop_common.c: ACL_ERROR_INVALID_PARAM with "<op>: <text>" for aclGetRecentErrMsg; a description's element
 * count (-1: a negative dim, or one that overflows with 8-byte elements). */
aclError aclop_bad(const aclop_call *c, const char *op, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int64_t aclop_count(const pyaclnn_stub_aclop_desc *d);

/* dropout_v3.c: the byte-mask dropout of torch_npu's dropout_with_byte_mask on Atlas A2. */
aclError aclop_drop_out_gen_mask_v3(const aclop_call *c);
aclError aclop_drop_out_do_mask_v3(const aclop_call *c);

/* quantize.c: Quantize, torch_npu's npu_quantize with div_mode=True. */
aclError aclop_quantize(const aclop_call *c);

#endif
