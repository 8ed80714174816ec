/*
 * The objects of the aclop path (acl_base_mdl.h, acl_base_rt.h, acl_op.h): tensor descriptions, data
 * buffers and operator attributes. torch_npu builds them for every aclop launch (on Atlas A2 it still sends
 * Identity that way when op-plugin's tests cast a tensor to a private format); libacl_op_compiler reads them
 * through the pyaclnn_stub_aclop_* snapshots below and runs the operators the emulator has
 * (src/compat/acl_op_compiler.c).
 *
 * Every handle is checked against a registry before use, and one lock covers the registry and the objects,
 * so that a destroy racing a read on another thread cannot free what the read is looking at. Descriptions
 * hold a shape and format (what the memory holds: aclSetTensorShape / aclSetTensorFormat, which torch_npu
 * sets to the storage) and an origin shape and format (aclCreateTensorDesc's, or aclSetTensorOrigin*).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../compat.h"
#include "../../common/handle_registry.h"

enum { KIND_DESC = 1, KIND_BUFFER = 2, KIND_ATTR = 3 };

struct aclTensorDesc {
    aclDataType dtype;
    aclFormat format, origin_format;
    int ndim, origin_ndim;
    int64_t dims[PYACLNN_STUB_MAX_DIMS], origin_dims[PYACLNN_STUB_MAX_DIMS];
    aclMemType placement;
    char *name;
};

struct aclDataBuffer {
    void *data;
    size_t size;
};

typedef struct {
    char *name;
    pyaclnn_stub_aclop_attr_value value;
} attr_entry;

struct aclopAttr {
    attr_entry *entries;
    int n, cap;
};

static stub_registry handles = STUB_REGISTRY_INIT;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;   /* taken before handles.lock */

static void lock_all(void) { pthread_mutex_lock(&mu); }
static void unlock_all(void) { pthread_mutex_unlock(&mu); }
__attribute__((constructor)) static void register_fork_handlers(void) {
    pthread_atfork(lock_all, unlock_all, unlock_all);
}

static const char *kind_name(int kind) {
    return kind == KIND_DESC ? "aclTensorDesc" : kind == KIND_BUFFER ? "aclDataBuffer" : "aclopAttr";
}

/* Under mu: 1 if p is a live object of `kind`; else reports why (when func is given) and returns 0. */
static int live(const void *p, int kind, const char *func, const char *param) {
    if (p == NULL) {
        if (func) pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "%s is NULL", param);
        return 0;
    }
    int actual = stub_registry_kind(&handles, p);
    if (actual == kind) return 1;
    if (func && actual == 0)
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "%s (%p) is not a live %s: it was already destroyed, "
                            "was never created by this library, or is some other pointer", param, p, kind_name(kind));
    else if (func)
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "%s (%p) is an %s, not an %s", param, p,
                            kind_name(actual), kind_name(kind));
    return 0;
}

/* A shape argument: 0..PYACLNN_STUB_MAX_DIMS dims, each >= 0 or -1 (unknown), or the single -2 (unknown
 * rank). Returns 1, or reports and returns 0. */
static int shape_ok(const char *func, int ndim, const int64_t *dims) {
    if (ndim < 0 || ndim > PYACLNN_STUB_MAX_DIMS) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "numDims %d is not in [0, %d]", ndim, PYACLNN_STUB_MAX_DIMS);
        return 0;
    }
    if (ndim > 0 && dims == NULL) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "dims is NULL with numDims %d", ndim);
        return 0;
    }
    for (int i = 0; i < ndim; i++)
        if (dims[i] < -1 && !(dims[i] == -2 && ndim == 1)) {
            pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "dims[%d] = %lld: a dim is >= 0, -1 (unknown) or the "
                                "single -2 (unknown rank)", i, (long long)dims[i]);
            return 0;
        }
    return 1;
}

