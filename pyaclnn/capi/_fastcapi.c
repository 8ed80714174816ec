/*
 * _pyaclnn_capi: optional compiled call path of the pyaclnn.capi mirror.
 *
 * A CFunction object wraps one bound ctypes function (restype and argtypes set by
 * pyaclnn/capi/_binding.py). Its vectorcall converts the common arguments in C -- ints, floats,
 * None, exact str/bytes for const char*, exact c_void_p objects, ctypes arrays and pointers whose
 * item type ctypes would accept, byref(x) -- exactly as ctypes' from_param would, releases the GIL
 * and calls the C function. Any other argument (numpy ints, _as_parameter_ objects, subclasses,
 * a wrong type, keywords, a wrong count) and any conversion error hands the whole call, before the
 * C function runs, to the ctypes function: that path raises ctypes' own errors. So results, errors
 * and out-parameters are those of ctypes; only the cost differs.
 *
 * The C function is called through one generic pointer type taking 24 integer-class and 8
 * floating-point arguments: on the ABIs this is enabled for (x86-64 System V, AArch64 AAPCS64),
 * integer and floating-point arguments are assigned to their own register files independently and
 * integer arguments past the registers go to the stack in order, so a function of up to 24 integer
 * and 8 double/float arguments in any order receives exactly its arguments (extra ones are ignored,
 * the caller pops them). A float travels in the low half of a floating-point register. Module init
 * checks this on probe functions with mixed signatures; if a probe fails, `supported()` is False and
 * pyaclnn keeps the plain ctypes functions.
 *
 * Reading ctypes objects: byref(x) objects and ctypes instances are read through ctypes' (internal,
 * but unchanged since Python 2.5) object layouts; `setup()` checks both layouts on real objects
 * before the fast path reads them, and disables that kind of argument when they do not match.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define ABI_VERSION 1
#define MAX_INT_ARGS 24
#define MAX_FP_ARGS 8
#define MAX_ARGS (MAX_INT_ARGS + MAX_FP_ARGS)
#define CACHE 4

#if (defined(__x86_64__) || defined(__aarch64__)) && defined(__linux__)
#define GENERIC_CALL_POSSIBLE 1
#else
#define GENERIC_CALL_POSSIBLE 0
#endif

/* ---- ctypes object layouts (Modules/_ctypes/ctypes.h), checked by setup() ------------------- */

typedef struct {
    PyObject_HEAD
    char *b_ptr;
} cdata_head;

typedef struct {
    PyObject_HEAD
    void *pffi_type;
    char tag;
    union {
        char c; char b; short h; int i; long l; long long q; long double D; double d; float f; void *p;
    } value;
    PyObject *obj;
    Py_ssize_t size;
} carg_layout;

static PyTypeObject *carg_type;        /* type(ctypes.byref(x)) */
static PyTypeObject *array_base;       /* ctypes.Array */
static PyTypeObject *pointer_base;     /* ctypes._Pointer */
static PyTypeObject *void_p_type;      /* ctypes.c_void_p */
static PyObject *str_type_attr;        /* "_type_" */
static int cdata_ok, carg_ok, generic_ok;

/* ---- the generic call ----------------------------------------------------------------------- */

#define I8(a) a, a, a, a, a, a, a, a
typedef uint64_t (*call_int_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                                double, double, double, double, double, double, double, double);
typedef double (*call_fp_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                             double, double, double, double, double, double, double, double);

#define IARGS(v) v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12], v[13], \
                 v[14], v[15], v[16], v[17], v[18], v[19], v[20], v[21], v[22], v[23]
#define FARGS(v) v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]

static double float_in_fp_register(float f) {
    union { double d; uint64_t u; } r;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    r.u = bits;            /* low half: what a callee reading a float argument sees */
    return r.d;
}

