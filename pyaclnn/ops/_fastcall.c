/*
 * _pyaclnn_fastcall: optional CPython accelerator of plans (pyaclnn.ops._prepared).
 *
 * PlanBase is the C base of the accelerated Plan. Its tp_call handles the common call
 * `plan(t0, t1, ...)` / `plan()` entirely in C: check each argument is a pyaclnn Tensor whose
 * (interned) layout key is the prepared one and whose memory is ordered on the plan's stream, check
 * the thread is bound to the device, re-point the changed addresses with the setters
 * (aclSetInputTensorAddr / aclSetOutputTensorAddr) and launch (aclnnXxx). Anything else -- keyword
 * arguments, numpy or torch arguments, another layout or stream, an unbound thread, a failure --
 * goes to the Python method `_call_slow`, which behaves identically (and raises the errors).
 * All checks happen before the first C call, so falling back never repeats work.
 *
 * Threads: the C path runs under the GIL without running Python code until the launch has been
 * queued (the tensors it unbinds are released only afterwards), so it is atomic. While the Python
 * path of another thread holds the plan (`_fast_busy(1)` under the plan's lock), the C path sends
 * the call to Python, which waits for that lock.
 *
 * No CANN header is needed: the setters and the launch come in as function pointers that Python
 * looked up in the loaded libraries. Built on first use by pyaclnn/ops/_native.py.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>

typedef int32_t (*set_addr_fn)(void *executor, size_t index, void *tensor, void *addr);
typedef int32_t (*launch_fn)(void *workspace, uint64_t workspace_size, void *executor, void *stream);

#define MAX_SLOTS 64

/* The __slots__ read here (Tensor._key, ._ptr, ._mem; Memory.streams), read through their member descriptors'
 * own __get__ (tp_descr_get: a public slot), as `obj.name` would without the attribute lookup. */
static PyTypeObject *tensor_type;
enum { S_KEY, S_PTR, S_MEM, S_STREAMS, N_SLOTS_READ };
static PyObject *slot_descr[N_SLOTS_READ];
static descrgetfunc slot_get;
/* Set (under the GIL) when the interpreter starts exiting: the C paths then launch nothing and send
 * the call to Python, which refuses it (pyaclnn._shutdown). */
static int closing;
static PyObject *str_binding, *str_call_slow;

typedef struct {
    PyObject_HEAD
    int ready;                        /* set up and not closed                                 */
    int busy;                         /* the Python path of some thread holds the plan         */
    Py_ssize_t n;                     /* tensor slots                                          */
    void *executor;
    launch_fn launch;
    void *workspace;
    uint64_t workspace_size;
    void *stream_handle;
    PyObject *stream;                 /* the plan's default Stream (its memory must be ordered on it) */
    PyObject *tls;                    /* pyaclnn.runtime._tls                                  */
    PyObject *state;                  /* the device state; its .binding must be the thread's  */
    PyObject *keys;                   /* tuple of interned layout keys (None: absent slot)     */
    PyObject *objs;                   /* list: the Tensor bound per slot                       */
    Py_ssize_t n_out;
    Py_ssize_t out_index[MAX_SLOTS];
    void *handles[MAX_SLOTS];
    set_addr_fn set1[MAX_SLOTS], set2[MAX_SLOTS];
    uint64_t index1[MAX_SLOTS], index2[MAX_SLOTS];
    uint64_t bound[MAX_SLOTS];        /* addresses the executor holds                           */
    uint64_t *wanted;                 /* Python's array of the addresses bound per slot (kept in step) */
    Py_ssize_t failed;                /* slot whose setter failed, or n for the launch          */
    int32_t status;
} PlanBase;

/* The object slot `which` of `obj` holds, borrowed (NULL if unset, or obj is not of the slot's class). The new
 * reference __get__ returns is dropped at once: the slot keeps the object alive, and no Python code runs
 * between this read and its use (the GIL is held throughout; see "Threads" above). */
static PyObject *slot_of(PyObject *obj, int which) {
    PyObject *v = slot_get(slot_descr[which], obj, (PyObject *)Py_TYPE(obj));
    if (v == NULL) {
        PyErr_Clear();
        return NULL;
    }
    Py_DECREF(v);
    return v;
}
#define SLOT(obj, which) slot_of((obj), (which))

static PyObject *call_slow(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyObject *method = PyObject_GetAttr(self, str_call_slow);
    if (method == NULL) return NULL;
    PyObject *result = PyObject_Call(method, args, kwargs);
    Py_DECREF(method);
    return result;
}