/* ---- tensor descriptions ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims,
                                                       aclFormat format) {
    static const char func[] = "aclCreateTensorDesc";
    if (!shape_ok(func, numDims, dims)) return NULL;
    aclTensorDesc *d = calloc(1, sizeof *d);
    if (d == NULL) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        return NULL;
    }
    d->dtype = dataType;
    d->format = d->origin_format = format;
    d->ndim = d->origin_ndim = numDims;
    if (numDims > 0) {
        memcpy(d->dims, dims, (size_t)numDims * sizeof *dims);
        memcpy(d->origin_dims, dims, (size_t)numDims * sizeof *dims);
    }
    d->placement = ACL_MEMTYPE_DEVICE;
    pthread_mutex_lock(&mu);
    int rc = stub_registry_add(&handles, d, KIND_DESC);
    pthread_mutex_unlock(&mu);
    if (rc != 0) {
        free(d);
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        return NULL;
    }
    return d;
}

ACL_FUNC_VISIBILITY void aclDestroyTensorDesc(const aclTensorDesc *desc) {
    if (desc == NULL) return;                        /* as CANN: nothing to do */
    pthread_mutex_lock(&mu);
    int ok = live(desc, KIND_DESC, "aclDestroyTensorDesc", "desc") && stub_registry_remove(&handles, desc, KIND_DESC);
    pthread_mutex_unlock(&mu);
    if (ok) {
        free(desc->name);
        free((void *)desc);
    }
}

ACL_FUNC_VISIBILITY aclDataType aclGetTensorDescType(const aclTensorDesc *desc) {
    pthread_mutex_lock(&mu);
    aclDataType t = live(desc, KIND_DESC, "aclGetTensorDescType", "desc") ? desc->dtype : ACL_DT_UNDEFINED;
    pthread_mutex_unlock(&mu);
    return t;
}

ACL_FUNC_VISIBILITY aclFormat aclGetTensorDescFormat(const aclTensorDesc *desc) {
    pthread_mutex_lock(&mu);
    aclFormat f = live(desc, KIND_DESC, "aclGetTensorDescFormat", "desc") ? desc->format : ACL_FORMAT_UNDEFINED;
    pthread_mutex_unlock(&mu);
    return f;
}

ACL_FUNC_VISIBILITY size_t aclGetTensorDescNumDims(const aclTensorDesc *desc) {
    pthread_mutex_lock(&mu);
    size_t n = 0;
    if (live(desc, KIND_DESC, "aclGetTensorDescNumDims", "desc"))
        n = desc->ndim == 1 && desc->dims[0] == -2 ? (size_t)ACL_UNKNOWN_RANK : (size_t)desc->ndim;
    pthread_mutex_unlock(&mu);
    return n;
}

