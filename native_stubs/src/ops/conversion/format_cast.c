/*
 * aclnnNpuFormatCast and aclnnNpuFormatCastCalculateSizeAndFormat (hicann/ops-math
 * conversion/npu_format_cast/op_host/op_api/aclnn_npu_format_cast.cpp, the L0 TransData it runs:
 * conversion/trans_data/op_api/transdata.cpp; definition: format_cast.toml). Bytes are moved into and out of
 * the NPU's private blocked layouts, padding is zero: bit-exact (class a).
 *
 * The layouts (docs/zh/context/data_format.md; the AI CPU transfer kernels in trans_data/op_kernel_aicpu):
 *   FRACTAL_NZ (and NZ_C0_2/4/16/32)  ND (..., n, m)      -> (..., ceil(m/C0), ceil(n/16), 16, C0):
 *                                       element (i, j) at [j / C0][i / 16][i % 16][j % C0]
 *   NC1HWC0                           NCHW / NHWC          -> (N, C1, H, W, C0)          C1 = ceil(C/C0)
 *   NDC1HWC0                          NCDHW / NDHWC        -> (N, D, C1, H, W, C0)
 *   FRACTAL_Z                         NCHW / HWCN          -> (C1*H*W, N1, 16, C0)       N1 = ceil(N/16)
 *                                       element (n, c, h, w) at [(c/C0*H + h)*W + w][n / 16][n % 16][c % C0]
 *   FRACTAL_Z_3D                      NCDHW / DHWCN        -> (D*C1*H*W, N1, 16, C0), rows (d, c1, h, w)
 * C0 is the private tensor's last storage dim (aclnnNpuFormatCastCalculateSizeAndFormat derives it from
 * additionalDtype: 32 bytes of that dtype, or the vendor's 16 / 32 / 64 for the Ascend 950 matmul cases).
 *
 * Which pairs run: the vendor's per SoC. Ascend 950 (regbase): ND / NCL -> FRACTAL_NZ(_C0_16/_C0_32) and the NZ
 * formats -> ND (NCHW / NCDHW sources only for same-dtype quant casts); everything else fails in TransData
 * (561103 "TransData not support: NCHW -> NC1HWC0"), as the 950 documentation marks NC1HWC0, FRACTAL_Z ... as
 * unsupported there. Atlas A2/A3: the pairs of kTransdataForwardFormatPairs910B both ways.
 *
 * Phase 1 in the vendor's order (aclnnNpuFormatCastGetWorkspaceSize):
 *   1. srcTensor, dstTensor non-NULL                                                   -> 561103
 *   2. (kept, not returned) SoC is 950 / A2; src, dst contiguous; dtypes in the common list
 *   3. 950: the ND->NZ or NZ->ND checks replace 2's result; A2: dtypes in the A2 list  -> 161002
 *   4. 2's (or 3's) result                                                              -> 161002
 *   5. A2: a pair the table lacks: the vendor returns `false` (0, success) and builds no launch: the emulator's
 *      executor does nothing
 *   6. TransData: formats known, ranks matching the formats, the pair supported        -> 561103
 *   (emulator) the private tensor's storage shape is the layout of the public one for its C0 -> 161002
 * On 950 step 3 overwrites step 2's result, so (as in the vendor's code) a non-contiguous source passes when the
 * ND->NZ checks pass: TransData then reads its storage shape = view shape from the data address, i.e. the
 * memory as if it were contiguous, which is what the kernel here does for the public source.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opbase/checks.h"
#include "kernels/device.h"
#include "kernels/nz_layout.h"
#include "kernels/view.h"
#include "ops_decls.h"
#include "aclnnop/aclnn_npu_format_cast.h"

#define FC_DHWCN ((aclFormat)31)   /* ge::FORMAT_DHWCN; acl_base.h has no name for it */

enum { FC_COPY, FC_NZ, FC_C1, FC_FZ };
enum { AX_N, AX_C, AX_D, AX_H, AX_W };

typedef struct {
    int kind;
    int to_private;          /* 1: inputs[0] (public) -> outputs[0] (private); 0: the reverse         */
    int bits;                /* element size                                                           */
    int axis[PYACLNN_STUB_MAX_DIMS];   /* C1 / FZ: the canonical axis (AX_*) of each public dim         */
    int64_t dim[5];          /* C1 / FZ: N, C, D, H, W (D = 1 for the 4-d formats)                     */
    int64_t c0, c1, n1, n0;  /* NZ: c1 = ceil(m/c0), n1 = ceil(n/n0)                                   */
    int64_t n, m;            /* NZ: the public tensor's last two dims                                  */
    int64_t storage_numel;
} fc_plan;

static aclFormat primary(aclFormat f) { return (aclFormat)((int)f & 0xff); }

static int is_nz(aclFormat f) {
    return f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_FRACTAL_NZ_C0_2 || f == ACL_FORMAT_FRACTAL_NZ_C0_4 ||
           f == ACL_FORMAT_FRACTAL_NZ_C0_16 || f == ACL_FORMAT_FRACTAL_NZ_C0_32;
}

static int to_nz_source(aclFormat f) {   /* INPUT_FORMAT_TO_NZ_SUPPORT_LIST */
    return f == ACL_FORMAT_ND || f == ACL_FORMAT_NCL || f == ACL_FORMAT_NCHW || f == ACL_FORMAT_NCDHW;
}

static int is_quant_dtype(aclDataType s, aclDataType d) {   /* IsQuantMatmulDtype */
    return s == d && (s == ACL_INT8 || s == ACL_UINT8 || s == ACL_FLOAT8_E4M3FN || s == ACL_HIFLOAT8 ||
                      s == ACL_FLOAT4_E2M1 || s == ACL_FLOAT4_E1M2);
}

static int is_nonquant_dtype(int dtype, aclFormat dst) {   /* IsNonQuantMatmulDtype */
    return (dtype == ACL_FLOAT && dst != ACL_FORMAT_FRACTAL_NZ_C0_16 && dst != ACL_FORMAT_FRACTAL_NZ_C0_32) ||
           dtype == ACL_FLOAT16 || dtype == ACL_BF16;
}

static int elem_bits(aclDataType dt) {
    return dt == ACL_FLOAT4_E2M1 || dt == ACL_FLOAT4_E1M2 || dt == ACL_INT4 ? 4 : (int)(8 * ew_itemsize(dt));
}

/* ge::GetSizeByDataType: bytes of one element (sub-byte types: 1). */
static int64_t type_size(int dtype) {
    int64_t b = (int64_t)ew_itemsize((aclDataType)dtype);
    return b > 0 ? b : 1;
}

/* gert::Shape::GetDim: idx >= kMaxDimNum (a size_t that wrapped) -> kInvalidDimValue; past the rank -> 0. */
static int64_t dim_at(const int64_t *shape, int64_t ndim, int64_t idx) {
    if (idx < 0 || idx >= 25) return INT64_MIN;
    return idx < ndim ? shape[idx] : 0;
}

static int64_t ceil_div(int64_t x, int64_t y) { return y == 0 ? INT64_MIN : op_add_sat(x, y - 1) / y; }

