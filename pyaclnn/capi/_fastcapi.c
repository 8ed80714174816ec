/*
 * _pyaclnn_capi: optional compiled call path of the pyaclnn.capi mirror.
 *
 * A CFunction object wraps one bound ctypes function (restype and argtypes set by
 * pyaclnn/capi/_binding.py). Its vectorcall converts the common arguments in C -- ints, floats,
 * None, exact str/bytes for const char*, exact c_void_p objects, ctypes arrays and pointers whose
 * item type ctypes would accept, byref(x) -- exactly as ctypes' from_param would, releases the GIL
 * (except around the functions made with keep_gil: see _accel.py) and calls the C function. Any other argument (numpy ints, _as_parameter_ objects, subclasses,
 * a wrong type, keywords, a wrong count) and any conversion error hands the whole call, before the
 * C function runs, to the ctypes function: that path raises ctypes' own errors. So results, errors
 * and out-parameters are those of ctypes; only the cost differs.
 *
 * The C function is called through libffi (what ctypes itself calls through), with a call interface
 * prepared once per function from its ctypes signature: every argument and the result travel as their
 * own C types, on any ABI libffi supports.
 *
 * Only public interfaces are read: a ctypes instance's memory through the buffer protocol (ctypes
 * exports b_ptr as the buffer), and byref(x) through its `_obj` attribute (the referenced object) and
 * its repr, "<cparam 'P' (0x...)>", which carries the address byref computed (x's plus the offset).
 * `setup()` checks both on real objects before the fast path relies on them, and leaves that kind of
 * argument to ctypes when they do not behave as expected.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <ffi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ABI_VERSION 3
#define MAX_ARGS 32
#define CACHE 4

static PyTypeObject *carg_type;        /* type(ctypes.byref(x)) */
static PyTypeObject *array_base;       /* ctypes.Array */
static PyTypeObject *pointer_base;     /* ctypes._Pointer */
static PyTypeObject *void_p_type;      /* ctypes.c_void_p */
static PyObject *str_type_attr;        /* "_type_" */
static PyObject *str_obj_attr;         /* "_obj" */
static int cdata_ok, carg_ok;

/* The address a ctypes instance's memory starts at (its buffer): 0 when it exports none. */
static int cdata_memory(PyObject *o, char **out) {
    Py_buffer view;
    if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) < 0) { PyErr_Clear(); return 0; }
    *out = (char *)view.buf;
    PyBuffer_Release(&view);   /* the instance, held by the caller's arguments, keeps the memory */
    return 1;
}

/* The address byref(x[, offset]) passes: the one its repr shows. 0 when the repr is not of that form. */
static int carg_address(PyObject *arg, void **out) {
    PyObject *r = PyObject_Repr(arg);
    if (r == NULL) { PyErr_Clear(); return 0; }
    const char *s = PyUnicode_AsUTF8(r);
    int ok = 0;
    if (s != NULL && strncmp(s, "<cparam 'P' (0x", 15) == 0) {
        char *end;
        unsigned long long v = strtoull(s + 13, &end, 16);
        if (end[0] == ')' && end[1] == '>' && end[2] == '\0') *out = (void *)(uintptr_t)v, ok = 1;
    }
    if (s == NULL) PyErr_Clear();
    Py_DECREF(r);
    return ok;
}

/* x of byref(x) (a new reference), or NULL. */
static PyObject *carg_object(PyObject *arg) {
    PyObject *o = PyObject_GetAttr(arg, str_obj_attr);
    if (o == NULL) PyErr_Clear();
    return o;
}

/* ---- argument and result kinds (pyaclnn/capi/_accel.py maps ctypes types to these) ---------- */

enum {
    K_I8 = 'b', K_U8 = 'B', K_I16 = 'h', K_U16 = 'H', K_I32 = 'i', K_U32 = 'I', K_I64 = 'q', K_U64 = 'Q',
    K_F64 = 'd', K_F32 = 'f',
    K_VOIDP = 'P',      /* c_void_p (and the handle typedefs)                       */
    K_CSTR = 'z',       /* const char*: str (UTF-8), bytes, None                    */
    K_PTR = 'T',        /* POINTER(X): None, byref(x), arrays/pointers of X         */
    K_VOID = 'v', K_BOOL = '?'   /* results only */
};