static int thread_is_bound(PlanBase *p) {
    PyObject *mine = PyObject_GetAttr(p->tls, str_binding);
    if (mine == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *wanted = PyObject_GetAttr(p->state, str_binding);
    if (wanted == NULL) {
        PyErr_Clear();
        Py_DECREF(mine);
        return 0;
    }
    int ok = mine == wanted && mine != Py_None;
    Py_DECREF(mine);
    Py_DECREF(wanted);
    return ok;
}

/* The hot loop, the one place it is written: re-point the executor's slots 0..count-1 whose address
 * changed (both setters of an in-place slot), then launch on `stream_handle`. A setter's failure stops
 * it: `failed` names the slot (n for the launch), and the executor keeps the addresses it took. */
static int32_t repoint_and_launch(PlanBase *p, const uint64_t *addrs, Py_ssize_t count, void *stream_handle) {
    for (Py_ssize_t i = 0; i < count; i++) {
        p->wanted[i] = addrs[i];
        if (p->handles[i] == NULL || addrs[i] == p->bound[i]) continue;
        void *a = (void *)(uintptr_t)addrs[i];
        int32_t rc = p->set1[i](p->executor, (size_t)p->index1[i], p->handles[i], a);
        if (rc == 0 && p->set2[i] != NULL) rc = p->set2[i](p->executor, (size_t)p->index2[i], p->handles[i], a);
        if (rc != 0) {
            p->failed = i;
            return rc;
        }
        p->bound[i] = addrs[i];
    }
    p->failed = p->n;
    return p->launch(p->workspace, p->workspace_size, p->executor, stream_handle);
}

static PyObject *plan_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    PlanBase *p = (PlanBase *)self;
    if (!p->ready || p->busy || closing || (kwargs != NULL && PyDict_GET_SIZE(kwargs) != 0) || p->stream == NULL)
        return call_slow(self, args, kwargs);
    Py_ssize_t nargs = PyTuple_GET_SIZE(args);
    if (nargs != 0 && nargs != p->n) return call_slow(self, args, kwargs);
    uint64_t addrs[MAX_SLOTS];
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *t = PyTuple_GET_ITEM(args, i);
        if (t == Py_None && PyTuple_GET_ITEM(p->keys, i) == Py_None) {
            addrs[i] = 0;               /* an absent optional tensor stays absent */
            continue;
        }
        if (Py_TYPE(t) != tensor_type) return call_slow(self, args, kwargs);
        PyObject *key = SLOT(t, S_KEY), *mem = SLOT(t, S_MEM), *ptr = SLOT(t, S_PTR);
        if (key == NULL || key != PyTuple_GET_ITEM(p->keys, i) || mem == NULL || ptr == NULL)
            return call_slow(self, args, kwargs);
        PyObject *streams = SLOT(mem, S_STREAMS);
        if (streams == NULL || !PyList_CheckExact(streams) || PyList_GET_SIZE(streams) == 0 ||
            PyList_GET_ITEM(streams, 0) != p->stream)
            return call_slow(self, args, kwargs);
        addrs[i] = PyLong_AsUnsignedLongLong(ptr);
        if (addrs[i] == (uint64_t)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            return call_slow(self, args, kwargs);
        }
    }
    if (!thread_is_bound(p)) return call_slow(self, args, kwargs);

    /* Accepted: bind the new tensors (keeps their memory alive while the executor points at it).
     * The tensors they replace are released after the launch: a release may run Python code
     * (finalizers), which could let another thread in halfway through. */
    PyObject *unbound[MAX_SLOTS];
    if (PyList_GET_SIZE(p->objs) < nargs) return call_slow(self, args, kwargs);
    for (Py_ssize_t i = 0; i < nargs; i++) {
        PyObject *t = PyTuple_GET_ITEM(args, i);
        unbound[i] = PyList_GET_ITEM(p->objs, i);
        PyList_SET_ITEM(p->objs, i, Py_NewRef(t));
    }
    int32_t rc = repoint_and_launch(p, addrs, nargs, p->stream_handle);
    for (Py_ssize_t i = 0; i < nargs; i++) Py_XDECREF(unbound[i]);
    if (rc != 0) {
        p->status = rc;
        PyObject *result = PyObject_CallMethod(self, "_raise_failure", "i", (int)rc);
        Py_XDECREF(result);
        return NULL;
    }
    if (p->n_out == 1) {
        PyObject *o = PyList_GET_ITEM(p->objs, p->out_index[0]);
        Py_INCREF(o);
        return o;
    }
    PyObject *tuple = PyTuple_New(p->n_out);
    if (tuple == NULL) return NULL;
    for (Py_ssize_t k = 0; k < p->n_out; k++) {
        PyObject *o = PyList_GET_ITEM(p->objs, p->out_index[k]);
        Py_INCREF(o);
        PyTuple_SET_ITEM(tuple, k, o);
    }
    return tuple;
}

static uint64_t as_u64(PyObject *seq, Py_ssize_t i) {
    PyObject *v = PySequence_GetItem(seq, i);
    if (v == NULL) return 0;
    uint64_t out = v == Py_None ? 0 : PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    return out;
}

/* _fast_setup(executor, launch, workspace, workspace_size, stream, stream_handle, tls, state, keys,
 *             objs, handles, set1, index1, set2, index2, bound, out_index, wanted_address)
 * wanted_address: buffer of Python's array('Q') of per-slot addresses, which C keeps up to date so
 * that the Python path never re-points a slot to an address C has replaced. */