ACL_FUNC_VISIBILITY aclError aclGetTensorDescDimV2(const aclTensorDesc *desc, size_t index, int64_t *dimSize) {
    static const char func[] = "aclGetTensorDescDimV2";
    aclError rc = ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&mu);
    if (!live(desc, KIND_DESC, func, "desc")) {
    } else if (dimSize == NULL) {
        pyaclnn_stub_report(rc, func, "dimSize is NULL");
    } else if (index >= (size_t)desc->ndim) {
        pyaclnn_stub_report(rc, func, "index %zu is not below the description's %d dims", index, desc->ndim);
    } else {
        *dimSize = desc->dims[index];
        rc = ACL_SUCCESS;
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

ACL_FUNC_VISIBILITY void aclSetTensorDescName(aclTensorDesc *desc, const char *name) {
    char *copy = name ? strdup(name) : NULL;
    pthread_mutex_lock(&mu);
    if (live(desc, KIND_DESC, "aclSetTensorDescName", "desc")) {
        free(desc->name);
        desc->name = copy;
        copy = NULL;
    }
    pthread_mutex_unlock(&mu);
    free(copy);
}

ACL_FUNC_VISIBILITY aclError aclSetTensorFormat(aclTensorDesc *desc, aclFormat format) {
    pthread_mutex_lock(&mu);
    int ok = live(desc, KIND_DESC, "aclSetTensorFormat", "desc");
    if (ok) desc->format = format;
    pthread_mutex_unlock(&mu);
    return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

ACL_FUNC_VISIBILITY aclError aclSetTensorShape(aclTensorDesc *desc, int numDims, const int64_t *dims) {
    static const char func[] = "aclSetTensorShape";
    pthread_mutex_lock(&mu);
    int ok = live(desc, KIND_DESC, func, "desc") && shape_ok(func, numDims, dims);
    if (ok) {
        desc->ndim = numDims;
        if (numDims > 0) memcpy(desc->dims, dims, (size_t)numDims * sizeof *dims);
    }
    pthread_mutex_unlock(&mu);
    return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

ACL_FUNC_VISIBILITY aclError aclSetTensorPlaceMent(aclTensorDesc *desc, aclMemType memType) {
    static const char func[] = "aclSetTensorPlaceMent";
    pthread_mutex_lock(&mu);
    int ok = live(desc, KIND_DESC, func, "desc");
    if (ok && (memType < ACL_MEMTYPE_DEVICE || memType > ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT)) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "memType %d is not ACL_MEMTYPE_DEVICE (0), ACL_MEMTYPE_HOST "
                            "(1) or ACL_MEMTYPE_HOST_COMPILE_INDEPENDENT (2)", (int)memType);
        ok = 0;
    }
    if (ok) desc->placement = memType;
    pthread_mutex_unlock(&mu);
    return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

PYACLNN_STUB_API int pyaclnn_stub_aclop_desc_get(const void *desc, pyaclnn_stub_aclop_desc *out) {
    pthread_mutex_lock(&mu);
    int ok = live(desc, KIND_DESC, NULL, NULL);
    if (ok) {
        const aclTensorDesc *d = desc;
        out->dtype = d->dtype;
        out->format = d->format;
        out->ndim = d->ndim;
        memcpy(out->dims, d->dims, sizeof d->dims);
        out->placement = d->placement;
    }
    pthread_mutex_unlock(&mu);
    return ok ? 0 : -1;
}

/* ---- data buffers ------------------------------------------------------------------------------------ */

ACL_FUNC_VISIBILITY aclDataBuffer *aclCreateDataBuffer(void *data, size_t size) {
    aclDataBuffer *b = malloc(sizeof *b);
    if (b == NULL) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer", "out of host memory");
        return NULL;
    }
    b->data = data;
    b->size = size;
    pthread_mutex_lock(&mu);
    int rc = stub_registry_add(&handles, b, KIND_BUFFER);
    pthread_mutex_unlock(&mu);
    if (rc != 0) {
        free(b);
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, "aclCreateDataBuffer", "out of host memory");
        return NULL;
    }
    return b;
}

ACL_FUNC_VISIBILITY aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) {
    pthread_mutex_lock(&mu);
    int ok = live(dataBuffer, KIND_BUFFER, "aclDestroyDataBuffer", "dataBuffer") &&
             stub_registry_remove(&handles, dataBuffer, KIND_BUFFER);
    pthread_mutex_unlock(&mu);
    if (ok) free((void *)dataBuffer);                /* the memory it names is the caller's */
    return ok ? ACL_SUCCESS : ACL_ERROR_INVALID_PARAM;
}

PYACLNN_STUB_API int pyaclnn_stub_aclop_buffer_get(const void *buffer, void **data, size_t *size) {
    pthread_mutex_lock(&mu);
    int ok = live(buffer, KIND_BUFFER, NULL, NULL);
    if (ok) {
        *data = ((const aclDataBuffer *)buffer)->data;
        *size = ((const aclDataBuffer *)buffer)->size;
    }
    pthread_mutex_unlock(&mu);
    return ok ? 0 : -1;
}

/* ---- operator attributes ----------------------------------------------------------------------------- */

ACL_FUNC_VISIBILITY aclopAttr *aclopCreateAttr() {
    aclopAttr *a = calloc(1, sizeof *a);
    pthread_mutex_lock(&mu);
    int rc = a ? stub_registry_add(&handles, a, KIND_ATTR) : -1;
    pthread_mutex_unlock(&mu);
    if (rc != 0) {
        free(a);
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, "aclopCreateAttr", "out of host memory");
        return NULL;
    }
    return a;
}