/* The formats by the names ge::TypeUtils gives them (op_format_name keeps "format N" for the private ones: the
 * recorded messages of other operators say so). */
static const char *fname(aclFormat f, char buf[24]) {
    switch ((int)f) {
    case ACL_FORMAT_NC1HWC0: return "NC1HWC0";
    case ACL_FORMAT_FRACTAL_Z: return "FRACTAL_Z";
    case ACL_FORMAT_HWCN: return "HWCN";
    case ACL_FORMAT_NDHWC: return "NDHWC";
    case 31: return "DHWCN";
    case ACL_FORMAT_NDC1HWC0: return "NDC1HWC0";
    case ACL_FRACTAL_Z_3D: return "FRACTAL_Z_3D";
    case ACL_FORMAT_FRACTAL_NZ_C0_16: return "FRACTAL_NZ_C0_16";
    case ACL_FORMAT_FRACTAL_NZ_C0_32: return "FRACTAL_NZ_C0_32";
    case ACL_FORMAT_FRACTAL_NZ_C0_2: return "FRACTAL_NZ_C0_2";
    case ACL_FORMAT_FRACTAL_NZ_C0_4: return "FRACTAL_NZ_C0_4";
    default: return op_format_name(f, buf);
    }
}

static int in_list(aclDataType dt, const aclDataType *list, size_t n) { return ew_in_list(dt, list, n); }

/* OP_CHECK_DTYPE_NOT_SUPPORT_WITH_REASON */
static aclnnStatus dtype_reason(const char *api, const char *name, aclDataType dt, const aclDataType *list, size_t n) {
    if (in_list(dt, list, n)) return ACLNN_SUCCESS;
    char b[24], all[400];
    return op_ez_reason(api, 0, name, "dtype", op_dtype_name(dt, b), "The dtype of %s must be one of [%s]", name,
                        ew_dtype_list(list, n, all, sizeof all));
}

/* The vendor's lists (aclnn_npu_format_cast.cpp). */
static const aclDataType WEIGHT[] = {ACL_INT8, ACL_UINT8, ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_UINT32,
                                     ACL_FLOAT8_E4M3FN, ACL_FLOAT4_E2M1, ACL_HIFLOAT8, ACL_FLOAT4_E1M2};
#define N_WEIGHT (sizeof WEIGHT / sizeof WEIGHT[0])
static const aclDataType A950[] = {ACL_INT8, ACL_FLOAT, ACL_FLOAT16, ACL_BF16, ACL_INT32, ACL_FLOAT8_E4M3FN,
                                   ACL_FLOAT4_E2M1, ACL_HIFLOAT8, ACL_UINT8, ACL_FLOAT4_E1M2};
#define N_A950 (sizeof A950 / sizeof A950[0])

static int soc_supported(void) {
    pyaclnn_soc_family f = pyaclnn_stub_soc_family();
    return f == PYACLNN_SOC_950 || f == PYACLNN_SOC_A2;
}

/* ---- checks shared by both entry points ------------------------------------------------------------------ */

static aclnnStatus bad_additional(const char *api, int additional, const char *reason) {
    char a[24];
    return op_ez_reason(api, 0, "additionalDtype", "value", op_dtype_name((aclDataType)additional, a), "%s",
                        reason);
}

static aclnnStatus bad_rank(const char *api, int64_t nd, const char *reason) {
    char b[24];
    snprintf(b, sizeof b, "%lld", (long long)nd);
    return op_ez_reason(api, 0, "srcTensor", "shape dim", b, "%s", reason);
}

/* ValidateWeightQuantMatmulParams / ValidateNonQuantMatmulParams / ValidateQuantMatmulParams, after the 950
 * list and the empty-tensor check (Check95NdToNzCalculateSizeAndFormatInputs). */
static aclnnStatus check95_nd_to_nz_calc(const char *api, const pyaclnn_stub_tensor *src, int dst_format,
                                         int additional) {
    char t[200];
    aclnnStatus rc = dtype_reason(api, "srcTensor", src->dtype, A950, N_A950);
    if (rc != ACLNN_SUCCESS) return rc;
    for (int64_t i = 0; i < src->ndim; i++)
        if (src->shape[i] == 0)
            return op_ez_reason(api, 0, "srcTensor", "shape", tv_shape_text(src->shape, src->ndim, t, sizeof t),
                                "srcTensor must not be empty tensor, each dimension must not be 0");
    int64_t nd = src->ndim;
    if (additional != (int)src->dtype) {
        if (src->dtype == ACL_INT32 && additional != ACL_FLOAT16 && additional != ACL_BF16 && additional != ACL_INT8)
            return bad_additional(api, additional, "The value of additionalDtype must be float16/bfloat16/int8 "
                                  "when the dtype of srcTensor is int32");
        if (src->dtype == ACL_FLOAT && additional != ACL_FLOAT16 && additional != ACL_BF16 &&
            additional != ACL_FLOAT8_E4M3FN && additional != ACL_HIFLOAT8 && additional != ACL_UINT8)
            return bad_additional(api, additional, "additionalDtype must be float16, bfloat16, float8_e4m3fn, "
                                  "hifloat8 or uint8 when the dtype of srcTensor is float32");
        if (nd != 2 && nd != 3)
            return bad_rank(api, nd, "The srcTensor must be 2 or 3 when additionalDtype is not equal to "
                            "srcTensor's dtype");
        if (dst_format != ACL_FORMAT_FRACTAL_NZ) {
            char d[24];
            snprintf(d, sizeof d, "%d", dst_format);
            return op_ez_expected(api, "dstFormat", "format", d, "29(FORMAT_FRACTAL_NZ)");
        }
        return ACLNN_SUCCESS;
    }
    if (is_nonquant_dtype(additional, ACL_FORMAT_ND) && dst_format == ACL_FORMAT_FRACTAL_NZ) {
        if (dim_at(src->shape, nd, nd - 2) == 1)
            return op_ez_reason(api, 0, "srcTensor", "shape", tv_shape_text(src->shape, nd, t, sizeof t),
                                "The axis k of srcTensor cannot be equal to 1 when additionalDtype equals the dtype "
                                "of srcTensor");
        return nd < 2 || nd > 6 ? bad_rank(api, nd, "The shape dim of srcTensor must be between 2 and 6 when "
                                           "additionalDtype equals the dtype of srcTensor")
                                : ACLNN_SUCCESS;
    }
    if (additional != ACL_INT8 && additional != ACL_UINT8 && additional != ACL_FLOAT8_E4M3FN &&
        additional != ACL_HIFLOAT8 && additional != ACL_FLOAT4_E2M1 && additional != ACL_FLOAT4_E1M2)
        return bad_additional(api, additional, "additionalDtype must be int8/uint8/float8_e4m3fn/hifloat8/float4_e2m1/"
                              "float4_e1m2 when additionalDtype equals the dtype of srcTensor and additionalDtype is "
                              "not float16 or bfloat16");
    return nd < 2 || nd > 6 ? bad_rank(api, nd, "The ViewShape dim of srcTensor must be between 2 and 6 when "
                                       "additionalDtype equals the dtype of srcTensor and additionalDtype is int8")
                            : ACLNN_SUCCESS;
}