static PyObject *plan_setup(PyObject *self, PyObject *args) {
    PlanBase *p = (PlanBase *)self;
    unsigned long long executor, launch, workspace, ws_size, stream_handle, wanted;
    PyObject *stream, *tls, *state, *keys, *objs, *handles, *set1, *index1, *set2, *index2, *bound, *outs;
    if (!PyArg_ParseTuple(args, "KKKKOKOOO!O!OOOOOOOK", &executor, &launch, &workspace, &ws_size, &stream,
                          &stream_handle, &tls, &state, &PyTuple_Type, &keys, &PyList_Type, &objs, &handles,
                          &set1, &index1, &set2, &index2, &bound, &outs, &wanted))
        return NULL;
    if (wanted == 0) {
        PyErr_SetString(PyExc_ValueError, "no address buffer");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    if (n > MAX_SLOTS || PyList_GET_SIZE(objs) != n || PySequence_Size(outs) > MAX_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "too many tensor slots for the accelerator");
        return NULL;
    }
    p->n = n;
    p->executor = (void *)(uintptr_t)executor;
    p->launch = (launch_fn)(uintptr_t)launch;
    p->workspace = (void *)(uintptr_t)workspace;
    p->workspace_size = ws_size;
    p->stream_handle = (void *)(uintptr_t)stream_handle;
    p->wanted = (uint64_t *)(uintptr_t)wanted;
    for (Py_ssize_t i = 0; i < n; i++) {
        p->handles[i] = (void *)(uintptr_t)as_u64(handles, i);
        p->set1[i] = (set_addr_fn)(uintptr_t)as_u64(set1, i);
        p->index1[i] = as_u64(index1, i);
        p->set2[i] = (set_addr_fn)(uintptr_t)as_u64(set2, i);
        p->index2[i] = as_u64(index2, i);
        p->bound[i] = as_u64(bound, i);
    }
    p->n_out = PySequence_Size(outs);
    for (Py_ssize_t k = 0; k < p->n_out; k++) p->out_index[k] = (Py_ssize_t)as_u64(outs, k);
    if (PyErr_Occurred()) return NULL;
    Py_XSETREF(p->stream, stream == Py_None ? NULL : Py_NewRef(stream));
    Py_XSETREF(p->tls, Py_NewRef(tls));
    Py_XSETREF(p->state, Py_NewRef(state));
    Py_XSETREF(p->keys, Py_NewRef(keys));
    Py_XSETREF(p->objs, Py_NewRef(objs));
    p->ready = 1;
    Py_RETURN_NONE;
}

/* Is the memory `mem` ordered on `stream` (noted there: note_stream put it in its list)? */
static int used_on(PyObject *mem, PyObject *stream) {
    PyObject *streams = SLOT(mem, S_STREAMS);
    if (streams == NULL || !PyList_CheckExact(streams)) return 0;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(streams); j++)
        if (PyList_GET_ITEM(streams, j) == stream) return 1;
    return 0;
}

/* Is `key` the layout key `want`: the same interned object, or (after the intern table was emptied)
 * an equal tuple of ints and tuples, which compares without running Python code? */
static int same_key(PyObject *key, PyObject *want) {
    if (key == want) return 1;
    if (key == NULL || !PyTuple_CheckExact(key) || !PyTuple_CheckExact(want)) return 0;
    int eq = PyObject_RichCompareBool(key, want, Py_EQ);
    if (eq < 0) PyErr_Clear();
    return eq == 1;
}

/* Is output tensor `t` one the plan may write: of the prepared layout, open, and its memory ordered
 * on `stream`? Ownership is not decided here: the caller made `t` for this call alone (a fresh
 * block of the stream's pool), so nothing else can hold it yet. */
static int output_ok(PyObject *t, PyObject *key, PyObject *stream) {
    if (Py_TYPE(t) != tensor_type) return 0;
    PyObject *k = SLOT(t, S_KEY), *mem = SLOT(t, S_MEM), *ptr = SLOT(t, S_PTR);
    if (!same_key(k, key) || mem == NULL || ptr == NULL || !PyLong_CheckExact(ptr)) return 0;
    PyObject *streams = SLOT(mem, S_STREAMS);
    return streams != NULL && PyList_CheckExact(streams) && PyList_GET_SIZE(streams) >= 1 &&
           PyList_GET_ITEM(streams, 0) == stream;
}

/* _fast_friendly(inputs, outs, stream) -- a friendly call's launch on a cached plan (keep_refs=False),
 * atomically under the GIL (no Python code runs between the checks and the queued launch):
 *   inputs  tuple of the first len(inputs) slots: a Tensor of the prepared layout used on `stream`,
 *           or None where the plan has no tensor;
 *   outs    list of the remaining slots' Tensors, made for this call from the stream's pool
 *           (output_ok); or ints: addresses of host memory (torch CPU outputs on the emulator) the
 *           caller registered and keeps until the stream ran;
 *   stream  the Stream (its handle is the plan's; its device's binding must be the thread's).
 * Returns the tuple of outs (the launch is queued), or None when Python must take the call (nothing
 * was done); a failed setter or launch raises through _raise_failure. */