static void free_value(pyaclnn_stub_aclop_attr_value *v) {
    free(v->text);
    free(v->list);
    v->text = NULL;
    v->list = NULL;
}

ACL_FUNC_VISIBILITY void aclopDestroyAttr(const aclopAttr *attr) {
    if (attr == NULL) return;                        /* as CANN: nothing to do */
    pthread_mutex_lock(&mu);
    int ok = live(attr, KIND_ATTR, "aclopDestroyAttr", "attr") && stub_registry_remove(&handles, attr, KIND_ATTR);
    pthread_mutex_unlock(&mu);
    if (!ok) return;
    for (int i = 0; i < attr->n; i++) {
        free(attr->entries[i].name);
        free_value(&attr->entries[i].value);
    }
    free(attr->entries);
    free((void *)attr);
}

/* Stores (replacing a value of the same name) what `v` holds; takes ownership of v's text and list. */
static aclError set_attr(const char *func, aclopAttr *attr, const char *name, pyaclnn_stub_aclop_attr_value v) {
    aclError rc = ACL_ERROR_INVALID_PARAM;
    pthread_mutex_lock(&mu);
    if (!live(attr, KIND_ATTR, func, "attr")) {
    } else if (name == NULL) {
        pyaclnn_stub_report(rc, func, "attrName is NULL");
    } else {
        int i = 0;
        while (i < attr->n && strcmp(attr->entries[i].name, name) != 0) i++;
        if (i == attr->n && attr->n == attr->cap) {
            int cap = attr->cap ? 2 * attr->cap : 8;
            attr_entry *grown = realloc(attr->entries, (size_t)cap * sizeof *grown);
            if (grown) {
                attr->entries = grown;
                attr->cap = cap;
            }
        }
        char *copy = i == attr->n && attr->n < attr->cap ? strdup(name) : NULL;
        if (i < attr->n) {
            free_value(&attr->entries[i].value);
            attr->entries[i].value = v;
            rc = ACL_SUCCESS;
        } else if (copy) {
            attr->entries[attr->n++] = (attr_entry){copy, v};
            rc = ACL_SUCCESS;
        } else {
            pyaclnn_stub_report(rc = ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        }
    }
    pthread_mutex_unlock(&mu);
    if (rc != ACL_SUCCESS) free_value(&v);
    return rc;
}

static aclError set_list(const char *func, aclopAttr *attr, const char *name, int kind, int n, const void *values,
                         size_t item) {
    if (n < 0 || (n > 0 && values == NULL)) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, n < 0 ? "numValues %d is negative"
                            : "values is NULL with numValues %d", n);
        return ACL_ERROR_INVALID_PARAM;
    }
    pyaclnn_stub_aclop_attr_value v = {.kind = kind, .n = n};
    if (n > 0 && (v.list = malloc((size_t)n * item)) == NULL) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        return ACL_ERROR_BAD_ALLOC;
    }
    if (n > 0) memcpy(v.list, values, (size_t)n * item);
    return set_attr(func, attr, name, v);
}