/* ValidNzShape: an NZ tensor's storage has 4..8 dims, none 0, and the C0 of its format. */
static aclnnStatus valid_nz_shape(const char *api, const pyaclnn_stub_tensor *src) {
    char t[200], b[24], e[24];
    int64_t nd = src->storage_ndim;
    if (nd < 4 || nd > 8) {
        snprintf(b, sizeof b, "%lld", (long long)nd);
        return op_ez_reason(api, 0, "srcTensor", "shape dim", b, "The StorageShape dim of srcTensor must be "
                            "between 4 and 8 for input tensor in Nz format");
    }
    for (int64_t i = 0; i < nd; i++)
        if (src->storage_shape[i] == 0)
            return op_ez_reason(api, 0, "srcTensor", "shape", tv_shape_text(src->storage_shape, nd, t, sizeof t),
                                "srcTensor cannot be empty, each axis of storageShape cannot be 0");
    aclFormat f = primary(src->format);
    int64_t c0 = src->storage_shape[nd - 1], want;
    if (f == ACL_FORMAT_FRACTAL_NZ)
        want = src->dtype == ACL_FLOAT4_E2M1 ? 64 : 32 / type_size(src->dtype);
    else if (f == ACL_FORMAT_FRACTAL_NZ_C0_2) want = 2;
    else if (f == ACL_FORMAT_FRACTAL_NZ_C0_4) want = 4;
    else if (f == ACL_FORMAT_FRACTAL_NZ_C0_16) want = 16;
    else if (f == ACL_FORMAT_FRACTAL_NZ_C0_32) want = 32;
    else
        return op_ez_expected(api, "srcTensor", "format", fname(f, b), "[FORMAT_FRACTAL_NZ, "
                              "FORMAT_FRACTAL_NZ_C0_2, FORMAT_FRACTAL_NZ_C0_4, FORMAT_FRACTAL_NZ_C0_16, "
                              "FORMAT_FRACTAL_NZ_C0_32]");
    if (c0 != want) {
        snprintf(b, sizeof b, "%lld", (long long)c0);
        snprintf(e, sizeof e, "%lld", (long long)want);
        return op_ez_expected(api, "c0", "value", b, e);
    }
    return ACLNN_SUCCESS;
}

/* ---- aclnnNpuFormatCastCalculateSizeAndFormat -------------------------------------------------------------- */

#define CALC_API "aclnnNpuFormatCastCalculateSizeAndFormat"

static aclnnStatus put_shape(int64_t **dst_shape, uint64_t *dst_size, const int64_t *dims, uint64_t n) {
    int64_t *v = malloc((n ? n : 1) * sizeof *v);   /* the caller frees it (the vendor: new[] / delete[]) */
    if (v == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, CALC_API, "Failed to allocate memory for the shape");
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    memcpy(v, dims, n * sizeof *v);
    *dst_shape = v;
    *dst_size = n;
    return ACLNN_SUCCESS;
}

/* FallbackAclop: A2 refuses an empty tensor (torch_npu then takes the aclop path). */
static aclnnStatus fallback_aclop(const pyaclnn_stub_tensor *src) {
    if (ew_soc_is_950()) return ACLNN_SUCCESS;
    for (int64_t i = 0; i < src->ndim; i++)
        if (src->shape[i] == 0) {
            pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, CALC_API, "aclnn empty tensor is not supported, fallback "
                                "aclop.");
            return ACLNN_ERR_RUNTIME_ERROR;
        }
    return ACLNN_SUCCESS;
}

static aclnnStatus calc_nd_to_nz(const pyaclnn_stub_tensor *src, int additional, int64_t **dst_shape,
                                 uint64_t *dst_size, int *actual) {
    int64_t c0 = 16;
    if (!ew_soc_is_950()) {
        aclnnStatus rc = fallback_aclop(src);
        if (rc != ACLNN_SUCCESS) return rc;
        c0 = 32 / type_size(additional);
        *actual = ACL_FORMAT_FRACTAL_NZ;
    } else if (additional == (int)src->dtype) {
        c0 = 32 / type_size(src->dtype);
        if (additional == ACL_FLOAT4_E2M1 || additional == ACL_FLOAT4_E1M2) c0 = 64;
        *actual = ACL_FORMAT_FRACTAL_NZ;
    } else {
        /* (the vendor leaves actualFormat unwritten for a 1-byte additionalDtype other than int8 / fp8_e4m3) */
        if (type_size(additional) == 2) *actual = ACL_FORMAT_FRACTAL_NZ_C0_16;
        if (additional == ACL_FLOAT8_E4M3FN || additional == ACL_INT8) {
            c0 = 32;
            *actual = ACL_FORMAT_FRACTAL_NZ_C0_32;
        }
    }
    int64_t nd = src->ndim, dims[PYACLNN_STUB_MAX_DIMS + 2];
    uint64_t n = (uint64_t)nd + 2;
    for (uint64_t i = 0; i < n; i++) {
        if (i == n - 4) {
            dims[i] = ceil_div(dim_at(src->shape, nd, nd - 1), c0);
            dims[i + 1] = ceil_div(dim_at(src->shape, nd, nd - 2), 16);
            dims[i + 2] = 16;
            dims[i + 3] = c0;
            break;
        }
        dims[i] = dim_at(src->shape, nd, (int64_t)i);
    }
    return put_shape(dst_shape, dst_size, dims, n);
}

/* GetC0ByAdditionalDtype */
static int64_t c0_of(const pyaclnn_stub_tensor *src, int additional) {
    return 32 / type_size(additional == (int)src->dtype ? (int)src->dtype : additional);
}

/* The public -> private shapes (CalcNCHWToNC1HWC0 ...): the source's dims by the order `ax` names them. */
static aclnnStatus calc_to_private(const pyaclnn_stub_tensor *src, int additional, aclFormat to, const int *ax,
                                   int rank, int64_t **dst_shape, uint64_t *dst_size, int *actual) {
    aclnnStatus rc = fallback_aclop(src);
    if (rc != ACLNN_SUCCESS) return rc;
    int64_t c0 = c0_of(src, additional), v[5] = {1, 1, 1, 1, 1};
    for (int k = 0; k < rank; k++) v[ax[k]] = dim_at(src->shape, src->ndim, k);
    int64_t c1 = ceil_div(v[AX_C], c0), n1 = ceil_div(v[AX_N], 16), dims[6];
    int64_t rows = op_mul_sat(op_mul_sat(op_mul_sat(v[AX_D], c1), v[AX_H]), v[AX_W]);
    uint64_t n;
    if (to == ACL_FORMAT_NC1HWC0) {
        int64_t d[] = {v[AX_N], c1, v[AX_H], v[AX_W], c0};
        memcpy(dims, d, sizeof d), n = 5;
    } else if (to == ACL_FORMAT_NDC1HWC0) {
        int64_t d[] = {v[AX_N], v[AX_D], c1, v[AX_H], v[AX_W], c0};
        memcpy(dims, d, sizeof d), n = 6;
    } else {   /* FRACTAL_Z, FRACTAL_Z_3D */
        int64_t d[] = {rows, n1, 16, c0};
        memcpy(dims, d, sizeof d), n = 4;
    }
    rc = put_shape(dst_shape, dst_size, dims, n);
    if (rc == ACLNN_SUCCESS) *actual = to;
    return rc;
}