static PyObject *plan_friendly(PyObject *self, PyObject *args) {
    PlanBase *p = (PlanBase *)self;
    PyObject *inputs, *outs, *stream;
    if (!PyArg_ParseTuple(args, "O!O!O", &PyTuple_Type, &inputs, &PyList_Type, &outs, &stream)) return NULL;
    Py_ssize_t n_in = PyTuple_GET_SIZE(inputs), n_out = PyList_GET_SIZE(outs);
    if (!p->ready || p->busy || closing || p->state == NULL || n_in + n_out != p->n) Py_RETURN_NONE;
    uint64_t addrs[MAX_SLOTS];
    for (Py_ssize_t i = 0; i < n_in; i++) {
        PyObject *t = PyTuple_GET_ITEM(inputs, i), *want = PyTuple_GET_ITEM(p->keys, i);
        if (t == Py_None) {
            if (want != Py_None) Py_RETURN_NONE;
            addrs[i] = 0;
            continue;
        }
        if (Py_TYPE(t) != tensor_type) Py_RETURN_NONE;
        PyObject *key = SLOT(t, S_KEY), *mem = SLOT(t, S_MEM), *ptr = SLOT(t, S_PTR);
        if (!same_key(key, want) || mem == NULL || ptr == NULL || !PyLong_CheckExact(ptr) ||
            !used_on(mem, stream))
            Py_RETURN_NONE;
        addrs[i] = PyLong_AsUnsignedLongLong(ptr);
        if (addrs[i] == (uint64_t)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    for (Py_ssize_t k = 0; k < n_out; k++) {
        PyObject *t = PyList_GET_ITEM(outs, k);
        if (PyLong_CheckExact(t)) {     /* host memory the caller registered and keeps until the run */
            addrs[n_in + k] = PyLong_AsUnsignedLongLong(t);
            if (addrs[n_in + k] == 0 || (addrs[n_in + k] == (uint64_t)-1 && PyErr_Occurred())) {
                PyErr_Clear();
                Py_RETURN_NONE;
            }
            continue;
        }
        if (!output_ok(t, PyTuple_GET_ITEM(p->keys, n_in + k), stream)) Py_RETURN_NONE;
        addrs[n_in + k] = PyLong_AsUnsignedLongLong(SLOT(t, S_PTR));
        if (addrs[n_in + k] == (uint64_t)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    }
    if (!thread_is_bound(p)) Py_RETURN_NONE;
    int32_t rc = repoint_and_launch(p, addrs, p->n, p->stream_handle);
    if (rc != 0) {
        p->status = rc;
        PyObject *result = PyObject_CallMethod(self, "_raise_failure", "i", (int)rc);
        Py_XDECREF(result);
        return NULL;
    }
    return PyList_AsTuple(outs);
}

/* Python's slow path re-pointed slot i itself: keep the C copy of the bound address in step. */
static PyObject *plan_set_bound(PyObject *self, PyObject *args) {
    PlanBase *p = (PlanBase *)self;
    Py_ssize_t i;
    unsigned long long addr;
    if (!PyArg_ParseTuple(args, "nK", &i, &addr)) return NULL;
    if (i < 0 || i >= p->n) {
        PyErr_SetString(PyExc_IndexError, "slot out of range");
        return NULL;
    }
    p->bound[i] = addr;
    Py_RETURN_NONE;
}

static PyObject *plan_get_bound(PyObject *self, PyObject *args) {
    PlanBase *p = (PlanBase *)self;
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, "n", &i)) return NULL;
    if (i < 0 || i >= p->n) {
        PyErr_SetString(PyExc_IndexError, "slot out of range");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(p->bound[i]);
}

static PyObject *plan_set_workspace(PyObject *self, PyObject *args) {
    unsigned long long ws;
    if (!PyArg_ParseTuple(args, "K", &ws)) return NULL;
    ((PlanBase *)self)->workspace = (void *)(uintptr_t)ws;
    Py_RETURN_NONE;
}

static PyObject *plan_busy(PyObject *self, PyObject *args) {
    int flag;
    if (!PyArg_ParseTuple(args, "p", &flag)) return NULL;
    ((PlanBase *)self)->busy = flag;
    Py_RETURN_NONE;
}

static PyObject *plan_disable(PyObject *self, PyObject *unused) {
    PlanBase *p = (PlanBase *)self;
    p->ready = 0;
    Py_CLEAR(p->stream);
    Py_CLEAR(p->state);
    Py_RETURN_NONE;
}

static PyObject *plan_failed(PyObject *self, void *closure) {
    return PyLong_FromSsize_t(((PlanBase *)self)->failed);
}

/* PlanBase is a static type: heap subclasses visit their own type (subtype_traverse). */
static int plan_traverse(PlanBase *p, visitproc visit, void *arg) {
    Py_VISIT(p->stream);
    Py_VISIT(p->tls);
    Py_VISIT(p->state);
    Py_VISIT(p->keys);
    Py_VISIT(p->objs);
    return 0;
}

static int plan_clear(PlanBase *p) {
    p->ready = 0;
    Py_CLEAR(p->stream);
    Py_CLEAR(p->tls);
    Py_CLEAR(p->state);
    Py_CLEAR(p->keys);
    Py_CLEAR(p->objs);
    return 0;
}

/* Heap subclasses come here through subtype_dealloc, which clears weak references and drops
 * the reference to their type itself. */
static void plan_dealloc(PlanBase *p) {
    PyObject_GC_UnTrack(p);
    plan_clear(p);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMethodDef plan_methods[] = {
    {"_fast_setup", plan_setup, METH_VARARGS, "Fill the C state of the plan."},
    {"_fast_set_bound", plan_set_bound, METH_VARARGS, "Record an address re-pointed from Python."},
    {"_fast_friendly", plan_friendly, METH_VARARGS, "A friendly call's launch on a cached plan."},
    {"_fast_get_bound", plan_get_bound, METH_VARARGS, "The address slot i holds."},
    {"_fast_set_workspace", plan_set_workspace, METH_VARARGS, "Change the workspace pointer."},
    {"_fast_disable", plan_disable, METH_NOARGS, "Stop using the C path (closed plans)."},
    {"_fast_busy", plan_busy, METH_VARARGS, "Send calls to Python while its path holds the plan."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef plan_getset[] = {
    {"_fast_failed", plan_failed, NULL, "slot whose setter failed, or the slot count for the launch", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PlanBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_pyaclnn_fastcall.PlanBase",
    .tp_basicsize = sizeof(PlanBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "C base of accelerated prepared calls",
    .tp_new = PyType_GenericNew,
    .tp_call = plan_call,
    .tp_traverse = (traverseproc)plan_traverse,
    .tp_clear = (inquiry)plan_clear,
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_methods = plan_methods,
    .tp_getset = plan_getset,
};

/* configure(Tensor, Memory): the member descriptors of the slots plan_call reads. */
static PyObject *configure(PyObject *mod, PyObject *args) {
    PyObject *tensor, *memory;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &tensor, &PyType_Type, &memory)) return NULL;
    static const char *names[N_SLOTS_READ] = {"_key", "_ptr", "_mem", "streams"};
    PyObject *found[N_SLOTS_READ];
    for (int k = 0; k < N_SLOTS_READ; k++) {
        found[k] = PyObject_GetAttrString(k == S_STREAMS ? memory : tensor, names[k]);
        if (found[k] == NULL) {
            while (k-- > 0) Py_DECREF(found[k]);
            return NULL;
        }
    }
    /* member descriptors only: their __get__ runs no Python code (a property's would) */
    PyTypeObject *dtype = Py_TYPE(found[0]);
    descrgetfunc get = (descrgetfunc)PyType_GetSlot(dtype, Py_tp_descr_get);
    int ok = get != NULL && dtype == &PyMemberDescr_Type;
    for (int k = 0; k < N_SLOTS_READ; k++) ok = ok && Py_TYPE(found[k]) == dtype;
    if (!ok) {
        for (int k = 0; k < N_SLOTS_READ; k++) Py_DECREF(found[k]);
        return PyErr_Format(PyExc_TypeError, "_key, _ptr, _mem and streams must be __slots__ members");
    }
    for (int k = 0; k < N_SLOTS_READ; k++) Py_XSETREF(slot_descr[k], found[k]);
    slot_get = get;
    Py_XSETREF(tensor_type, (PyTypeObject *)Py_NewRef(tensor));
    Py_RETURN_NONE;
}

static PyObject *abi(PyObject *mod, PyObject *unused) { return PyLong_FromLong(9); }

/* The emulator's host-memory registration (pyaclnn_stub_mem_register / _unregister), set by
 * set_host_fns; NULL on a real toolkit. */
typedef int (*mem_register_fn)(void *p, size_t nbytes);
typedef int (*mem_unregister_fn)(void *p);
static mem_register_fn mem_register;
static mem_unregister_fn mem_unregister;

static PyObject *set_host_fns(PyObject *mod, PyObject *args) {
    unsigned long long reg, unreg;
    if (!PyArg_ParseTuple(args, "KK", &reg, &unreg)) return NULL;
    mem_register = (mem_register_fn)(uintptr_t)reg;
    mem_unregister = (mem_unregister_fn)(uintptr_t)unreg;
    Py_RETURN_NONE;
}

/* register_ranges(addrs, nbytes) -> bool: register each fresh host range [addrs[i], +nbytes[i]) with
 * the emulator, all or none (a refused one -- it overlaps memory the emulator knows -- undoes the
 * others: False). Under the GIL, so no Python thread sees part of it. For memory nobody else can
 * know yet (a call's new torch outputs); unregister_ranges releases it after the stream ran. */
static PyObject *register_ranges(PyObject *mod, PyObject *args) {
    PyObject *addrs, *sizes;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &addrs, &PyList_Type, &sizes)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(addrs);
    if (mem_register == NULL || mem_unregister == NULL || PyList_GET_SIZE(sizes) != n) Py_RETURN_FALSE;
    Py_ssize_t done = 0;
    for (; done < n; done++) {
        unsigned long long a = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(addrs, done));
        unsigned long long b = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(sizes, done));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            break;
        }
        if (a == 0 || b == 0 || mem_register((void *)(uintptr_t)a, (size_t)b) != 0) break;
    }
    if (done == n) Py_RETURN_TRUE;
    while (done-- > 0) mem_unregister((void *)(uintptr_t)PyLong_AsUnsignedLongLong(PyList_GET_ITEM(addrs, done)));
    Py_RETURN_FALSE;
}

/* unregister_ranges(addrs, flag): release what register_ranges registered, if `flag` (the list its
 * caller filled with register_ranges' result) ends in True; the flag is emptied in the same call, so
 * a caller interrupted around it neither leaves the ranges registered nor releases them twice. */
static PyObject *unregister_ranges(PyObject *mod, PyObject *args) {
    PyObject *addrs, *flag;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &addrs, &PyList_Type, &flag)) return NULL;
    Py_ssize_t nflag = PyList_GET_SIZE(flag);
    if (nflag == 0 || PyList_GET_ITEM(flag, nflag - 1) != Py_True) Py_RETURN_NONE;
    if (PyList_SetSlice(flag, 0, nflag, NULL) < 0) return NULL;
    if (mem_unregister == NULL) Py_RETURN_NONE;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(addrs); i++) {
        unsigned long long a = PyLong_AsUnsignedLongLong(PyList_GET_ITEM(addrs, i));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            continue;
        }
        mem_unregister((void *)(uintptr_t)a);
    }
    Py_RETURN_NONE;
}

