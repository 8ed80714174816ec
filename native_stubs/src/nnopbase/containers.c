/*
 * aclScalar, aclIntArray / aclFloatArray / aclBoolArray, aclTensorList / aclScalarList.
 *
 * Scalars and arrays copy their input at creation. Lists copy the pointer array and take ownership
 * of the elements: destroying the list destroys them, and destroying an owned element directly is
 * refused (on CANN it is a double free).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnopbase_internal.h"

/* Registers a freshly built object or frees it; returns it, or NULL after reporting. */
static void *publish(const char *api, void *obj, int kind) {
    if (obj != NULL && stub_registry_add(&nn_handles, obj, kind) == 0) return obj;
    free(obj);
    pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "out of host memory");
    return NULL;
}

/* Destroys a plain object (no elements): NULL is fine, anything not live of this kind is refused. */
static aclnnStatus destroy_plain(const char *api, const char *param, const void *obj, int kind) {
    if (obj == NULL) return ACLNN_SUCCESS;
    aclnnStatus rc = nn_check_handle(api, param, obj, kind, ACLNN_SUCCESS);
    if (rc == ACLNN_SUCCESS && !stub_registry_remove(&nn_handles, obj, kind)) {
        /* lost a race with a concurrent destroy of the same object */
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "%s (%p) was destroyed concurrently", param, obj);
        rc = ACLNN_ERR_PARAM_INVALID;
    }
    if (rc == ACLNN_SUCCESS) free((void *)obj);
    return rc;
}

/* Size getter shared by arrays and lists (all start with a uint64_t size). */
static aclnnStatus get_size(const char *api, const char *param, const void *obj, int kind, uint64_t *size) {
    if (obj != NULL && size == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "size is NULL");
        return ACLNN_ERR_PARAM_NULLPTR;
    }
    aclnnStatus rc = nn_check_handle(api, param, obj, kind, ACLNN_ERR_PARAM_NULLPTR);
    if (rc == ACLNN_SUCCESS) *size = *(const uint64_t *)obj;
    return rc;
}

/* ---- scalars ------------------------------------------------------------------------------- */

aclScalar *aclCreateScalar(void *value, aclDataType dataType) {
    static const char API[] = "aclCreateScalar";
    char name[24];
    if (value == NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, API, "value is NULL");
        return NULL;
    }
    size_t nbytes = nn_scalar_bytes(dataType);
    if (nbytes == 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API, "dataType %s cannot hold a scalar",
                            nn_dtype_name(dataType, name));
        return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (s) {
        s->dtype = dataType;
        memcpy(s->value, value, nbytes);
    }
    return publish(API, s, NN_KIND_SCALAR);
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar) {
    static const char API[] = "aclDestroyScalar";
    if (scalar == NULL) return ACLNN_SUCCESS;
    pthread_mutex_lock(&nn_ownership_lock);
    aclnnStatus rc = nn_check_handle(API, "scalar", scalar, NN_KIND_SCALAR, ACLNN_SUCCESS);
    if (rc == ACLNN_SUCCESS && scalar->owner != NULL) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, API,
                            "scalar %p belongs to aclScalarList %p, which destroys it; destroying it here too "
                            "would be a double free", (const void *)scalar, (const void *)scalar->owner);
        rc = ACLNN_ERR_PARAM_INVALID;
    }
    if (rc == ACLNN_SUCCESS) stub_registry_remove(&nn_handles, scalar, NN_KIND_SCALAR);
    pthread_mutex_unlock(&nn_ownership_lock);
    if (rc == ACLNN_SUCCESS) free((void *)scalar);
    return rc;
}

/* ---- arrays: a NULL value or size 0 gives an empty (non-NULL) array ------------------------- */
/* (as hicann/opbase's aclArray constructor: it copies only when value != NULL and size != 0)     */