enum { MODE_ADDR = 1, MODE_DEREF = 2, MODE_CARG = 3 };

typedef struct {
    PyTypeObject *type[CACHE];
    char mode[CACHE];
} type_cache;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *cfunc;                   /* the ctypes function: fallback, attributes, doc */
    void *address;
    int fast;                          /* cleared when an attribute of the ctypes function is set */
    int keep_gil;                      /* a short host-side call that never waits: the GIL stays held */
    Py_ssize_t fallbacks;              /* calls handed to the ctypes function (tests read it)    */
    Py_ssize_t nargs;
    char ret;
    ffi_cif cif;                       /* the call interface of the C signature, prepared once */
    ffi_type *arg_types[MAX_ARGS];
    char kinds[MAX_ARGS];
    PyObject *targets[MAX_ARGS];       /* K_PTR: the pointee type X of POINTER(X) */
    type_cache direct[MAX_ARGS];       /* K_PTR: accepted ctypes argument types, and how they pass */
    type_cache byref[MAX_ARGS];        /* K_PTR: accepted types of x in byref(x)                  */
} CFunction;

static PyObject *fallback(CFunction *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    self->fallbacks++;
    return PyObject_Vectorcall(self->cfunc, args, nargsf, kwnames);
}

static int cache_find(type_cache *c, PyTypeObject *t) {
    for (int i = 0; i < CACHE && c->type[i] != NULL; i++)
        if (c->type[i] == t) return c->mode[i];
    return 0;
}

static void cache_add(type_cache *c, PyTypeObject *t, int mode) {
    for (int i = 0; i < CACHE; i++) {
        if (c->type[i] == t) return;
        if (c->type[i] == NULL) {
            Py_INCREF(t);
            c->type[i] = t;
            c->mode[i] = (char)mode;
            return;
        }
    }
}

/* How ctypes' POINTER(X).from_param treats a ctypes instance `arg`: as &arg (an X instance), as the
 * array's address or the pointer's value (item type a subclass of X), or not at all (0). */
static int classify_cdata(PyObject *arg, PyObject *target) {
    int r = PyObject_IsInstance(arg, target);
    if (r < 0) { PyErr_Clear(); return 0; }
    if (r) return MODE_ADDR;
    int is_array = PyObject_TypeCheck(arg, array_base), is_pointer = PyObject_TypeCheck(arg, pointer_base);
    if (!is_array && !is_pointer) return 0;
    PyObject *item = PyObject_GetAttr((PyObject *)Py_TYPE(arg), str_type_attr);
    if (item == NULL) { PyErr_Clear(); return 0; }
    r = PyType_Check(item) ? PyObject_IsSubclass(item, target) : 0;
    Py_DECREF(item);
    if (r < 0) { PyErr_Clear(); return 0; }
    return r ? (is_array ? MODE_ADDR : MODE_DEREF) : 0;
}

/* The value of a POINTER(X) argument, as ctypes would pass it; 0 = let ctypes handle it. */
static int convert_pointer(CFunction *self, Py_ssize_t i, PyObject *arg, void **out) {
    if (Py_IS_TYPE(arg, carg_type)) {           /* byref(x): accepted when x is an X */
        if (!carg_ok) return 0;
        PyObject *x = carg_object(arg);
        if (x == NULL) return 0;
        PyTypeObject *t = Py_TYPE(x);
        if (!cache_find(&self->byref[i], t)) {
            int r = PyObject_IsInstance(x, self->targets[i]);
            if (r <= 0) { if (r < 0) PyErr_Clear(); Py_DECREF(x); return 0; }
            cache_add(&self->byref[i], t, MODE_CARG);
        }
        Py_DECREF(x);
        return carg_address(arg, out);
    }
    if (!cdata_ok) return 0;
    int mode = cache_find(&self->direct[i], Py_TYPE(arg));
    if (mode == 0) {
        mode = classify_cdata(arg, self->targets[i]);   /* nonzero only for ctypes instances */
        if (mode == 0) return 0;
        cache_add(&self->direct[i], Py_TYPE(arg), mode);
    }
    char *b;
    if (!cdata_memory(arg, &b)) return 0;
    *out = mode == MODE_DEREF ? *(void **)b : (void *)b;
    return 1;
}