/* ---- output sets of a cached friendly plan (pyaclnn.tensor.set_maker) -------------------------
 * Public C API only: objects come from their type's tp_alloc (PyType_GetSlot), and their __slots__
 * are set through the member descriptors' own tp_descr_set, as `obj.name = value` would. */

/* SetLease: what the parts of one set share as their `whole` -- the set's hold on its pool buffer.
 * Its deallocation (every part gone) appends the buffer to the set kind's free list: plain C, so no
 * Python code runs and no interrupt can land between the lease's death and the hand-over; release()
 * (every part closed) does the same at once. Not GC-tracked: it refers to a buffer and a list only,
 * neither of which can refer back to it. */
typedef struct {
    PyObject_HEAD
    PyObject *buf;                    /* the DeviceBuffer, until handed to `free`                */
    PyObject *free;                   /* the set kind's free list                                */
    Py_ssize_t views;                 /* open parts (MemoryPart.release counts down)             */
} SetLease;

static PyTypeObject *lease_type;

static void lease_hand_over(SetLease *l) {
    PyObject *buf = l->buf;
    l->buf = NULL;
    if (buf == NULL) return;
    if (l->free != NULL && PyList_Check(l->free) && PyList_Append(l->free, buf) < 0)
        PyErr_Clear();                /* (not kept: the buffer's own finalizer gives it to the pool) */
    Py_DECREF(buf);
}

