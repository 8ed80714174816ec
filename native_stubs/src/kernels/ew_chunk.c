#include "kernels/ew_chunk.h"

#include <string.h>

#include "numerics.h"

static int f16_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
static int bf16_nan(uint16_t h) { return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0; }

/* ew_load of a FLOAT is (double)x, and its cast to FLOAT rounds through fp32 again: (double)x. A 16-bit
 * float widens exactly to fp32; cast to its own dtype, a non-NaN value rounds to itself. Integers and BOOL
 * to themselves: ew_cast wraps to the dtype's width (nothing to do) or tests != 0 (already 0/1). */
void ew_load_chunk(const unsigned char *src, int64_t stride, aclDataType from, aclDataType to, int64_t m,
                   ew_value *dst) {
    size_t isz = ew_itemsize(from);
    int64_t step = stride * (int64_t)isz;
    const unsigned char *p = src;
    if (from == ACL_FLOAT && to == ACL_FLOAT) {
        for (int64_t e = 0; e < m; e++, p += step) {
            float x;
            memcpy(&x, p, 4);
            dst[e] = (ew_value){(double)x, 0};
        }
    } else if ((from == ACL_FLOAT16 || from == ACL_BF16) && (to == ACL_FLOAT || to == from)) {
        int half = from == ACL_FLOAT16;
        for (int64_t e = 0; e < m; e++, p += step) {
            uint16_t h;
            memcpy(&h, p, 2);
            if (to != ACL_FLOAT && (half ? f16_nan(h) : bf16_nan(h))) {
                dst[e] = ew_cast(ew_load(p, from), from, to);
                continue;
            }
            dst[e] = (ew_value){(double)(half ? num_f16_to_f32(h) : num_bf16_to_f32(h)), 0};
        }
    } else if (from == to && from == ACL_INT32) {
        for (int64_t e = 0; e < m; e++, p += step) {
            int32_t x;
            memcpy(&x, p, 4);
            dst[e] = (ew_value){0, x};
        }
    } else if (from == to && from == ACL_INT64) {
        for (int64_t e = 0; e < m; e++, p += step) {
            int64_t x;
            memcpy(&x, p, 8);
            dst[e] = (ew_value){0, x};
        }
    } else if (from == to && from == ACL_BOOL) {
        for (int64_t e = 0; e < m; e++, p += step) dst[e] = (ew_value){0, *p != 0};
    } else {
        for (int64_t e = 0; e < m; e++, p += step) dst[e] = ew_cast(ew_load(p, from), from, to);
    }
}

/* To FLOAT from FLOAT: ew_cast rounds to fp32 and ew_store rounds again: (float)v. To a 16-bit float from a
 * float dtype: ew_cast rounds through fp32 to the dtype and ew_store converts that (a value of the dtype)
 * once more, so a non-NaN result is num_f32_to_x((float)v); a NaN takes the per-element path. Integers and
 * BOOL from themselves: the low bytes, or != 0. */
void ew_store_chunk(unsigned char *dst, int64_t stride, aclDataType to, aclDataType from, int64_t m,
                    const ew_value *v) {
    size_t isz = ew_itemsize(to);
    int64_t step = stride * (int64_t)isz;
    unsigned char *p = dst;
    int from_float = from == ACL_FLOAT || from == ACL_FLOAT16 || from == ACL_BF16;
    if (to == ACL_FLOAT && from == ACL_FLOAT) {
        for (int64_t e = 0; e < m; e++, p += step) {
            float x = (float)v[e].f;
            memcpy(p, &x, 4);
        }
    } else if ((to == ACL_FLOAT16 || to == ACL_BF16) && from_float) {
        int half = to == ACL_FLOAT16;
        for (int64_t e = 0; e < m; e++, p += step) {
            uint16_t h = half ? num_f32_to_f16((float)v[e].f) : num_f32_to_bf16((float)v[e].f);
            if (half ? f16_nan(h) : bf16_nan(h)) {
                ew_store(p, to, ew_cast(v[e], from, to));
                continue;
            }
            memcpy(p, &h, 2);
        }
    } else if (to == from && to == ACL_INT32) {
        for (int64_t e = 0; e < m; e++, p += step) {
            uint32_t x = (uint32_t)v[e].i;
            memcpy(p, &x, 4);
        }
    } else if (to == from && to == ACL_INT64) {
        for (int64_t e = 0; e < m; e++, p += step) memcpy(p, &v[e].i, 8);
    } else if (to == from && to == ACL_BOOL) {
        for (int64_t e = 0; e < m; e++, p += step) *p = v[e].i != 0;
    } else {
        for (int64_t e = 0; e < m; e++, p += step) ew_store(p, to, ew_cast(v[e], from, to));
    }
}