/* c_void_p.from_param: None, int (masked), c_void_p, byref(...), any ctypes array or pointer. */
static int convert_void_p(PyObject *arg, void **out) {
    if (PyLong_Check(arg)) {
        uint64_t v = (uint64_t)PyLong_AsUnsignedLongLongMask(arg);
        if (v == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        *out = (void *)(uintptr_t)v;
        return 1;
    }
    if (Py_IS_TYPE(arg, carg_type)) return carg_ok && carg_address(arg, out);
    if (!cdata_ok) return 0;
    int deref = Py_IS_TYPE(arg, void_p_type) || PyObject_TypeCheck(arg, pointer_base);
    if (!deref && !PyObject_TypeCheck(arg, array_base)) return 0;
    char *b;
    if (!cdata_memory(arg, &b)) return 0;
    *out = deref ? *(void **)b : (void *)b;
    return 1;
}

static int convert_int(PyObject *arg, char kind, uint64_t *out) {
    if (!PyLong_Check(arg)) return 0;
    uint64_t v = (uint64_t)PyLong_AsUnsignedLongLongMask(arg);   /* ctypes masks too: no overflow error */
    if (v == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    switch (kind) {   /* narrow, then extend to the register width as the callee may assume */
    case K_I8: v = (uint64_t)(int64_t)(int8_t)v; break;
    case K_U8: v = (uint8_t)v; break;
    case K_I16: v = (uint64_t)(int64_t)(int16_t)v; break;
    case K_U16: v = (uint16_t)v; break;
    case K_I32: v = (uint64_t)(int64_t)(int32_t)v; break;
    case K_U32: v = (uint32_t)v; break;
    default: break;
    }
    *out = v;
    return 1;
}

static int convert_double(PyObject *arg, double *out) {
    if (PyFloat_CheckExact(arg)) { *out = PyFloat_AS_DOUBLE(arg); return 1; }
    if (PyLong_CheckExact(arg)) {
        *out = PyLong_AsDouble(arg);
        if (*out == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        return 1;
    }
    return 0;
}

/* One argument or result in its C type, as libffi reads and writes it (integer results smaller than
 * ffi_arg are widened to ffi_arg by libffi). */
typedef union {
    int8_t b; uint8_t B; int16_t h; uint16_t H; int32_t i; uint32_t I; int64_t q; uint64_t Q;
    double d; float f; void *p; ffi_arg widened; ffi_sarg swidened;
} c_value;

static void store_int(char kind, uint64_t v, c_value *out) {
    switch (kind) {
    case K_I8: out->b = (int8_t)v; break;
    case K_U8: out->B = (uint8_t)v; break;
    case K_I16: out->h = (int16_t)v; break;
    case K_U16: out->H = (uint16_t)v; break;
    case K_I32: out->i = (int32_t)v; break;
    case K_U32: out->I = (uint32_t)v; break;
    case K_I64: out->q = (int64_t)v; break;
    default: out->Q = v; break;
    }
}

static PyObject *make_result(char ret, const c_value *r) {
    switch (ret) {
    case K_VOID: Py_RETURN_NONE;
    case K_I8: return PyLong_FromLong((int8_t)r->swidened);
    case K_U8: return PyLong_FromLong((uint8_t)r->widened);
    case K_I16: return PyLong_FromLong((int16_t)r->swidened);
    case K_U16: return PyLong_FromLong((uint16_t)r->widened);
    case K_I32: return PyLong_FromLong((int32_t)r->swidened);
    case K_U32: return PyLong_FromUnsignedLong((uint32_t)r->widened);
    case K_I64: return PyLong_FromLongLong(r->q);
    case K_U64: return PyLong_FromUnsignedLongLong(r->Q);
    case K_BOOL: return PyBool_FromLong((uint8_t)r->widened != 0);
    case K_VOIDP:
        if (r->p == NULL) Py_RETURN_NONE;
        return PyLong_FromVoidPtr(r->p);
    case K_CSTR:
        if (r->p == NULL) Py_RETURN_NONE;
        return PyBytes_FromString((const char *)r->p);
    case K_F64: return PyFloat_FromDouble(r->d);
    case K_F32: return PyFloat_FromDouble((double)r->f);
    default: PyErr_SetString(PyExc_SystemError, "bad result kind"); return NULL;
    }
}

static PyObject *cfunction_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    CFunction *self = (CFunction *)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (!self->fast || kwnames != NULL || n != self->nargs) return fallback(self, args, nargsf, kwnames);
    c_value values[MAX_ARGS];
    void *slots[MAX_ARGS];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = args[i];
        char k = self->kinds[i];
        int ok;
        slots[i] = &values[i];
        if (k == K_F64 || k == K_F32) {
            double d = 0.0;
            ok = convert_double(a, &d);
            if (k == K_F32) values[i].f = (float)d;
            else values[i].d = d;
        } else if (a == Py_None && (k == K_PTR || k == K_VOIDP || k == K_CSTR)) {
            values[i].p = NULL, ok = 1;
        } else if (k == K_PTR) {
            ok = convert_pointer(self, i, a, &values[i].p);
        } else if (k == K_VOIDP) {
            ok = convert_void_p(a, &values[i].p);
        } else if (k == K_CSTR) {
            ok = 0;
            if (PyUnicode_CheckExact(a)) {
                const char *str = PyUnicode_AsUTF8AndSize(a, NULL);   /* owned by the str, alive during the call */
                if (str == NULL) PyErr_Clear();
                else values[i].p = (void *)str, ok = 1;
            } else if (PyBytes_Check(a)) {
                values[i].p = PyBytes_AS_STRING(a), ok = 1;
            }
        } else {
            uint64_t v;
            ok = convert_int(a, k, &v);
            store_int(k, v, &values[i]);
        }
        if (!ok) return fallback(self, args, nargsf, kwnames);
    }
    c_value r;
    memset(&r, 0, sizeof r);
    if (self->keep_gil) {
        ffi_call(&self->cif, FFI_FN(self->address), &r, slots);
    } else {
        Py_BEGIN_ALLOW_THREADS
        ffi_call(&self->cif, FFI_FN(self->address), &r, slots);
        Py_END_ALLOW_THREADS
    }
    return make_result(self->ret, &r);
}

/* ---- the CFunction type --------------------------------------------------------------------- */

static void cfunction_dealloc(CFunction *self) {
    Py_XDECREF(self->cfunc);
    for (Py_ssize_t i = 0; i < MAX_ARGS; i++) {
        Py_XDECREF(self->targets[i]);
        for (int j = 0; j < CACHE; j++) {
            Py_XDECREF(self->direct[i].type[j]);
            Py_XDECREF(self->byref[i].type[j]);
        }
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *cfunction_getattro(PyObject *self, PyObject *name) {
    PyObject *r = PyObject_GenericGetAttr(self, name);
    if (r != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError)) return r;
    PyErr_Clear();
    return PyObject_GetAttr(((CFunction *)self)->cfunc, name);   /* argtypes, restype, __name__ ... */
}

static int cfunction_setattro(PyObject *self, PyObject *name, PyObject *value) {
    CFunction *f = (CFunction *)self;
    f->fast = 0;          /* the conversions were derived from the old attributes: use ctypes from now on */
    return PyObject_SetAttr(f->cfunc, name, value);
}

static PyObject *cfunction_repr(CFunction *self) {
    PyObject *name = PyObject_GetAttrString(self->cfunc, "__name__");
    if (name == NULL) return NULL;
    PyObject *r = PyUnicode_FromFormat("<pyaclnn.capi C function %S>", name);
    Py_DECREF(name);
    return r;
}

static PyObject *get_doc(CFunction *self, void *closure) {
    (void)closure;
    return PyObject_GetAttrString(self->cfunc, "__doc__");
}

static PyObject *get_as_parameter(CFunction *self, void *closure) {
    (void)closure;                          /* passing the function where C takes a function pointer */
    return Py_NewRef(self->cfunc);
}

static PyObject *get_fast(CFunction *self, void *closure) {
    (void)closure;
    return PyBool_FromLong(self->fast);
}

static PyGetSetDef cfunction_getset[] = {
    {"__doc__", (getter)get_doc, NULL, NULL, NULL},
    {"_as_parameter_", (getter)get_as_parameter, NULL, NULL, NULL},
    {"compiled", (getter)get_fast, NULL, "True while calls take the compiled path", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef cfunction_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(CFunction, vectorcall), READONLY, NULL},
    {"fallbacks", T_PYSSIZET, offsetof(CFunction, fallbacks), READONLY, "calls handed to the ctypes function"},
    {"keeps_gil", T_INT, offsetof(CFunction, keep_gil), READONLY, "1: called without releasing the GIL"},
    {"ctypes_function", T_OBJECT, offsetof(CFunction, cfunc), READONLY, "the ctypes function behind it"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject CFunctionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pyaclnn.capi.CFunction",
    .tp_basicsize = sizeof(CFunction),
    .tp_dealloc = (destructor)cfunction_dealloc,
    .tp_vectorcall_offset = offsetof(CFunction, vectorcall),
    .tp_repr = (reprfunc)cfunction_repr,
    .tp_call = PyVectorcall_Call,
    .tp_getattro = cfunction_getattro,
    .tp_setattro = cfunction_setattro,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A C function of the capi mirror called through a compiled path (ctypes semantics).",
    .tp_getset = cfunction_getset,
    .tp_members = cfunction_members,
};

static ffi_type *ffi_type_of(char kind) {
    switch (kind) {
    case K_I8: return &ffi_type_sint8;
    case K_U8: case K_BOOL: return &ffi_type_uint8;
    case K_I16: return &ffi_type_sint16;
    case K_U16: return &ffi_type_uint16;
    case K_I32: return &ffi_type_sint32;
    case K_U32: return &ffi_type_uint32;
    case K_I64: return &ffi_type_sint64;
    case K_U64: return &ffi_type_uint64;
    case K_F64: return &ffi_type_double;
    case K_F32: return &ffi_type_float;
    case K_VOIDP: case K_CSTR: case K_PTR: return &ffi_type_pointer;
    case K_VOID: return &ffi_type_void;
    default: return NULL;
    }
}

/* function(cfunc, address, kinds: bytes, ret: bytes, targets: tuple[, keep_gil]) -> CFunction */
static PyObject *mod_function(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *cfunc, *targets;
    unsigned long long address;
    const char *kinds, *ret;
    Py_ssize_t nk, nr;
    int keep_gil = 0;
    if (!PyArg_ParseTuple(args, "OKy#y#O!|p", &cfunc, &address, &kinds, &nk, &ret, &nr, &PyTuple_Type, &targets,
                          &keep_gil))
        return NULL;
    if (nr != 1 || PyTuple_GET_SIZE(targets) != nk || nk > MAX_ARGS || address == 0) {
        PyErr_SetString(PyExc_ValueError, "bad signature description");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < nk; i++) {
        if (kinds[i] == K_VOID || kinds[i] == K_BOOL || ffi_type_of(kinds[i]) == NULL) {
            PyErr_Format(PyExc_ValueError, "unsupported argument kind %c", kinds[i]);
            return NULL;
        }
        if (kinds[i] == K_PTR && !PyType_Check(PyTuple_GET_ITEM(targets, i))) {
            PyErr_SetString(PyExc_TypeError, "POINTER(X) arguments need the type X");
            return NULL;
        }
    }
    if (ffi_type_of(ret[0]) == NULL || ret[0] == K_PTR) {
        PyErr_Format(PyExc_ValueError, "unsupported result kind %c", ret[0]);
        return NULL;
    }
    CFunction *self = PyObject_New(CFunction, &CFunctionType);
    if (self == NULL) return NULL;
    self->cfunc = NULL;
    memset(self->targets, 0, sizeof self->targets);
    memset(self->direct, 0, sizeof self->direct);
    memset(self->byref, 0, sizeof self->byref);
    for (Py_ssize_t i = 0; i < nk; i++) self->arg_types[i] = ffi_type_of(kinds[i]);
    if (ffi_prep_cif(&self->cif, FFI_DEFAULT_ABI, (unsigned)nk, ffi_type_of(ret[0]), self->arg_types) != FFI_OK) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_ValueError, "libffi cannot call this signature");
        return NULL;
    }
    self->vectorcall = cfunction_vectorcall;
    self->cfunc = Py_NewRef(cfunc);
    self->address = (void *)(uintptr_t)address;
    self->fast = 1;
    self->keep_gil = keep_gil;
    self->fallbacks = 0;
    self->nargs = nk;
    self->ret = ret[0];
    memset(self->kinds, 0, sizeof self->kinds);
    memcpy(self->kinds, kinds, (size_t)nk);
    for (Py_ssize_t i = 0; i < nk; i++)
        if (kinds[i] == K_PTR) self->targets[i] = Py_NewRef(PyTuple_GET_ITEM(targets, i));
    return (PyObject *)self;
}

/* setup(carg_type, Array, _Pointer, c_void_p, samples) -> (cdata_ok, carg_ok)
 * samples: ((ctypes instance, its address), ...), (byref(x, offset), x, the address it passes) */
static PyObject *mod_setup(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *ct, *ab, *pb, *vp, *cdata_samples, *carg_sample;
    if (!PyArg_ParseTuple(args, "O!O!O!O!O!O!", &PyType_Type, &ct, &PyType_Type, &ab, &PyType_Type, &pb,
                          &PyType_Type, &vp, &PyTuple_Type, &cdata_samples, &PyTuple_Type, &carg_sample))
        return NULL;
    Py_XSETREF(carg_type, (PyTypeObject *)Py_NewRef(ct));
    Py_XSETREF(array_base, (PyTypeObject *)Py_NewRef(ab));
    Py_XSETREF(pointer_base, (PyTypeObject *)Py_NewRef(pb));
    Py_XSETREF(void_p_type, (PyTypeObject *)Py_NewRef(vp));
    int ok = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(cdata_samples); i++) {
        PyObject *pair = PyTuple_GET_ITEM(cdata_samples, i);
        char *b;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) { ok = 0; break; }
        void *want = PyLong_AsVoidPtr(PyTuple_GET_ITEM(pair, 1));
        if (PyErr_Occurred()) return NULL;
        if (!cdata_memory(PyTuple_GET_ITEM(pair, 0), &b) || (void *)b != want) ok = 0;
    }
    cdata_ok = ok;
    ok = 0;
    if (PyTuple_GET_SIZE(carg_sample) == 3 && Py_IS_TYPE(PyTuple_GET_ITEM(carg_sample, 0), carg_type)) {
        PyObject *x = carg_object(PyTuple_GET_ITEM(carg_sample, 0));
        void *want = PyLong_AsVoidPtr(PyTuple_GET_ITEM(carg_sample, 2)), *got = NULL;
        if (PyErr_Occurred()) { Py_XDECREF(x); return NULL; }
        ok = x == PyTuple_GET_ITEM(carg_sample, 1) && carg_address(PyTuple_GET_ITEM(carg_sample, 0), &got) &&
             got == want;
        Py_XDECREF(x);
    }
    carg_ok = ok;
    return Py_BuildValue("(ii)", cdata_ok, carg_ok);
}