/* The private -> public shapes (CalcToNCHW ...): the view shape, which must have `rank` dims. */
static aclnnStatus calc_to_public(const pyaclnn_stub_tensor *src, aclFormat to, int rank, int64_t **dst_shape,
                                  uint64_t *dst_size, int *actual) {
    aclnnStatus rc = fallback_aclop(src);
    if (rc != ACLNN_SUCCESS) return rc;
    if (to != ACL_FORMAT_ND && src->ndim != rank) {
        char b[24];
        pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, CALC_API, "The ViewShape dim of srcTensor must be %d when "
                            "converting to %s, fallback to aclop.", rank, fname(to, b));
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    int64_t dims[PYACLNN_STUB_MAX_DIMS];
    for (int64_t i = 0; i < src->ndim; i++) dims[i] = src->shape[i];
    /* CalcToNHWC writes {N, C, H, W} of an (N, H, W, C) view: the vendor's order, kept */
    if (to == ACL_FORMAT_NHWC) dims[1] = src->shape[3], dims[2] = src->shape[1], dims[3] = src->shape[2];
    rc = put_shape(dst_shape, dst_size, dims, (uint64_t)src->ndim);
    if (rc == ACLNN_SUCCESS) *actual = to;
    return rc;
}

static const int AX_NCHW[] = {AX_N, AX_C, AX_H, AX_W}, AX_NHWC[] = {AX_N, AX_H, AX_W, AX_C},
                 AX_HWCN[] = {AX_H, AX_W, AX_C, AX_N}, AX_NCDHW[] = {AX_N, AX_C, AX_D, AX_H, AX_W},
                 AX_NDHWC[] = {AX_N, AX_D, AX_H, AX_W, AX_C}, AX_DHWCN[] = {AX_D, AX_H, AX_W, AX_C, AX_N};

/* The canonical axes of a public format's dims (NULL: not a 4-d / 5-d layout). */
static const int *axes_of(aclFormat f, int *rank) {
    switch ((int)f) {
    case ACL_FORMAT_NCHW: *rank = 4; return AX_NCHW;
    case ACL_FORMAT_NHWC: *rank = 4; return AX_NHWC;
    case ACL_FORMAT_HWCN: *rank = 4; return AX_HWCN;
    case ACL_FORMAT_NCDHW: *rank = 5; return AX_NCDHW;
    case ACL_FORMAT_NDHWC: *rank = 5; return AX_NDHWC;
    case 31: *rank = 5; return AX_DHWCN;
    default: *rank = 0; return NULL;
    }
}

/* The calculation pairs after ND <-> NZ, in the vendor's order: {src, dst} -> public->private or the reverse. */
static const struct {
    aclFormat src, dst;
} CALC_PAIRS[] = {
    {ACL_FORMAT_NCDHW, ACL_FORMAT_NDC1HWC0}, {ACL_FORMAT_NDC1HWC0, ACL_FORMAT_NCDHW},
    {ACL_FORMAT_NCDHW, ACL_FRACTAL_Z_3D},    {ACL_FRACTAL_Z_3D, ACL_FORMAT_NCDHW},
    {ACL_FORMAT_NCHW, ACL_FORMAT_NC1HWC0},   {ACL_FORMAT_NC1HWC0, ACL_FORMAT_NCHW},
    {ACL_FORMAT_NHWC, ACL_FORMAT_NC1HWC0},   {ACL_FORMAT_NC1HWC0, ACL_FORMAT_NHWC},
    {ACL_FORMAT_NCHW, ACL_FORMAT_FRACTAL_Z}, {ACL_FORMAT_FRACTAL_Z, ACL_FORMAT_NCHW},
    {ACL_FORMAT_HWCN, ACL_FORMAT_FRACTAL_Z}, {ACL_FORMAT_FRACTAL_Z, ACL_FORMAT_HWCN},
    {FC_DHWCN, ACL_FRACTAL_Z_3D},            {ACL_FRACTAL_Z_3D, FC_DHWCN},
    {ACL_FORMAT_NDHWC, ACL_FORMAT_NDC1HWC0}, {ACL_FORMAT_NDC1HWC0, ACL_FORMAT_NDHWC},
};

ACLNN_API aclnnStatus aclnnNpuFormatCastCalculateSizeAndFormat(const aclTensor *srcTensor, const int dstFormat,
                                                               int additionalDtype, int64_t **dstShape,
                                                               uint64_t *dstShapeSize, int *actualFormat) {
    pyaclnn_stub_tensor src;
    char b[24];
    /* CheckCalculateSizeAndFormatInputs; any failure becomes 161002 ("Failed to check inputs") */
    if (!soc_supported()) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, CALC_API, "Only support Ascend950/ASCEND910_93/ASCEND910B");
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (srcTensor == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, CALC_API, "srcTensor is nullptr.");
        return ACLNN_ERR_PARAM_INVALID;
    }
    aclnnStatus rc = op_tensor_arg(CALC_API, "srcTensor", srcTensor, &src);
    if (rc != ACLNN_SUCCESS) return rc;
    if (dtype_reason(CALC_API, "srcTensor", src.dtype, WEIGHT, N_WEIGHT) != ACLNN_SUCCESS)
        return ACLNN_ERR_PARAM_INVALID;
    /* (the emulator) the output pointers: the vendor writes through them unchecked */
    if (dstShape == NULL || dstShapeSize == NULL || actualFormat == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, CALC_API, "%s is NULL",
                            dstShape == NULL ? "dstShape" : dstShapeSize == NULL ? "dstShapeSize" : "actualFormat");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclFormat sf = primary(src.format), df = (aclFormat)dstFormat;
    if (additionalDtype == -1) additionalDtype = (int)src.dtype;
    int regbase = ew_soc_is_950();
    if (df == ACL_FORMAT_FRACTAL_NZ && (sf == ACL_FORMAT_ND || sf == ACL_FORMAT_NCL ||
                                        (additionalDtype == (int)src.dtype && to_nz_source(sf)))) {
        if (regbase && check95_nd_to_nz_calc(CALC_API, &src, dstFormat, additionalDtype) != ACLNN_SUCCESS)
            return ACLNN_ERR_PARAM_INVALID;
        return calc_nd_to_nz(&src, additionalDtype, dstShape, dstShapeSize, actualFormat);
    }
    if (is_nz(sf) && df == ACL_FORMAT_ND) {
        if (!regbase && sf != ACL_FORMAT_FRACTAL_NZ)
            return op_ez_expected(CALC_API, "srcTensor", "format", fname(sf, b), "FORMAT_FRACTAL_NZ");
        if (regbase && valid_nz_shape(CALC_API, &src) != ACLNN_SUCCESS) return ACLNN_ERR_PARAM_INVALID;
        return calc_to_public(&src, ACL_FORMAT_ND, 0, dstShape, dstShapeSize, actualFormat);
    }
    for (size_t k = 0; k < sizeof CALC_PAIRS / sizeof CALC_PAIRS[0]; k++) {
        if (CALC_PAIRS[k].src != sf || CALC_PAIRS[k].dst != df) continue;
        int rank;
        const int *ax = axes_of(sf, &rank);
        if (ax != NULL)
            return calc_to_private(&src, additionalDtype, df, ax, rank, dstShape, dstShapeSize, actualFormat);
        axes_of(df, &rank);
        return calc_to_public(&src, df, rank, dstShape, dstShapeSize, actualFormat);
    }
    pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, CALC_API,
                        "aclnnNpuFormatCastCalculateSizeAndFormat unsupported format transformation");
    return ACLNN_ERR_RUNTIME_ERROR;
}

