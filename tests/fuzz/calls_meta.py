"""Fuzzed calls of the aclnn meta API (libnnopbase): tensors, scalars, arrays, lists, executors.

Arrays the C side reads (dims, strides, values, handle lists) are always real memory holding at
least the number of entries the call says, except where the stub checks a documented limit first
(a rank above 25 is refused before any dim is read).
"""
from __future__ import annotations

import ctypes

import adversarial as adv
from world import MAX_LIVE, World

_C = ctypes
MAX_RANK = 25


def int64_array(values) -> ctypes.Array:
    values = [((int(v) + (1 << 63)) % (1 << 64)) - (1 << 63) for v in values]   # wrap like C
    return (_C.c_int64 * max(len(values), 1))(*values)


def _dims_arg(w: World, dims: list[int]):
    """(pointer, count) for a dims array: usually exact, sometimes NULL or a count the stub must refuse."""
    r = w.rng.random()
    if r < 0.05:
        return None, len(dims)                         # NULL with a count: refused when count > 0
    if r < 0.08:
        return int64_array(dims + [1] * 32), w.rng.choice((26, 100, adv.UINT64_MAX, 1 << 32))
    return int64_array(dims), len(dims)


def create_tensor(w: World, dims=None, dtype=None, strides="auto", offset=None, fmt=None, storage=None,
                  data="any", exact: bool = False) -> int | None:
    """aclCreateTensor with the given or adversarial fields; registers the result in the model.

    ``exact``: pass the dims arrays as given (no NULL or oversized counts), for valid baselines.
    """
    rng = w.rng
    dims = adv.dims(rng) if dims is None else list(dims)
    dims_arg = (lambda d: (int64_array(d), len(d))) if exact else (lambda d: _dims_arg(w, d))  # noqa: E731
    dims_ptr, ndim = dims_arg(dims)
    if strides == "auto":
        strides = None if rng.random() < 0.3 else [rng.choice((1, 1, 0, -1, 2, adv.int64(rng))) for _ in dims]
    strides_ptr = None if strides is None else int64_array(list(strides) + [1] * max(0, min(ndim, 32) - len(strides)))
    storage = dims if storage is None else storage
    storage_ptr, storage_n = dims_arg(list(storage))
    data_ptr = w.device_address()[0] if data == "any" else data
    t = w.call("aclCreateTensor", dims_ptr, ndim, adv.enum(rng, range(0, 43)) if dtype is None else dtype,
               strides_ptr, adv.int64(rng) if offset is None else offset,
               adv.enum(rng, range(0, 50)) if fmt is None else fmt, storage_ptr, storage_n, data_ptr)
    if t:
        w.add("tensor", t)
    return t


def call_tensor_create(w: World) -> None:
    if len(w.live["tensor"]) >= MAX_LIVE["tensor"]:
        return call_tensor_destroy(w)
    create_tensor(w, offset=w.rng.choice((0, 0, 0, None)))


def call_tensor_init(w: World) -> None:
    rng = w.rng
    t, foreign = w.handle("tensor")
    dims = adv.dims(rng)
    dims_ptr, ndim = _dims_arg(w, dims)
    storage_ptr, storage_n = _dims_arg(w, dims)
    strides_ptr = None if rng.random() < 0.5 else int64_array([adv.int64(rng) for _ in dims] + [1] * 32)
    w.call("aclInitTensor", t, dims_ptr, ndim, adv.enum(rng, range(0, 43)), strides_ptr, adv.int64(rng),
           adv.enum(rng, range(0, 50)), storage_ptr, storage_n, w.device_address()[0], must_fail=foreign)


def call_tensor_destroy(w: World) -> None:
    t, foreign = w.handle("tensor", live_weight=0.7)
    owned = t in w.owned_tensors
    if w.call("aclDestroyTensor", t, must_fail=foreign or ("tensor owned by a list" if owned else None)) == 0 and t:
        w.kill("tensor", t)