static float float_of_fp_register(double d) {
    uint64_t u;
    float f;
    uint32_t bits;
    memcpy(&u, &d, 8);
    bits = (uint32_t)u;
    memcpy(&f, &bits, 4);
    return f;
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
    Py_ssize_t fallbacks;              /* calls handed to the ctypes function (tests read it)    */
    Py_ssize_t nargs;
    char ret;
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
static int convert_pointer(CFunction *self, Py_ssize_t i, PyObject *arg, uint64_t *out) {
    if (Py_IS_TYPE(arg, carg_type)) {           /* byref(x): accepted when x is an X */
        carg_layout *a = (carg_layout *)arg;
        if (!carg_ok || a->tag != 'P' || a->obj == NULL) return 0;
        PyTypeObject *t = Py_TYPE(a->obj);
        if (!cache_find(&self->byref[i], t)) {
            int r = PyObject_IsInstance(a->obj, self->targets[i]);
            if (r <= 0) { if (r < 0) PyErr_Clear(); return 0; }
            cache_add(&self->byref[i], t, MODE_CARG);
        }
        *out = (uint64_t)(uintptr_t)a->value.p;
        return 1;
    }
    if (!cdata_ok) return 0;
    int mode = cache_find(&self->direct[i], Py_TYPE(arg));
    if (mode == 0) {
        mode = classify_cdata(arg, self->targets[i]);   /* nonzero only for ctypes instances */
        if (mode == 0) return 0;
        cache_add(&self->direct[i], Py_TYPE(arg), mode);
    }
    char *b = ((cdata_head *)arg)->b_ptr;
    *out = mode == MODE_DEREF ? (uint64_t)(uintptr_t)(*(void **)b) : (uint64_t)(uintptr_t)b;
    return 1;
}

/* c_void_p.from_param: None, int (masked), c_void_p, byref(...), any ctypes array or pointer. */
static int convert_void_p(PyObject *arg, uint64_t *out) {
    if (PyLong_Check(arg)) {
        *out = (uint64_t)PyLong_AsUnsignedLongLongMask(arg);
        if (*out == (uint64_t)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        return 1;
    }
    if (Py_IS_TYPE(arg, void_p_type)) {
        if (!cdata_ok) return 0;
        *out = (uint64_t)(uintptr_t)(*(void **)((cdata_head *)arg)->b_ptr);
        return 1;
    }
    if (Py_IS_TYPE(arg, carg_type)) {
        carg_layout *a = (carg_layout *)arg;
        if (!carg_ok || a->tag != 'P') return 0;
        *out = (uint64_t)(uintptr_t)a->value.p;
        return 1;
    }
    if (!cdata_ok) return 0;
    if (PyObject_TypeCheck(arg, array_base)) {
        *out = (uint64_t)(uintptr_t)((cdata_head *)arg)->b_ptr;
        return 1;
    }
    if (PyObject_TypeCheck(arg, pointer_base)) {
        *out = (uint64_t)(uintptr_t)(*(void **)((cdata_head *)arg)->b_ptr);
        return 1;
    }
    return 0;
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

static PyObject *make_result(char ret, uint64_t r, double d) {
    switch (ret) {
    case K_VOID: Py_RETURN_NONE;
    case K_I8: return PyLong_FromLong((int8_t)r);
    case K_U8: return PyLong_FromLong((uint8_t)r);
    case K_I16: return PyLong_FromLong((int16_t)r);
    case K_U16: return PyLong_FromLong((uint16_t)r);
    case K_I32: return PyLong_FromLong((int32_t)r);
    case K_U32: return PyLong_FromUnsignedLong((uint32_t)r);
    case K_I64: return PyLong_FromLongLong((int64_t)r);
    case K_U64: return PyLong_FromUnsignedLongLong(r);
    case K_BOOL: return PyBool_FromLong((uint8_t)r != 0);
    case K_VOIDP:
        if (r == 0) Py_RETURN_NONE;
        return PyLong_FromVoidPtr((void *)(uintptr_t)r);
    case K_CSTR:
        if (r == 0) Py_RETURN_NONE;
        return PyBytes_FromString((const char *)(uintptr_t)r);
    case K_F64: return PyFloat_FromDouble(d);
    case K_F32: return PyFloat_FromDouble((double)float_of_fp_register(d));
    default: PyErr_SetString(PyExc_SystemError, "bad result kind"); return NULL;
    }
}

static PyObject *cfunction_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    CFunction *self = (CFunction *)callable;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (!self->fast || kwnames != NULL || n != self->nargs) return fallback(self, args, nargsf, kwnames);
    uint64_t iv[MAX_INT_ARGS] = {0};
    double fv[MAX_FP_ARGS] = {0};
    int ni = 0, nf = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *a = args[i];
        char k = self->kinds[i];
        if (k == K_F64 || k == K_F32) {
            double d;
            if (!convert_double(a, &d)) return fallback(self, args, nargsf, kwnames);
            fv[nf++] = k == K_F32 ? float_in_fp_register((float)d) : d;
            continue;
        }
        uint64_t v;
        int ok;
        if (a == Py_None && (k == K_PTR || k == K_VOIDP || k == K_CSTR)) {
            v = 0, ok = 1;
        } else if (k == K_PTR) {
            ok = convert_pointer(self, i, a, &v);
        } else if (k == K_VOIDP) {
            ok = convert_void_p(a, &v);
        } else if (k == K_CSTR) {
            ok = 0;
            if (PyUnicode_CheckExact(a)) {
                const char *s = PyUnicode_AsUTF8AndSize(a, NULL);   /* owned by the str, alive during the call */
                if (s == NULL) PyErr_Clear();
                else v = (uint64_t)(uintptr_t)s, ok = 1;
            } else if (PyBytes_Check(a)) {
                v = (uint64_t)(uintptr_t)PyBytes_AS_STRING(a), ok = 1;
            }
        } else {
            ok = convert_int(a, k, &v);
        }
        if (!ok) return fallback(self, args, nargsf, kwnames);
        iv[ni++] = v;
    }
    uint64_t r = 0;
    double d = 0.0;
    void *fn = self->address;
    Py_BEGIN_ALLOW_THREADS
    if (self->ret == K_F64 || self->ret == K_F32)
        d = ((call_fp_fn)fn)(IARGS(iv), FARGS(fv));
    else
        r = ((call_int_fn)fn)(IARGS(iv), FARGS(fv));
    Py_END_ALLOW_THREADS
    return make_result(self->ret, r, d);
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

/* function(cfunc, address, kinds: bytes, ret: bytes, targets: tuple) -> CFunction */
static PyObject *mod_function(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *cfunc, *targets;
    unsigned long long address;
    const char *kinds, *ret;
    Py_ssize_t nk, nr;
    if (!PyArg_ParseTuple(args, "OKy#y#O!", &cfunc, &address, &kinds, &nk, &ret, &nr, &PyTuple_Type, &targets))
        return NULL;
    if (!generic_ok) {
        PyErr_SetString(PyExc_RuntimeError, "the generic call is not supported on this platform");
        return NULL;
    }
    if (nr != 1 || PyTuple_GET_SIZE(targets) != nk || nk > MAX_ARGS || address == 0) {
        PyErr_SetString(PyExc_ValueError, "bad signature description");
        return NULL;
    }
    int ni = 0, nf = 0;
    for (Py_ssize_t i = 0; i < nk; i++) {
        if (kinds[i] == K_F64 || kinds[i] == K_F32) nf++;
        else if (strchr("bBhHiIqQPzT", kinds[i]) != NULL) ni++;
        else { PyErr_Format(PyExc_ValueError, "unsupported argument kind %c", kinds[i]); return NULL; }
        if (kinds[i] == K_PTR && !PyType_Check(PyTuple_GET_ITEM(targets, i))) {
            PyErr_SetString(PyExc_TypeError, "POINTER(X) arguments need the type X");
            return NULL;
        }
    }
    if (ni > MAX_INT_ARGS || nf > MAX_FP_ARGS) {
        PyErr_SetString(PyExc_ValueError, "too many arguments for the generic call");
        return NULL;
    }
    if (strchr("bBhHiIqQdf?vPz", ret[0]) == NULL) {
        PyErr_Format(PyExc_ValueError, "unsupported result kind %c", ret[0]);
        return NULL;
    }
    CFunction *self = PyObject_New(CFunction, &CFunctionType);
    if (self == NULL) return NULL;
    self->vectorcall = cfunction_vectorcall;
    self->cfunc = Py_NewRef(cfunc);
    self->address = (void *)(uintptr_t)address;
    self->fast = 1;
    self->fallbacks = 0;
    self->nargs = nk;
    self->ret = ret[0];
    memset(self->kinds, 0, sizeof self->kinds);
    memcpy(self->kinds, kinds, (size_t)nk);
    memset(self->direct, 0, sizeof self->direct);
    memset(self->byref, 0, sizeof self->byref);
    for (Py_ssize_t i = 0; i < MAX_ARGS; i++)
        self->targets[i] = i < nk && kinds[i] == K_PTR ? Py_NewRef(PyTuple_GET_ITEM(targets, i)) : NULL;
    return (PyObject *)self;
}

/* setup(carg_type, Array, _Pointer, c_void_p, samples) -> (cdata_ok, carg_ok)
 * samples: ((ctypes instance, its address), ..., (byref(x), x, address of x)) */
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
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) { ok = 0; break; }
        void *want = PyLong_AsVoidPtr(PyTuple_GET_ITEM(pair, 1));
        if (PyErr_Occurred()) return NULL;
        if (((cdata_head *)PyTuple_GET_ITEM(pair, 0))->b_ptr != want) ok = 0;
    }
    cdata_ok = ok;
    ok = 0;
    if (PyTuple_GET_SIZE(carg_sample) == 3 && Py_IS_TYPE(PyTuple_GET_ITEM(carg_sample, 0), carg_type)) {
        carg_layout *a = (carg_layout *)PyTuple_GET_ITEM(carg_sample, 0);
        void *want = PyLong_AsVoidPtr(PyTuple_GET_ITEM(carg_sample, 2));
        if (PyErr_Occurred()) return NULL;
        ok = a->tag == 'P' && a->value.p == want && a->obj == PyTuple_GET_ITEM(carg_sample, 1);
    }
    carg_ok = ok;
    return Py_BuildValue("(ii)", cdata_ok, carg_ok);
}