/* ---- aclnnNpuFormatCastGetWorkspaceSize: steps ------------------------------------------------------------ */

static aclnnStatus contiguous(const char *api, const char *name, const pyaclnn_stub_tensor *t) {
    if (pyaclnn_stub_is_contiguous(t)) return ACLNN_SUCCESS;
    return op_ez_reason(api, 0, name, "shape", "non-contiguous", "%s must be contiguous.", name);
}

/* CheckGetWorkSpaceSizeInputs: SoC, contiguity, the common dtype list (reports the first failure). */
static aclnnStatus common_checks(op_call *c, const pyaclnn_stub_tensor *src, const pyaclnn_stub_tensor *dst) {
    if (!soc_supported()) {
        pyaclnn_stub_report(ACLNN_ERR_RUNTIME_ERROR, c->api, "Only support Ascend950/ASCEND910_93/ASCEND910B");
        return ACLNN_ERR_RUNTIME_ERROR;
    }
    aclnnStatus rc = contiguous(c->api, "srcTensor", src);
    if (rc == ACLNN_SUCCESS) rc = contiguous(c->api, "dstTensor", dst);
    if (rc == ACLNN_SUCCESS) rc = dtype_reason(c->api, "srcTensor", src->dtype, WEIGHT, N_WEIGHT);
    if (rc == ACLNN_SUCCESS) rc = dtype_reason(c->api, "dstTensor", dst->dtype, WEIGHT, N_WEIGHT);
    return rc;
}

static int nd_to_nz_path(const pyaclnn_stub_tensor *src, const pyaclnn_stub_tensor *dst) {
    aclFormat sf = primary(src->format), df = primary(dst->format);
    return df == ACL_FORMAT_FRACTAL_NZ &&
           (sf == ACL_FORMAT_ND || sf == ACL_FORMAT_NCL || (src->dtype == dst->dtype && to_nz_source(sf)));
}

static int nz_to_nd_path(aclFormat sf, aclFormat df) {   /* IsNz2Nd: a base destination counts as ND */
    return is_nz(sf) && (df == ACL_FORMAT_ND || df == ACL_FORMAT_NCL || df == ACL_FORMAT_NCHW ||
                         df == ACL_FORMAT_NCDHW);
}

/* CheckFormatValid + the rank checks of Check95NdToNzGetWorkSpaceSizeInputs (after its dtype lists). */
static aclnnStatus check95_nd_to_nz(const char *api, const pyaclnn_stub_tensor *src, const pyaclnn_stub_tensor *dst) {
    aclFormat sf = primary(src->format), df = primary(dst->format);
    char a[24], b2[24], both[64];
    snprintf(both, sizeof both, "%s, %s", fname(sf, a), fname(df, b2));
    if (is_quant_dtype(src->dtype, dst->dtype)) {
        if (!(to_nz_source(sf) && df == ACL_FORMAT_FRACTAL_NZ))
            return op_ez_reason(api, 1, "srcTensor, dstTensor", "formats", both, "The format of srcTensor must be "
                                "ND/NCL/NCHW/NCDHW and the format of dstTensor must be FRACTAL_NZ when the dtype of "
                                "srcTensor equals int8/uint8/float8_e4m3fn/hifloat8");
    } else if (is_nonquant_dtype(src->dtype, df)) {
        if (!((sf == ACL_FORMAT_ND || sf == ACL_FORMAT_NCL) && df == ACL_FORMAT_FRACTAL_NZ))
            return op_ez_reason(api, 1, "srcTensor, dstTensor", "formats", both, "The format of srcTensor must be "
                                "ND/NCL and the format of dstTensor must be FRACTAL_NZ when the dtype of srcTensor "
                                "equals float16 or bfloat16");
    } else if (!((src->dtype == ACL_INT32 || src->dtype == ACL_FLOAT || src->dtype == ACL_FLOAT8_E4M3FN ||
                  src->dtype == ACL_HIFLOAT8 || src->dtype == ACL_UINT8) && sf == ACL_FORMAT_ND &&
                 (df == ACL_FORMAT_FRACTAL_NZ_C0_16 || df == ACL_FORMAT_FRACTAL_NZ_C0_32 ||
                  df == ACL_FORMAT_FRACTAL_NZ))) {
        return op_ez_reason(api, 1, "srcTensor, dstTensor", "formats", both, "The format of srcTensor must be ND "
                            "and the format of dstTensor must be FRACTAL_NZ_C0_16/FRACTAL_NZ_C0_32/FRACTAL_NZ when "
                            "the dtype of srcTensor equals int32/float/float8_e4m3fn/hifloat8/uint8");
    }
    int64_t sd = src->ndim, dd = dst->storage_ndim;
    char dims[64];
    snprintf(dims, sizeof dims, "%lld, %lld", (long long)sd, (long long)dd);
    if (is_quant_dtype(src->dtype, dst->dtype) || is_nonquant_dtype(src->dtype, df)) {
        if (!(sd >= 2 && sd <= 6 && dd >= 4 && dd <= 8))
            return op_ez_reason(api, 1, "srcTensor, dstTensor", "shape dims", dims, "The ViewShape dim of "
                                "srcTensor must be between 2 and 6 and the StorageShape dim of dstTensor must be "
                                "between 4 and 8 when the dtype of srcTensor equals the dtype of dstTensor");
    } else if (!((sd == 2 || sd == 3) && (dd == 4 || dd == 5))) {
        return op_ez_reason(api, 1, "srcTensor, dstTensor", "shape dims", dims, "The ViewShape dim of srcTensor "
                            "must be 2 or 3 and the StorageShape dim of dstTensor must be 4 or 5 when srcDtype is not "
                            "equal to dstDtype");
    }
    return ACLNN_SUCCESS;
}