def call_tensor_get(w: World) -> None:
    rng = w.rng
    t, foreign = w.handle("tensor")
    which = rng.randrange(8)
    if which < 3:
        name = ("aclGetViewShape", "aclGetViewStrides", "aclGetStorageShape")[which]
        arr = _C.POINTER(_C.c_int64)()
        n = _C.c_uint64()
        arr_arg = None if rng.random() < 0.1 else _C.byref(arr)
        n_arg = None if rng.random() < 0.1 else _C.byref(n)
        if w.call(name, t, arr_arg, n_arg, must_fail=foreign) == 0 and arr_arg is not None:
            w.free_c(_C.cast(arr, _C.c_void_p))
        return
    out = None if rng.random() < 0.1 else _C.byref(_C.c_int64())
    name = ("aclGetViewOffset", "aclGetFormat", "aclGetDataType", "aclGetRawTensorAddr",
            "aclSetRawTensorAddr")[which - 3]
    if name == "aclGetFormat" or name == "aclGetDataType":
        out = None if rng.random() < 0.1 else _C.byref(_C.c_int())
    elif name == "aclGetRawTensorAddr":
        out = None if rng.random() < 0.1 else _C.byref(_C.c_void_p())
    elif name == "aclSetRawTensorAddr":
        out = w.device_address()[0]
    w.call(name, t, out, must_fail=foreign)


# ---- scalars and arrays ---------------------------------------------------------------------------

_ARRAYS = {"int_array": ("aclCreateIntArray", _C.c_int64, "aclDestroyIntArray", "aclGetIntArraySize"),
           "float_array": ("aclCreateFloatArray", _C.c_float, "aclDestroyFloatArray", "aclGetFloatArraySize"),
           "bool_array": ("aclCreateBoolArray", _C.c_bool, "aclDestroyBoolArray", "aclGetBoolArraySize")}


def create_array(w: World, kind: str, values=None) -> int | None:
    rng = w.rng
    create, ctype, _, _ = _ARRAYS[kind]
    if values is None:
        values = [rng.random() < 0.5 if ctype is _C.c_bool else rng.randint(-9, 9) for _ in range(rng.randrange(0, 9))]
    if rng.random() < 0.1:
        arr, n = None, adv.uint64(rng)                  # NULL value: an empty array whatever the size
    else:
        arr = (ctype * max(len(values), 1))(*values)
        n = rng.randint(0, len(values))
    h = w.call(create, arr, n)
    if h:
        w.add(kind, h)
    return h


def call_array(w: World) -> None:
    rng = w.rng
    kind = rng.choice(list(_ARRAYS))
    _, _, destroy, get_size = _ARRAYS[kind]
    which = rng.randrange(3)
    if which == 0:
        if len(w.live[kind]) >= MAX_LIVE[kind]:
            which = 1
        else:
            create_array(w, kind)
            return
    h, foreign = w.handle(kind, live_weight=0.7)
    if which == 1:
        if w.call(destroy, h, must_fail=foreign) == 0 and h:
            w.kill(kind, h)
    else:
        w.call(get_size, h, None if rng.random() < 0.1 else _C.byref(_C.c_uint64()), must_fail=foreign)


def call_scalar(w: World) -> None:
    rng = w.rng
    if rng.random() < 0.5 and len(w.live["scalar"]) < MAX_LIVE["scalar"]:
        value = None if rng.random() < 0.1 else w.host_address()    # at least 16 readable bytes
        h = w.call("aclCreateScalar", value, adv.enum(rng, range(0, 43)))
        if h:
            w.add("scalar", h)
        return
    h, foreign = w.handle("scalar", live_weight=0.7)
    owned = "scalar owned by a list" if h in w.owned_scalars else None
    if w.call("aclDestroyScalar", h, must_fail=foreign or owned) == 0 and h:
        w.kill("scalar", h)


# ---- lists -----------------------------------------------------------------------------------------