static PyObject *mod_abi(PyObject *m, PyObject *noargs) {
    (void)m, (void)noargs;
    return PyLong_FromLong(ABI_VERSION);
}

static PyMethodDef methods[] = {
    {"abi", mod_abi, METH_NOARGS, "ABI version of this module."},
    {"setup", mod_setup, METH_VARARGS, "Hand over the ctypes types and check how their objects read."},
    {"function", mod_function, METH_VARARGS, "A CFunction for a bound ctypes function."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_pyaclnn_capi", NULL, -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pyaclnn_capi(void) {
    if (PyType_Ready(&CFunctionType) < 0) return NULL;
    str_type_attr = PyUnicode_InternFromString("_type_");
    str_obj_attr = PyUnicode_InternFromString("_obj");
    if (str_type_attr == NULL || str_obj_attr == NULL) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
#ifdef Py_GIL_DISABLED
    /* Declared stance: the per-function conversion caches (type -> how it passes) are updated without a lock of
     * their own, under the GIL, so a free-threaded interpreter keeps the GIL enabled while this module is loaded. */
    PyUnstable_Module_SetGIL(m, Py_MOD_GIL_USED);
#endif
    Py_INCREF(&CFunctionType);
    if (PyModule_AddObject(m, "CFunction", (PyObject *)&CFunctionType) < 0) {
        Py_DECREF(&CFunctionType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