/* INPUT_DTYPE_FORMAT_NZ_TO_ND_SUPPORT_LIST */
static int nz_to_nd_pair_ok(aclDataType dt, aclFormat f) {
    switch ((int)dt) {
    case ACL_FLOAT4_E2M1: return f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_FRACTAL_NZ_C0_32;
    case ACL_INT8:
    case ACL_UINT8:
        return f == ACL_FORMAT_FRACTAL_NZ || f == ACL_FORMAT_FRACTAL_NZ_C0_16 || f == ACL_FORMAT_FRACTAL_NZ_C0_32;
    case ACL_FLOAT8_E4M3FN:
    case ACL_FLOAT16:
    case ACL_BF16: return f == ACL_FORMAT_FRACTAL_NZ;
    case ACL_INT32:
    case ACL_FLOAT: return is_nz(f);
    default: return 0;
    }
}

/* ValidNz2NdShape + ValidDtypeFormatForNz2Nd (after ValidNzShape). */
static aclnnStatus check95_nz_to_nd(const char *api, const pyaclnn_stub_tensor *src, const pyaclnn_stub_tensor *dst) {
    char t1[200], t2[200], b[400];
    int64_t sn = src->storage_ndim, dn = dst->ndim;
    const int64_t *ss = src->storage_shape, *ds = dst->shape;
    if (dn + 2 != sn) {
        snprintf(b, sizeof b, "%lld, %lld", (long long)sn, (long long)dn);
        return op_ez_reason(api, 1, "srcTensor, dstTensor", "shape dims", b,
                            "Nz-dimensions must be equal to ND-dimensions plus 2");
    }
    if (dn < 2) {
        snprintf(b, sizeof b, "%lld", (long long)dn);
        return op_ez_reason(api, 0, "dstTensor", "shape dim", b,
                            "The ViewShape dim of ND must be larger than or equal to 2");
    }
    for (int64_t i = 0; i < dn - 2; i++)
        if (ss[i] != ds[i]) {
            snprintf(b, sizeof b, "%s, %s", tv_shape_text(ss, sn, t1, sizeof t1), tv_shape_text(ds, dn, t2, sizeof t2));
            return op_ez_reason(api, 1, "srcTensor, dstTensor", "shapes", b,
                                "ND dimensions except last 2 must match Nz dimensions except last 4");
        }
    int64_t n = ds[dn - 2], cc = ds[dn - 1], c1 = ss[sn - 4], n1 = ss[sn - 3], n0 = ss[sn - 2], c0 = ss[sn - 1];
    if (!(n1 == ceil_div(n, n0) && c1 == ceil_div(cc, c0))) {
        snprintf(b, sizeof b, "(n, c) = (%lld, %lld), (c1, n1, n0, c0) = (%lld, %lld, %lld, %lld)", (long long)n,
                 (long long)cc, (long long)c1, (long long)n1, (long long)n0, (long long)c0);
        return op_ez_reason(api, 1, "dstTensor, srcTensor", "shapes", b,
                            "n1 must be equal to ceil(n/n0) and c1 must be equal to ceil(c/c0) when converting Nz to "
                            "ND");
    }
    if (!nz_to_nd_pair_ok(src->dtype, primary(src->format))) {
        char f[24], d[24];
        return op_invalidf(api, "Do not support converting [%s] to ND when srcDtype is [%s].",
                           fname(primary(src->format), f), op_dtype_name(src->dtype, d));
    }
    return ACLNN_SUCCESS;
}

/* fc_checks srcTensor dstTensor LIST: CheckGetWorkSpaceSizeInputs, then 950: the ND->NZ / NZ->ND checks in its
 * place; A2: both dtypes in LIST (CheckDtypeValid, returned at once); then the kept result. On 950 the replaced
 * result is not computed: it would only have been logged. */
aclnnStatus opc_fc_checks(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *src = op_tensor(c, s, 0), *dst = op_tensor(c, s, 1);
    size_t n;
    const aclDataType *list = op_list(s->list, &n);
    aclnnStatus rc;
    if (ew_soc_is_950() && nd_to_nz_path(src, dst)) {
        rc = dtype_reason(c->api, "srcTensor", src->dtype, list, n);
        if (rc == ACLNN_SUCCESS) rc = dtype_reason(c->api, "dstTensor", dst->dtype, list, n);
        if (rc == ACLNN_SUCCESS) rc = check95_nd_to_nz(c->api, src, dst);
    } else if (ew_soc_is_950() && nz_to_nd_path(primary(src->format), primary(dst->format))) {
        rc = dtype_reason(c->api, "srcTensor", src->dtype, list, n);
        if (rc == ACLNN_SUCCESS) rc = dtype_reason(c->api, "dstTensor", dst->dtype, list, n);
        if (rc == ACLNN_SUCCESS) rc = valid_nz_shape(c->api, src);
        if (rc == ACLNN_SUCCESS) rc = check95_nz_to_nd(c->api, src, dst);
    } else {
        rc = common_checks(c, src, dst);
        if (!ew_soc_is_950()) {
            aclnnStatus dt = ew_check_dtype_in(c->api, "srcTensor", src->dtype, list, n);
            if (dt == ACLNN_SUCCESS) dt = ew_check_dtype_in(c->api, "dstTensor", dst->dtype, list, n);
            if (dt != ACLNN_SUCCESS) return ACLNN_ERR_PARAM_INVALID;
        }
    }
    return rc == ACLNN_SUCCESS ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID;
}

/* kTransdataForwardFormatPairsRegBase / kTransdataForwardFormatPairs910B */
static int forward_pair(aclFormat s, aclFormat d, int regbase) {
    if (regbase)
        return (s == ACL_FORMAT_ND || s == ACL_FORMAT_NCL) &&
               (d == ACL_FORMAT_FRACTAL_NZ || d == ACL_FORMAT_FRACTAL_NZ_C0_16 || d == ACL_FORMAT_FRACTAL_NZ_C0_32);
    if (d == ACL_FORMAT_FRACTAL_NZ) return to_nz_source(s);
    if (d == ACL_FORMAT_NDC1HWC0) return s == ACL_FORMAT_NCDHW || s == ACL_FORMAT_NDHWC;
    if (d == ACL_FRACTAL_Z_3D) return s == ACL_FORMAT_NCDHW || s == FC_DHWCN;
    if (d == ACL_FORMAT_NC1HWC0) return s == ACL_FORMAT_NCHW || s == ACL_FORMAT_NHWC;
    if (d == ACL_FORMAT_FRACTAL_Z) return s == ACL_FORMAT_NCHW || s == ACL_FORMAT_HWCN;
    return 0;
}

/* TransData's format rank (kFormatRank; -1: any) and whether it knows the format at all (kFormatIndex). */
static int trans_rank(aclFormat f, int *known) {
    *known = 1;
    switch ((int)f) {
    case ACL_FORMAT_NCHW: case ACL_FORMAT_NHWC: case ACL_FORMAT_HWCN: case ACL_FORMAT_FRACTAL_Z: return 4;
    case ACL_FORMAT_NC1HWC0: case ACL_FORMAT_NCDHW: case ACL_FORMAT_NDHWC: case 31: return 5;
    case ACL_FORMAT_NDC1HWC0: return 6;
    case ACL_FRACTAL_Z_3D: return 4;
    case ACL_FORMAT_NCL: return 3;
    case ACL_FORMAT_ND: case ACL_FORMAT_FRACTAL_NZ: case ACL_FORMAT_FRACTAL_NZ_C0_16: case ACL_FORMAT_FRACTAL_NZ_C0_32:
    case ACL_FORMAT_FRACTAL_NZ_C0_2: case ACL_FORMAT_FRACTAL_NZ_C0_4: return -1;
    default: *known = 0; return -1;
    }
}