static void lease_dealloc(SetLease *l) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);       /* (deallocation may run while an exception is set)        */
    lease_hand_over(l);
    Py_CLEAR(l->free);
    PyErr_Restore(et, ev, tb);
    PyTypeObject *tp = Py_TYPE(l);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(l);
    Py_DECREF(tp);
}

static PyObject *lease_release(PyObject *self, PyObject *unused) {
    lease_hand_over((SetLease *)self);
    Py_RETURN_NONE;
}

static PyObject *lease_get_buf(PyObject *self, void *closure) {
    PyObject *b = ((SetLease *)self)->buf;
    return Py_NewRef(b ? b : Py_None);
}

static PyMethodDef lease_methods[] = {
    {"release", lease_release, METH_NOARGS, "Every part is closed: the buffer goes to the free list now."},
    {NULL, NULL, 0, NULL},
};
static PyMemberDef lease_members[] = {
    {"views", T_PYSSIZET, offsetof(SetLease, views), 0, "open parts"},
    {NULL, 0, 0, 0, NULL},
};
static PyGetSetDef lease_getset[] = {
    {"buf", lease_get_buf, NULL, "the buffer (None once handed to the free list)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};
static PyType_Slot lease_slots[] = {
    {Py_tp_dealloc, lease_dealloc},
    {Py_tp_methods, lease_methods},
    {Py_tp_members, lease_members},
    {Py_tp_getset, lease_getset},
    {Py_tp_doc, "A set's hold on its pool buffer (see pyaclnn.runtime.set_blocks)."},
    {0, NULL},
};
static PyType_Spec lease_spec = {
    "_pyaclnn_fastcall.SetLease", sizeof(SetLease), 0, Py_TPFLAGS_DEFAULT, lease_slots,
};

/* The slots make_set sets, in this order (pyaclnn.tensor.set_maker passes their descriptors). */
enum { P_PTR, P_NBYTES, P_STREAMS, P_FINALIZER, P_VIEWS, P_WHOLE, N_PART };
enum { T_SHAPE, T_STRIDES, T_DTYPE, T_FORMAT, T_INFO, T_SDIMS, T_KEY, T_OFFSET, T_HANDLE, T_HANDLE_FIN,
       T_PTR, T_MEM, N_TENSOR };

static PyObject *new_of(PyObject *type) {
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)type, Py_tp_alloc);
    return alloc((PyTypeObject *)type, 0);
}

static SetLease *lease_of(PyObject *buf, PyObject *free, Py_ssize_t views) {
    SetLease *l = (SetLease *)new_of((PyObject *)lease_type);
    if (l == NULL) return NULL;
    l->buf = Py_NewRef(buf);
    l->free = Py_NewRef(free);
    l->views = views;
    return l;
}

/* new_lease(buf, free, views) -> SetLease */
static PyObject *new_lease(PyObject *mod, PyObject *args) {
    PyObject *buf, *free;
    Py_ssize_t views;
    if (!PyArg_ParseTuple(args, "OO!n", &buf, &PyList_Type, &free, &views)) return NULL;
    return (PyObject *)lease_of(buf, free, views);
}