def call_list(w: World) -> None:
    rng = w.rng
    list_kind, item_kind = rng.choice((("tensor_list", "tensor"), ("scalar_list", "scalar")))
    owned = w.owned_tensors if item_kind == "tensor" else w.owned_scalars
    if rng.random() < 0.5 and len(w.live[list_kind]) < MAX_LIVE[list_kind]:
        items, foreign = [], None
        for _ in range(rng.randrange(0, 5)):
            free = [h for h in w.live[item_kind] if h not in owned and h not in items]
            if free and rng.random() < 0.7:
                items.append(rng.choice(free))
                continue
            h, why = w.handle(item_kind, live_weight=0.3)
            if h in owned or (h is not None and h in items):
                why = why or f"{item_kind} that already belongs to a list"
            items.append(h)
            foreign = foreign or why
        if rng.random() < 0.05:
            arr, n = None, rng.choice((0, 1, adv.UINT64_MAX))
            foreign, items = None, []
        else:
            arr, n = (_C.c_void_p * max(len(items), 1))(*items), len(items)
        create = "aclCreateTensorList" if list_kind == "tensor_list" else "aclCreateScalarList"
        h = w.call(create, arr, n, must_fail=foreign if arr is not None else None)
        if h:
            w.add(list_kind, h)
            w.list_members[h] = [i for i in items if i]
            owned.update(w.list_members[h])
        return
    h, foreign = w.handle(list_kind, live_weight=0.7)
    if rng.random() < 0.3:
        name = "aclGetTensorListSize" if list_kind == "tensor_list" else "aclGetScalarListSize"
        w.call(name, h, None if rng.random() < 0.1 else _C.byref(_C.c_uint64()), must_fail=foreign)
        return
    destroy = "aclDestroyTensorList" if list_kind == "tensor_list" else "aclDestroyScalarList"
    if w.call(destroy, h, must_fail=foreign) == 0 and h:
        w.kill(list_kind, h)
        for item in w.list_members.pop(h, []):
            owned.discard(item)
            w.kill(item_kind, item)


# ---- executors (made by the operators, see calls_ops) --------------------------------------------

def call_executor(w: World) -> None:
    rng = w.rng
    e, e_foreign = w.handle("executor")
    which = rng.randrange(5)
    if which == 0:
        w.call("aclSetAclOpExecutorRepeatable", e, must_fail=e_foreign)
    elif which == 1:
        if w.call("aclDestroyAclOpExecutor", e, must_fail=e_foreign) == 0 and e:
            w.kill("executor", e)
    elif which == 2:
        t, t_foreign = w.handle("tensor")
        name = rng.choice(("aclSetInputTensorAddr", "aclSetOutputTensorAddr", "aclSetTensorAddr",
                           "AclSetInputTensorAddr", "AclSetOutputTensorAddr", "AclSetTensorAddr"))
        w.call(name, e, rng.choice((0, 1, 2, 4, 12, adv.uint64(rng))), t, w.device_address()[0],
               must_fail=e_foreign or t_foreign)
    elif which == 3:
        lst, l_foreign = w.handle("tensor_list")
        name = rng.choice(("aclSetDynamicInputTensorAddr", "aclSetDynamicOutputTensorAddr", "aclSetDynamicTensorAddr",
                           "AclSetDynamicTensorAddr"))
        w.call(name, e, rng.choice((0, 1, adv.uint64(rng))), rng.choice((0, 1, 3, adv.uint64(rng))), lst,
               w.device_address()[0], must_fail=l_foreign or e_foreign)
    else:
        which = rng.randrange(3)
        if which == 0:
            w.call("aclnnInit", rng.choice((None, b"", b"/nonexistent/config.json")))
        elif which == 1:
            w.call("aclnnFinalize")
        else:
            tensors = [w.handle("tensor")[0] for _ in range(4)]
            arr = None if rng.random() < 0.2 else (_C.c_void_p * 4)(*tensors)
            n_in = rng.randrange(0, 3)
            w.call("aclDumpOpTensors", rng.choice((b"Add", None)), rng.choice((b"add_1", None)), arr, n_in,
                   rng.randrange(0, 5 - n_in), w.handle("stream")[0])


GENERATORS = [
    (5, call_tensor_create), (1, call_tensor_init), (3, call_tensor_destroy), (4, call_tensor_get),
    (3, call_array), (1.5, call_scalar), (2, call_list), (3, call_executor),
]