/* CheckTransDataSupport (after the two formats are known and the shapes match them): regbase ND / NCL -> the NZ
 * formats and back to ND; A2 kSupportMap (14 rows: NCL and the NZ_C0 formats are past it). */
static int trans_supported(aclFormat s, aclFormat d, int regbase) {
    if (regbase) return forward_pair(s, d, 1) || (d == ACL_FORMAT_ND && is_nz(s));
    if (s == ACL_FORMAT_NCL || d == ACL_FORMAT_NCL || s >= ACL_FORMAT_FRACTAL_NZ_C0_16 ||
        d >= ACL_FORMAT_FRACTAL_NZ_C0_16)
        return 0;
    if (s == ACL_FORMAT_ND || s == ACL_FORMAT_FRACTAL_NZ) return d == (s == ACL_FORMAT_ND ? ACL_FORMAT_FRACTAL_NZ
                                                                                      : ACL_FORMAT_ND);
    if (d == ACL_FORMAT_FRACTAL_NZ) return 0;
    return forward_pair(s, d, 0) || forward_pair(d, s, 0) || (s == ACL_FRACTAL_Z_3D && d == ACL_FORMAT_NDHWC);
}

static aclnnStatus trans_fail(op_call *c, aclFormat s, aclFormat d) {
    char a[24], b[24];
    pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api, "TransData not support: %s -> %s", fname(s, a), fname(d, b));
    return ACLNN_ERR_INNER_NULLPTR;
}

static aclnnStatus rank_fail(op_call *c, aclFormat f, const int64_t *shape, int64_t nd) {
    char a[24], t[200];
    pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, c->api, "Input tensor format not match it's shape, format is: %s, "
                        "shape is: %s.", fname(f, a), tv_shape_text(shape, nd, t, sizeof t));
    return ACLNN_ERR_INNER_NULLPTR;
}

/* (emulator) the private tensor's storage is the layout of the public one, with its own C0 (and N0). */
static aclnnStatus plan_layout(op_call *c, fc_plan *p, const pyaclnn_stub_tensor *pub, aclFormat pub_format,
                               const pyaclnn_stub_tensor *prv, aclFormat prv_format, const char *prv_name) {
    int64_t sn = prv->storage_ndim, want[PYACLNN_STUB_MAX_DIMS + 2], nw = 0;
    const int64_t *ss = prv->storage_shape;
    p->c0 = sn >= 1 ? ss[sn - 1] : 0;
    p->n0 = sn >= 2 ? ss[sn - 2] : 0;
    if (is_nz(prv_format)) {
        p->kind = FC_NZ;
        p->n = pub->ndim >= 2 ? pub->shape[pub->ndim - 2] : 1;
        p->m = pub->ndim >= 1 ? pub->shape[pub->ndim - 1] : 1;
        for (int64_t i = 0; i + 2 < pub->ndim; i++) want[nw++] = pub->shape[i];
        p->c1 = p->c0 > 0 ? ceil_div(p->m, p->c0) : 0;
        p->n1 = p->n0 > 0 ? ceil_div(p->n, p->n0) : 0;
        want[nw++] = p->c1, want[nw++] = p->n1, want[nw++] = p->n0, want[nw++] = p->c0;
    } else {
        int rank;
        const int *ax = axes_of(pub_format, &rank);
        p->kind = prv_format == ACL_FORMAT_NC1HWC0 || prv_format == ACL_FORMAT_NDC1HWC0 ? FC_C1 : FC_FZ;
        for (int k = 0; k < 5; k++) p->dim[k] = 1;
        for (int k = 0; ax != NULL && k < rank && k < pub->ndim; k++) p->axis[k] = ax[k], p->dim[ax[k]] = pub->shape[k];
        p->c1 = p->c0 > 0 ? ceil_div(p->dim[AX_C], p->c0) : 0;
        p->n1 = p->n0 > 0 ? ceil_div(p->dim[AX_N], p->n0) : 0;
        const int64_t *d = p->dim;
        if (prv_format == ACL_FORMAT_NC1HWC0) {
            int64_t w[] = {d[AX_N], p->c1, d[AX_H], d[AX_W], p->c0};
            memcpy(want, w, sizeof w), nw = 5;
        } else if (prv_format == ACL_FORMAT_NDC1HWC0) {
            int64_t w[] = {d[AX_N], d[AX_D], p->c1, d[AX_H], d[AX_W], p->c0};
            memcpy(want, w, sizeof w), nw = 6;
        } else {
            int64_t w[] = {op_mul_sat(op_mul_sat(op_mul_sat(d[AX_D], p->c1), d[AX_H]), d[AX_W]), p->n1, p->n0, p->c0};
            memcpy(want, w, sizeof w), nw = 4;
        }
    }
    int same = p->c0 > 0 && p->n0 > 0 && nw == sn;
    for (int64_t i = 0; same && i < nw; i++) same = want[i] == ss[i];
    if (!same) {
        char a[24], t1[200], t2[200], t3[200];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "%s storage shape %s is not the %s layout of shape %s "
                            "(expected %s for its C0 %lld; the emulator moves data between these layouts only)",
                            prv_name, tv_shape_text(ss, sn, t1, sizeof t1), fname(prv_format, a),
                            tv_shape_text(pub->shape, pub->ndim, t2, sizeof t2), tv_shape_text(want, nw, t3, sizeof t3),
                            (long long)p->c0);
        return ACLNN_ERR_PARAM_INVALID;
    }
    p->storage_numel = 1;
    for (int64_t i = 0; i < sn; i++) p->storage_numel = op_mul_sat(p->storage_numel, ss[i]);
    return ACLNN_SUCCESS;
}