/* The outputs of one set over the block at `base` (see make_set); spec checked here. */
static PyObject *build_set(PyObject *spec, unsigned long long b, PyObject *streams, PyObject *whole) {
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 5) return PyErr_Format(PyExc_ValueError, "bad set spec");
    PyObject *ttype = PyTuple_GET_ITEM(spec, 0), *ptype = PyTuple_GET_ITEM(spec, 1);
    PyObject *tdesc = PyTuple_GET_ITEM(spec, 2), *pdesc = PyTuple_GET_ITEM(spec, 3);
    PyObject *layouts = PyTuple_GET_ITEM(spec, 4);
    if (!PyType_Check(ttype) || !PyType_Check(ptype) || !PyTuple_Check(tdesc) || PyTuple_GET_SIZE(tdesc) != N_TENSOR ||
        !PyTuple_Check(pdesc) || PyTuple_GET_SIZE(pdesc) != N_PART || !PyTuple_Check(layouts))
        return PyErr_Format(PyExc_ValueError, "bad set spec");
    /* Every slot is set through its descriptor's __set__ (one type: the member descriptors'). */
    PyTypeObject *dtype = Py_TYPE(PyTuple_GET_ITEM(tdesc, 0));
    for (int k = 0; k < N_TENSOR; k++)
        if (Py_TYPE(PyTuple_GET_ITEM(tdesc, k)) != dtype) return PyErr_Format(PyExc_ValueError, "bad set spec");
    for (int k = 0; k < N_PART; k++)
        if (Py_TYPE(PyTuple_GET_ITEM(pdesc, k)) != dtype) return PyErr_Format(PyExc_ValueError, "bad set spec");
    descrsetfunc set = (descrsetfunc)PyType_GetSlot(dtype, Py_tp_descr_set);
    allocfunc talloc = (allocfunc)PyType_GetSlot((PyTypeObject *)ttype, Py_tp_alloc);
    allocfunc palloc = (allocfunc)PyType_GetSlot((PyTypeObject *)ptype, Py_tp_alloc);
    if (set == NULL || talloc == NULL || palloc == NULL) return PyErr_Format(PyExc_ValueError, "bad set spec");
#define PSET(k, obj, v) set(PyTuple_GET_ITEM(pdesc, (k)), (obj), (v))
#define TSET(k, obj, v) set(PyTuple_GET_ITEM(tdesc, (k)), (obj), (v))
    Py_ssize_t n = PyTuple_GET_SIZE(layouts);
    PyObject *outs = PyList_New(n), *zero = PyLong_FromLong(0), *one = PyLong_FromLong(1);
    if (outs == NULL || zero == NULL || one == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *lay = PyTuple_GET_ITEM(layouts, i);
        if (!PyTuple_Check(lay) || PyTuple_GET_SIZE(lay) != 9) {
            PyErr_Format(PyExc_ValueError, "bad set layout");
            goto fail;
        }
        Py_ssize_t off = PyLong_AsSsize_t(PyTuple_GET_ITEM(lay, 0));
        if (off == -1 && PyErr_Occurred()) goto fail;
        PyObject *ptr = PyLong_FromUnsignedLongLong(b + (unsigned long long)off);
        if (ptr == NULL) goto fail;
        PyObject *part = palloc((PyTypeObject *)ptype, 0);
        if (part == NULL) {
            Py_DECREF(ptr);
            goto fail;
        }
        int rc = PSET(P_PTR, part, ptr) || PSET(P_NBYTES, part, PyTuple_GET_ITEM(lay, 1)) ||
                 PSET(P_STREAMS, part, streams) || PSET(P_FINALIZER, part, Py_None) || PSET(P_VIEWS, part, one) ||
                 PSET(P_WHOLE, part, whole);
        PyObject *t = rc ? NULL : talloc((PyTypeObject *)ttype, 0);
        if (t == NULL) {
            Py_DECREF(part);
            Py_DECREF(ptr);
            goto fail;
        }
        PyList_SET_ITEM(outs, i, t);            /* (owned by the list from here) */
        for (int k = 0; k < 7 && rc == 0; k++) rc = TSET(T_SHAPE + k, t, PyTuple_GET_ITEM(lay, 2 + k));
        rc = rc || TSET(T_OFFSET, t, zero) || TSET(T_HANDLE, t, zero) || TSET(T_HANDLE_FIN, t, Py_None) ||
             TSET(T_PTR, t, ptr) || TSET(T_MEM, t, part);
        Py_DECREF(part);
        Py_DECREF(ptr);
        if (rc) goto fail;
    }
#undef PSET
#undef TSET
    Py_DECREF(zero);
    Py_DECREF(one);
    return outs;
fail:
    Py_XDECREF(outs);
    Py_XDECREF(zero);
    Py_XDECREF(one);
    return NULL;
}

/* make_set(spec, base, streams, whole) -> [Tensor, ...]: a set's outputs over one block at address
 * `base`, each part of it a MemoryPart whose `whole` is `whole`, all sharing the list `streams`.
 * spec = (Tensor, MemoryPart, tensor descriptors, part descriptors, layouts), a layout being
 * (offset, nbytes, shape, strides, acl_dtype, format, info, storage_dims, key). What exists when an
 * error cuts it short is dropped (the parts' `whole` then dies with them). */