/* ---- probes of the generic call ------------------------------------------------------------- */

static int32_t probe_mixed(int8_t a, double b, uint16_t c, float d, int32_t e, void *f, int64_t g, uint64_t h,
                           double i, int8_t j, uint32_t k, int32_t l, float m) {
    return (a == -3 && b == 1.5 && c == 65000 && d == 2.25f && e == -70000 && f == (void *)(uintptr_t)0x1234 &&
            g == -5000000000LL && h == 0xFEDCBA9876543210ULL && i == -0.75 && j == 100 && k == 4000000000u &&
            l == -1 && m == -8.5f) ? -12345 : 1;
}

static double probe_double(int64_t a, double b, int32_t c, double d, int32_t e, int32_t f, int32_t g, int32_t h,
                           int32_t i, int32_t j, float k) {
    return (double)a + b + c + d + e + f + g + h + i + j + (double)k;
}

static float probe_float(uint16_t a, float b) { return (float)a + b; }

static void *volatile probe_ptrs[3];

static int check_generic_call(void) {
#if GENERIC_CALL_POSSIBLE
    uint64_t iv[MAX_INT_ARGS] = {0};
    double fv[MAX_FP_ARGS] = {0};
    probe_ptrs[0] = (void *)probe_mixed;
    probe_ptrs[1] = (void *)probe_double;
    probe_ptrs[2] = (void *)probe_float;
    /* integer-class arguments in order, then floating-point ones in order */
    iv[0] = (uint64_t)(int64_t)-3; iv[1] = 65000; iv[2] = (uint64_t)(int64_t)-70000; iv[3] = 0x1234;
    iv[4] = (uint64_t)-5000000000LL; iv[5] = 0xFEDCBA9876543210ULL; iv[6] = 100; iv[7] = 4000000000u;
    iv[8] = (uint64_t)(int64_t)-1;
    fv[0] = 1.5; fv[1] = float_in_fp_register(2.25f); fv[2] = -0.75; fv[3] = float_in_fp_register(-8.5f);
    if ((int32_t)((call_int_fn)probe_ptrs[0])(IARGS(iv), FARGS(fv)) != -12345) return 0;
    memset(iv, 0, sizeof iv);
    memset(fv, 0, sizeof fv);
    iv[0] = (uint64_t)(int64_t)-10; for (int q = 1; q <= 7; q++) iv[q] = (uint64_t)(int64_t)(q * 1000);
    fv[0] = 0.5; fv[1] = 0.25; fv[2] = float_in_fp_register(0.125f);
    if (((call_fp_fn)probe_ptrs[1])(IARGS(iv), FARGS(fv)) != -10 + 0.5 + 28000 + 0.25 + 0.125) return 0;
    memset(iv, 0, sizeof iv);
    memset(fv, 0, sizeof fv);
    iv[0] = 7; fv[0] = float_in_fp_register(0.5f);
    if (float_of_fp_register(((call_fp_fn)probe_ptrs[2])(IARGS(iv), FARGS(fv))) != 7.5f) return 0;
    return 1;
#else
    return 0;
#endif
}

static PyObject *mod_abi(PyObject *m, PyObject *noargs) {
    (void)m, (void)noargs;
    return PyLong_FromLong(ABI_VERSION);
}

static PyObject *mod_supported(PyObject *m, PyObject *noargs) {
    (void)m, (void)noargs;
    return PyBool_FromLong(generic_ok);
}

static PyMethodDef methods[] = {
    {"abi", mod_abi, METH_NOARGS, "ABI version of this module."},
    {"supported", mod_supported, METH_NOARGS, "True when the generic call passed its probes here."},
    {"setup", mod_setup, METH_VARARGS, "Hand over the ctypes types and check the object layouts."},
    {"function", mod_function, METH_VARARGS, "A CFunction for a bound ctypes function."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_pyaclnn_capi", NULL, -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pyaclnn_capi(void) {
    if (PyType_Ready(&CFunctionType) < 0) return NULL;
    str_type_attr = PyUnicode_InternFromString("_type_");
    if (str_type_attr == NULL) return NULL;
    generic_ok = check_generic_call();
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
#ifdef Py_GIL_DISABLED
    /* Declared stance: this module's correctness rests on the GIL (the per-function conversion caches are updated under it), so a free-threaded
     * interpreter keeps the GIL enabled while it is loaded. */
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