/* Allocates header + size elements of elem_size and copies them. */
static void *new_array(const char *api, const void *value, uint64_t size, size_t header, size_t elem_size,
                       int kind) {
    if (value == NULL) size = 0;
    if (size > (SIZE_MAX - header) / elem_size) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "size %llu is too large", (unsigned long long)size);
        return NULL;
    }
    unsigned char *a = malloc(header + (size_t)size * elem_size);
    if (a) {
        *(uint64_t *)a = size;
        if (size) memcpy(a + header, value, (size_t)size * elem_size);
    }
    return publish(api, a, kind);
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size) {
    return new_array("aclCreateIntArray", value, size, offsetof(aclIntArray, values), sizeof(int64_t),
                     NN_KIND_INT_ARRAY);
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size) {
    return new_array("aclCreateFloatArray", value, size, offsetof(aclFloatArray, values), sizeof(float),
                     NN_KIND_FLOAT_ARRAY);
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size) {
    return new_array("aclCreateBoolArray", value, size, offsetof(aclBoolArray, values), sizeof(bool),
                     NN_KIND_BOOL_ARRAY);
}

aclnnStatus aclDestroyIntArray(const aclIntArray *array) {
    return destroy_plain("aclDestroyIntArray", "array", array, NN_KIND_INT_ARRAY);
}

aclnnStatus aclDestroyFloatArray(const aclFloatArray *array) {
    return destroy_plain("aclDestroyFloatArray", "array", array, NN_KIND_FLOAT_ARRAY);
}

aclnnStatus aclDestroyBoolArray(const aclBoolArray *array) {
    return destroy_plain("aclDestroyBoolArray", "array", array, NN_KIND_BOOL_ARRAY);
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size) {
    return get_size("aclGetIntArraySize", "array", array, NN_KIND_INT_ARRAY, size);
}

aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size) {
    return get_size("aclGetFloatArraySize", "array", array, NN_KIND_FLOAT_ARRAY, size);
}

aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size) {
    return get_size("aclGetBoolArraySize", "array", array, NN_KIND_BOOL_ARRAY, size);
}

aclnnStatus pyaclnn_stub_scalar_get(const aclScalar *s, aclDataType *dtype, unsigned char value[16]) {
    if (!nn_is(s, NN_KIND_SCALAR)) return ACLNN_ERR_PARAM_INVALID;
    *dtype = s->dtype;
    memcpy(value, s->value, sizeof s->value);
    return ACLNN_SUCCESS;
}

aclnnStatus pyaclnn_stub_bool_array_get(const aclBoolArray *a, const bool **values, uint64_t *n) {
    if (a == NULL) {
        *n = 0;
        return ACLNN_SUCCESS;
    }
    if (!nn_is(a, NN_KIND_BOOL_ARRAY)) return ACLNN_ERR_PARAM_INVALID;
    *values = a->values;
    *n = a->size;
    return ACLNN_SUCCESS;
}

aclnnStatus pyaclnn_stub_int_array_get(const aclIntArray *a, const int64_t **values, uint64_t *n) {
    if (a == NULL) {
        *n = 0;
        return ACLNN_SUCCESS;
    }
    if (!nn_is(a, NN_KIND_INT_ARRAY)) return ACLNN_ERR_PARAM_INVALID;
    *values = a->values;
    *n = a->size;
    return ACLNN_SUCCESS;
}

aclnnStatus pyaclnn_stub_tensor_list_get(const aclTensorList *l, const aclTensor *const **items, uint64_t *n) {
    if (!nn_is(l, NN_KIND_TENSOR_LIST)) return ACLNN_ERR_PARAM_INVALID;
    *items = (const aclTensor *const *)l->items;
    *n = l->size;
    return ACLNN_SUCCESS;
}

aclnnStatus pyaclnn_stub_scalar_list_get(const aclScalarList *l, const aclScalar *const **items, uint64_t *n) {
    if (!nn_is(l, NN_KIND_SCALAR_LIST)) return ACLNN_ERR_PARAM_INVALID;
    *items = (const aclScalar *const *)l->items;
    *n = l->size;
    return ACLNN_SUCCESS;
}

/* ---- lists: they own their elements ---------------------------------------------------------- */

/* The element-kind specifics of a list, so tensor and scalar lists share one implementation. */
typedef struct {
    int list_kind, item_kind;
    const char *item_name;
    const void **(*owner_slot)(void *item);  /* where an element records its owning list */
} list_traits;

static const void **tensor_owner(void *item) { return (const void **)&((aclTensor *)item)->owner; }
static const void **scalar_owner(void *item) { return (const void **)&((aclScalar *)item)->owner; }