static PyObject *make_set(PyObject *mod, PyObject *args) {
    PyObject *spec, *base, *streams, *whole;
    if (!PyArg_ParseTuple(args, "O!O!O!O", &PyTuple_Type, &spec, &PyLong_Type, &base, &PyList_Type, &streams,
                          &whole))
        return NULL;
    unsigned long long b = PyLong_AsUnsignedLongLong(base);
    if (b == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    return build_set(spec, b, streams, whole);
}

static PyObject *str_streams, *str_ptr;

/* make_kept(spec, free, home, views) -> [Tensor, ...] or None: a set over the last buffer of the
 * free list `free` when that buffer was used on `home` alone (the common case: nothing to wait for),
 * under a new lease of `views` parts; None (nothing taken) otherwise: Python's SetBlocks.take then
 * decides. One C call: no Python code runs, so an interrupt cannot split the hand-over. */
static PyObject *make_kept(PyObject *mod, PyObject *args) {
    PyObject *spec, *free, *home;
    Py_ssize_t views;
    if (!PyArg_ParseTuple(args, "O!O!On", &PyTuple_Type, &spec, &PyList_Type, &free, &home, &views)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(free);
    if (n == 0) Py_RETURN_NONE;
    PyObject *buf = Py_NewRef(PyList_GET_ITEM(free, n - 1));
    PyObject *streams = PyObject_GetAttr(buf, str_streams), *ptr = NULL, *outs = NULL;
    SetLease *lease = NULL;
    if (streams == NULL || !PyList_CheckExact(streams) || PyList_GET_SIZE(streams) != 1 ||
        PyList_GET_ITEM(streams, 0) != home)
        goto decline;
    ptr = PyObject_GetAttr(buf, str_ptr);
    if (ptr == NULL || !PyLong_CheckExact(ptr)) goto decline;
    unsigned long long b = PyLong_AsUnsignedLongLong(ptr);
    if (b == (unsigned long long)-1 && PyErr_Occurred()) goto decline;
    if (PyList_SetSlice(free, n - 1, n, NULL) < 0) goto fail;      /* (taken: `buf` holds it) */
    lease = lease_of(buf, free, views);
    if (lease == NULL) {
        if (PyList_Append(free, buf) < 0) PyErr_Clear();    /* (or its own finalizer frees it) */
        goto fail;
    }
    outs = build_set(spec, b, streams, (PyObject *)lease);
    /* (on failure the lease's death puts the buffer back) */
    goto done;
decline:
    PyErr_Clear();
    outs = Py_NewRef(Py_None);
    goto done;
fail:
    outs = NULL;
done:
    Py_XDECREF((PyObject *)lease);
    Py_XDECREF(ptr);
    Py_XDECREF(streams);
    Py_DECREF(buf);
    return outs;
}

/* set_closing(): the interpreter is exiting (pyaclnn._shutdown): C paths launch nothing from now on. */
static PyObject *set_closing(PyObject *mod, PyObject *unused) {
    closing = 1;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"configure", configure, METH_VARARGS, "configure(Tensor, Memory)"},
    {"abi", abi, METH_NOARGS, "ABI version of this accelerator"},
    {"set_closing", set_closing, METH_NOARGS, "Refuse C launches from now on (interpreter exit)."},
    {"set_host_fns", set_host_fns, METH_VARARGS, "set_host_fns(register, unregister): the emulator's."},
    {"register_ranges", register_ranges, METH_VARARGS, "Register fresh host ranges, all or none."},
    {"unregister_ranges", unregister_ranges, METH_VARARGS, "Release ranges register_ranges registered."},
    {"new_lease", new_lease, METH_VARARGS, "new_lease(buf, free, views) -> SetLease"},
    {"make_set", make_set, METH_VARARGS, "make_set(spec, base, streams, whole) -> a set's new Tensors"},
    {"make_kept", make_kept, METH_VARARGS, "make_kept(spec, free, home, views) -> a set over a kept block, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_pyaclnn_fastcall", "Accelerator of pyaclnn prepared calls.", -1, module_methods,
};

PyMODINIT_FUNC PyInit__pyaclnn_fastcall(void) {
    if (PyType_Ready(&PlanBaseType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL) return NULL;
#ifdef Py_GIL_DISABLED
    /* Declared stance: this module's correctness rests on the GIL (a plan's check, re-point and launch run as one step under it), so a free-threaded
     * interpreter keeps the GIL enabled while it is loaded. */
    PyUnstable_Module_SetGIL(m, Py_MOD_GIL_USED);
#endif
    lease_type = (PyTypeObject *)PyType_FromSpec(&lease_spec);
    if (lease_type == NULL || PyModule_AddObject(m, "SetLease", Py_NewRef((PyObject *)lease_type)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    str_streams = PyUnicode_InternFromString("streams");
    str_ptr = PyUnicode_InternFromString("ptr");
    str_binding = PyUnicode_InternFromString("binding");
    str_call_slow = PyUnicode_InternFromString("_call_slow");
    Py_INCREF(&PlanBaseType);
    if (PyModule_AddObject(m, "PlanBase", (PyObject *)&PlanBaseType) < 0) {
        Py_DECREF(&PlanBaseType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