/* fc_plan srcTensor dstTensor: the vendor's format pairs per SoC, TransData's checks, the layout (see the top). */
aclnnStatus opc_fc_plan(op_call *c, const op_step *s) {
    const pyaclnn_stub_tensor *src = op_tensor(c, s, 0), *dst = op_tensor(c, s, 1);
    aclFormat sf = primary(src->format), df = primary(dst->format), ts = sf, td = df;
    int regbase = ew_soc_is_950(), forward;
    char a[24], b[24];
    if (regbase) {
        int quant = is_quant_dtype(src->dtype, dst->dtype) && df == ACL_FORMAT_FRACTAL_NZ;
        if (quant || sf == ACL_FORMAT_NCL) ts = ACL_FORMAT_ND;
        forward = quant || forward_pair(sf, df, 1);
        if (!forward && nz_to_nd_path(sf, df)) td = ACL_FORMAT_ND;
    } else if (forward_pair(sf, df, 0)) {
        forward = 1;
        if (df == ACL_FORMAT_FRACTAL_NZ) ts = ACL_FORMAT_ND;
    } else if (forward_pair(df, sf, 0)) {
        forward = 0;
        if (sf == ACL_FORMAT_FRACTAL_NZ) td = ACL_FORMAT_ND;
    } else {
        /* the vendor logs this and returns `false` (0: success) without an executor */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "Unsupported format transformation from [%s] to [%s]",
                            fname(sf, a), fname(df, b));
        c->nothing = 1;
        c->done = 1;
        return ACLNN_SUCCESS;
    }
    const pyaclnn_stub_tensor *pub = forward ? src : dst, *prv = forward ? dst : src;
    fc_plan *p = op_params(c, sizeof *p);
    p->to_private = forward;
    p->bits = elem_bits(src->dtype);
    if (src->dtype != dst->dtype) {   /* TransData keeps the dtype; ViewCopy does not convert */
        char x[24], y[24];
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, c->api, "dstTensor dtype %s differs from srcTensor dtype %s "
                            "(the emulator's TransData moves data, it does not convert it)",
                            op_dtype_name(dst->dtype, x), op_dtype_name(src->dtype, y));
        return ACLNN_ERR_PARAM_INVALID;
    }
    if (ts == td) {   /* TransData returns its input; ViewCopy copies it */
        p->kind = FC_COPY;
        return op_expected_size(c->api, "dstTensor", dst, src->shape, src->ndim);
    }
    int known_s, known_d, rs = trans_rank(ts, &known_s), rd;
    trans_rank(td, &known_d);
    if (!known_s || !known_d) return trans_fail(c, ts, td);
    /* the source's storage shape must match its format (a public source's is its view shape) */
    const int64_t *shape = forward ? src->shape : src->storage_shape;
    int64_t nd = forward ? src->ndim : src->storage_ndim;
    if (rs != -1 && rs != nd) return rank_fail(c, ts, shape, nd);
    aclFormat pub_format = forward ? sf : df;
    rd = trans_rank(pub_format == ACL_FORMAT_NCL ? ACL_FORMAT_ND : pub_format, &known_d);
    if (rd != -1 && rd != pub->ndim) return rank_fail(c, pub_format, pub->shape, pub->ndim);
    if (!trans_supported(ts, td, regbase)) return trans_fail(c, ts, td);
    return plan_layout(c, p, pub, pub_format, prv, forward ? df : sf, forward ? "dstTensor" : "srcTensor");
}

/* ---- the kernel ------------------------------------------------------------------------------------------- */

/* Element si of s to element di of d, `bits` wide (4: nibbles, element 2k in the low half of byte k). */
static void move(unsigned char *d, int64_t di, const unsigned char *s, int64_t si, int bits) {
    if (bits == 4) {
        unsigned v = (s[si >> 1] >> ((si & 1) * 4)) & 0xFu;
        unsigned char *q = &d[di >> 1];
        *q = (unsigned char)((*q & (0xF0u >> ((di & 1) * 4))) | (v << ((di & 1) * 4)));
    } else {
        memcpy(d + di * (bits / 8), s + si * (bits / 8), (size_t)(bits / 8));
    }
}

/* Where public element `lin` (row-major over the public shape) lives in the private storage. */
static int64_t storage_index(const fc_plan *p, const pyaclnn_stub_tensor *pub, int64_t lin) {
    if (p->kind == FC_NZ) {
        int64_t j = lin % p->m, i = (lin / p->m) % p->n, bt = lin / (p->m * p->n);
        return nz_layout_index(bt, i, j, p->n, p->m, p->n0, p->c0);
    }
    int64_t v[5] = {0, 0, 0, 0, 0};
    for (int64_t k = pub->ndim - 1; k >= 0; k--) {
        v[p->axis[k]] = lin % pub->shape[k];
        lin /= pub->shape[k];
    }
    const int64_t *d = p->dim;
    int64_t c1 = v[AX_C] / p->c0, cr = v[AX_C] % p->c0;
    if (p->kind == FC_C1)
        return ((((v[AX_N] * d[AX_D] + v[AX_D]) * p->c1 + c1) * d[AX_H] + v[AX_H]) * d[AX_W] + v[AX_W]) * p->c0 + cr;
    return ((((v[AX_D] * p->c1 + c1) * d[AX_H] + v[AX_H]) * d[AX_W] + v[AX_W]) * p->n1 * p->n0 + v[AX_N]) * p->c0 + cr;
}

static int in_memory(const pyaclnn_stub_launch *l, const pyaclnn_stub_tensor *t, const char *what, int bits) {
    if (pyaclnn_stub_numel(t) == 0 || op_view_in_device_memory(t, bits)) return 1;
    pyaclnn_stub_task_fail(ACL_ERROR_RT_AICORE_EXCEPTION, "%s: %s (data %p, offset %lld) is not in device memory",
                           l->op_name, what, t->data, (long long)t->offset);
    return 0;
}

/* A 1-d contiguous description of n elements from t's data + offset. */
static pyaclnn_stub_tensor flat(const pyaclnn_stub_tensor *t, int64_t n) {
    pyaclnn_stub_tensor f = *t;
    f.ndim = 1;
    f.shape[0] = n;
    f.strides[0] = 1;
    return f;
}

void npu_format_cast_kernel(const pyaclnn_stub_launch *launch) {
    const fc_plan *p = launch->params;
    const pyaclnn_stub_tensor *src = &launch->inputs[0], *dst = &launch->outputs[0];
    const pyaclnn_stub_tensor *pub = p->to_private ? src : dst, *prv = p->to_private ? dst : src;
    int64_t n = pyaclnn_stub_numel(pub), nstore = p->kind == FC_COPY ? 0 : p->storage_numel;
    pyaclnn_stub_tensor store = flat(prv, nstore), pub_in = flat(src, n);
    if (!in_memory(launch, p->kind == FC_COPY ? src : p->to_private ? &pub_in : &store, "srcTensor", p->bits) ||
        !in_memory(launch, p->kind == FC_COPY || !p->to_private ? dst : &store, "dstTensor", p->bits))
        return;
    int64_t nimg = p->kind == FC_COPY || !p->to_private ? n : nstore;
    unsigned char *img = calloc((size_t)(p->bits == 4 ? nimg / 2 + 1 : nimg * (p->bits / 8)) + 1, 1);
    if (img == NULL) {
        tv_fail_oom(launch);
        return;
    }
    if (p->kind == FC_COPY) {
        for (int64_t i = 0; i < n; i++) move(img, i, src->data, tv_offset(src, i), p->bits);
    } else if (p->to_private) {   /* TransData reads the public source as its storage shape: contiguous */
        for (int64_t i = 0; i < n; i++) move(img, storage_index(p, pub, i), src->data, src->offset + i, p->bits);
        for (int64_t k = 0; k < nstore; k++) move(dst->data, dst->offset + k, img, k, p->bits);   /* with padding */
        free(img);
        return;
    } else {
        for (int64_t i = 0; i < n; i++) move(img, i, src->data, src->offset + storage_index(p, pub, i), p->bits);
    }
    for (int64_t i = 0; i < n; i++) move(dst->data, tv_offset(dst, i), img, i, p->bits);   /* ViewCopy */
    free(img);
}
