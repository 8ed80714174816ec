/*
 * The logical operators' element functions and steps (logical.toml): inputs arrive as BOOL (0/1: the engine
 * casts them to the compute dtype, BOOL, as the vendor's op_api Casts them), the result is BOOL and the engine
 * casts it to out's dtype.
 */
#include "opbase/checks.h"
#include "opbase/opbase.h"
#include "ops_decls.h"

/* logical_compute: the operation runs on BOOL operands whatever the input dtypes (the vendor casts both
 * inputs to BOOL; its regbase shortcut for two equal dtypes gives the same truth values). */
aclnnStatus opc_logical_compute(op_call *c, const op_step *s) {
    (void)s;
    c->compute = ACL_BOOL;
    return ACLNN_SUCCESS;
}

/* logical_not_dims self out: at most 8 dimensions, checked only when self or out is not contiguous (161002). */
aclnnStatus opc_logical_not_dims(op_call *c, const op_step *s) {
    if (pyaclnn_stub_is_contiguous(op_tensor(c, s, 0)) && pyaclnn_stub_is_contiguous(op_tensor(c, s, 1)))
        return ACLNN_SUCCESS;
    aclnnStatus rc = ew_check_max_dim(c->api, op_pname(c, s, 0), op_tensor(c, s, 0), EW_MAX_DIM);
    return rc ? rc : ew_check_max_dim(c->api, op_pname(c, s, 1), op_tensor(c, s, 1), EW_MAX_DIM);
}

static ew_value truth(int x) { return (ew_value){0, x != 0}; }

ew_value logical_and_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)p, (void)c;
    return truth(a.i && b.i);
}

ew_value logical_or_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)p, (void)c;
    return truth(a.i || b.i);
}

ew_value logical_xor_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)p, (void)c;
    return truth((a.i != 0) != (b.i != 0));
}

ew_value logical_not_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)p, (void)b, (void)c;
    return truth(!a.i);
}