static const list_traits TENSOR_LIST = {NN_KIND_TENSOR_LIST, NN_KIND_TENSOR, "aclTensor", tensor_owner};
static const list_traits SCALAR_LIST = {NN_KIND_SCALAR_LIST, NN_KIND_SCALAR, "aclScalar", scalar_owner};

/* Both list structs are { uint64_t size; T *items[]; } with pointer-sized items. */
typedef struct { uint64_t size; void *items[]; } any_list;

static void *new_list(const char *api, const list_traits *tr, const void *const *value, uint64_t size) {
    if (value == NULL && size > 0) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_NULLPTR, api, "value is NULL but size is %llu",
                            (unsigned long long)size);
        return NULL;
    }
    if (size > (SIZE_MAX - sizeof(any_list)) / sizeof(void *)) {
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "size %llu is too large", (unsigned long long)size);
        return NULL;
    }
    any_list *list = calloc(1, sizeof *list + (size_t)size * sizeof(void *));
    if (list != NULL) list->size = size;
    if (list == NULL || stub_registry_add(&nn_handles, list, tr->list_kind) != 0) {
        free(list);
        pyaclnn_stub_report(ACLNN_ERR_INNER_NULLPTR, api, "out of host memory");
        return NULL;
    }

    /* Every element must be NULL or a live, unowned object, and appear once; only then take them. */
    pthread_mutex_lock(&nn_ownership_lock);
    const char *problem = NULL;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < size && !problem; i++) {
        void *item = (void *)value[i];
        list->items[i] = item;
        if (item == NULL) continue;
        bad = i;
        if (stub_registry_kind(&nn_handles, item) != tr->item_kind) problem = "is not a live %s";
        else if (*tr->owner_slot(item) != NULL) problem = "is an %s that already belongs to a list";
        else *tr->owner_slot(item) = list;   /* provisional; undone below on failure */
    }
    if (problem) {
        for (uint64_t i = 0; i < bad; i++)
            if (list->items[i] && *tr->owner_slot(list->items[i]) == list) *tr->owner_slot(list->items[i]) = NULL;
        stub_registry_remove(&nn_handles, list, tr->list_kind);
    }
    pthread_mutex_unlock(&nn_ownership_lock);
    if (problem) {
        char what[64];
        snprintf(what, sizeof what, problem, tr->item_name);
        pyaclnn_stub_report(ACLNN_ERR_PARAM_INVALID, api, "value[%llu] (%p) %s", (unsigned long long)bad,
                            value[bad], what);
        free(list);
        return NULL;
    }
    return list;
}

static aclnnStatus destroy_list(const char *api, const list_traits *tr, const void *obj) {
    if (obj == NULL) return ACLNN_SUCCESS;
    pthread_mutex_lock(&nn_ownership_lock);
    aclnnStatus rc = nn_check_handle(api, "array", obj, tr->list_kind, ACLNN_SUCCESS);
    if (rc == ACLNN_SUCCESS) {
        const any_list *list = obj;
        stub_registry_remove(&nn_handles, list, tr->list_kind);
        for (uint64_t i = 0; i < list->size; i++) {
            if (list->items[i] && stub_registry_remove(&nn_handles, list->items[i], tr->item_kind))
                free(list->items[i]);
        }
    }
    pthread_mutex_unlock(&nn_ownership_lock);
    if (rc == ACLNN_SUCCESS) free((void *)obj);
    return rc;
}

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size) {
    return new_list("aclCreateTensorList", &TENSOR_LIST, (const void *const *)value, size);
}

aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size) {
    return new_list("aclCreateScalarList", &SCALAR_LIST, (const void *const *)value, size);
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array) {
    return destroy_list("aclDestroyTensorList", &TENSOR_LIST, array);
}

aclnnStatus aclDestroyScalarList(const aclScalarList *array) {
    return destroy_list("aclDestroyScalarList", &SCALAR_LIST, array);
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size) {
    return get_size("aclGetTensorListSize", "tensorList", tensorList, NN_KIND_TENSOR_LIST, size);
}

aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size) {
    return get_size("aclGetScalarListSize", "scalarList", scalarList, NN_KIND_SCALAR_LIST, size);
}
