/* What the emulated aclop operators share (src/compat/aclop/): the failure report and the element count. */
#include <stdarg.h>
#include <stdio.h>

#include "aclop_ops.h"

aclError aclop_bad(const aclop_call *c, const char *op, const char *fmt, ...) {
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, c->func, "%s: %s", op, text);
    return ACL_ERROR_INVALID_PARAM;
}

int64_t aclop_count(const pyaclnn_stub_aclop_desc *d) {
    int64_t n = 1;
    for (int i = 0; i < d->ndim; i++) {
        if (d->dims[i] < 0 || (d->dims[i] && n > INT64_MAX / 8 / d->dims[i])) return -1;
        n *= d->dims[i];
    }
    return n;
}