ACL_FUNC_VISIBILITY aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue) {
    return set_attr("aclopSetAttrBool", attr, attrName,
                    (pyaclnn_stub_aclop_attr_value){.kind = PYACLNN_ACLOP_ATTR_BOOL, .i = attrValue != 0});
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue) {
    return set_attr("aclopSetAttrInt", attr, attrName,
                    (pyaclnn_stub_aclop_attr_value){.kind = PYACLNN_ACLOP_ATTR_INT, .i = attrValue});
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue) {
    return set_attr("aclopSetAttrFloat", attr, attrName,
                    (pyaclnn_stub_aclop_attr_value){.kind = PYACLNN_ACLOP_ATTR_FLOAT, .f = attrValue});
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrDataType(aclopAttr *attr, const char *attrName, aclDataType attrValue) {
    return set_attr("aclopSetAttrDataType", attr, attrName,
                    (pyaclnn_stub_aclop_attr_value){.kind = PYACLNN_ACLOP_ATTR_DTYPE, .i = attrValue});
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue) {
    static const char func[] = "aclopSetAttrString";
    if (attrValue == NULL) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, "attrValue is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    pyaclnn_stub_aclop_attr_value v = {.kind = PYACLNN_ACLOP_ATTR_STRING, .text = strdup(attrValue)};
    if (v.text == NULL) {
        pyaclnn_stub_report(ACL_ERROR_BAD_ALLOC, func, "out of host memory");
        return ACL_ERROR_BAD_ALLOC;
    }
    return set_attr(func, attr, attrName, v);
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrListBool(aclopAttr *attr, const char *attrName, int numValues,
                                                  const uint8_t *values) {
    return set_list("aclopSetAttrListBool", attr, attrName, PYACLNN_ACLOP_ATTR_LIST_BOOL, numValues, values, 1);
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues,
                                                 const int64_t *values) {
    return set_list("aclopSetAttrListInt", attr, attrName, PYACLNN_ACLOP_ATTR_LIST_INT, numValues, values,
                    sizeof(int64_t));
}
ACL_FUNC_VISIBILITY aclError aclopSetAttrListFloat(aclopAttr *attr, const char *attrName, int numValues,
                                                   const float *values) {
    return set_list("aclopSetAttrListFloat", attr, attrName, PYACLNN_ACLOP_ATTR_LIST_FLOAT, numValues, values,
                    sizeof(float));
}

/* Lists of lists are accepted and kept as their count only: no emulated aclop operator reads one. */
ACL_FUNC_VISIBILITY aclError aclopSetAttrListListInt(aclopAttr *attr, const char *attrName, int numLists,
                                                     const int *numValues, const int64_t *const values[]) {
    static const char func[] = "aclopSetAttrListListInt";
    if (numLists < 0 || (numLists > 0 && (numValues == NULL || values == NULL))) {
        pyaclnn_stub_report(ACL_ERROR_INVALID_PARAM, func, numLists < 0 ? "numLists is negative"
                            : "numValues or values is NULL");
        return ACL_ERROR_INVALID_PARAM;
    }
    return set_attr(func, attr, attrName,
                    (pyaclnn_stub_aclop_attr_value){.kind = PYACLNN_ACLOP_ATTR_LIST_LIST_INT, .n = numLists});
}

PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_live(const void *attr) {
    pthread_mutex_lock(&mu);
    int ok = live(attr, KIND_ATTR, NULL, NULL);
    pthread_mutex_unlock(&mu);
    return ok;
}

PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_scalar(const void *attr, const char *name, int *kind, int64_t *i,
                                                   float *f) {
    int found = 0;
    pthread_mutex_lock(&mu);
    if (name && live(attr, KIND_ATTR, NULL, NULL)) {
        const aclopAttr *a = attr;
        for (int k = 0; k < a->n && !found; k++) {
            const pyaclnn_stub_aclop_attr_value *v = &a->entries[k].value;
            if (strcmp(a->entries[k].name, name) != 0 || v->kind > PYACLNN_ACLOP_ATTR_DTYPE ||
                v->kind == PYACLNN_ACLOP_ATTR_STRING)
                continue;
            *kind = v->kind;
            *i = v->i;
            *f = v->f;
            found = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}

PYACLNN_STUB_API int pyaclnn_stub_aclop_attr_string(const void *attr, const char *name, char *buf, size_t size) {
    int found = 0;
    pthread_mutex_lock(&mu);
    if (name && buf && size && live(attr, KIND_ATTR, NULL, NULL)) {
        const aclopAttr *a = attr;
        for (int k = 0; k < a->n && !found; k++) {
            const pyaclnn_stub_aclop_attr_value *v = &a->entries[k].value;
            if (strcmp(a->entries[k].name, name) != 0 || v->kind != PYACLNN_ACLOP_ATTR_STRING || !v->text) continue;
            snprintf(buf, size, "%s", v->text);
            found = 1;
        }
    }
    pthread_mutex_unlock(&mu);
    return found;
}
