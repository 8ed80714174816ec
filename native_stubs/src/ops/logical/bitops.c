/*
 * The bitwise operators' and shifts' element functions and steps (bitops.toml). Values arrive in the compute
 * dtype's int64 representation (sign-extended for the signed dtypes; UINT64 values of 2^63 and more as negative
 * int64s); results are wrapped to the compute dtype.
 */
#include "opbase/checks.h"
#include "opbase/opbase.h"
#include "ops_decls.h"

static ew_value wrap(const ew_plan *p, uint64_t v) { return ew_cast((ew_value){0, (int64_t)v}, ACL_INT64, p->compute); }

ew_value bitwise_not_i(const ew_plan *p, ew_value a, ew_value b, ew_value c) {
    (void)b, (void)c;
    if (p->compute == ACL_BOOL) return (ew_value){0, !a.i};
    return wrap(p, ~(uint64_t)a.i);
}
