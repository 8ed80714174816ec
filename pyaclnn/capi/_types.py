"""ctypes spellings of the C typedefs used in the prototypes (acl_base_rt.h, acl_meta.h)."""
from ctypes import CFUNCTYPE, POINTER, Structure, Union, c_char, c_int, c_int32, c_size_t, c_uint8, c_uint16, \
    c_uint32, c_uint64, c_void_p

# Status types.
aclError = c_int
aclnnStatus = c_int32
aclFloat16 = c_uint16

# Runtime handles: typedef void*.
aclrtStream = c_void_p
aclrtEvent = c_void_p
aclrtContext = c_void_p

# Opaque aclnn objects are never dereferenced by the caller: their pointers travel as c_void_p.
aclTensor_p = aclScalar_p = aclIntArray_p = aclFloatArray_p = aclBoolArray_p = c_void_p
aclTensorList_p = aclScalarList_p = aclOpExecutor_p = aclDataBuffer_p = c_void_p

# Every C enum has the ABI size of int. These aliases serve the prototype table only: the public
# capi.aclDataType etc. are the IntEnum classes of _enums.py.
aclDataType = aclFormat = aclrtMemcpyKind = aclrtMemMallocPolicy = aclrtMemAttr = c_int
aclrtRunMode = aclMemType = aclLogLevel = aclrtStreamStatus = aclrtEventStatus = c_int
aclrtEventRecordedStatus = aclrtEventWaitStatus = aclrtLastErrLevel = c_int
aclrtCallbackBlockType = aclrtHostRegisterType = aclrtMallocAttrType = aclrtMemLocationType = c_int
aclrtCmoType = aclrtDevAttr = aclCannAttr = c_int

_ENUM_ALIASES = {"aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy", "aclrtMemAttr",
                 "aclrtRunMode", "aclMemType", "aclLogLevel", "aclrtStreamStatus", "aclrtEventStatus",
                 "aclrtEventRecordedStatus", "aclrtEventWaitStatus", "aclrtLastErrLevel", "aclrtCallbackBlockType",
                 "aclrtHostRegisterType", "aclrtMallocAttrType", "aclrtMemLocationType", "aclrtCmoType",
                 "aclrtDevAttr", "aclCannAttr"}



def _function_pointer(name: str, restype, *argtypes):
    """A CFUNCTYPE class that also takes None (C's NULL function pointer) as an argument, as C does."""
    base = CFUNCTYPE(restype, *argtypes)

    def from_param(cls, obj):
        return None if obj is None else base.from_param(obj)

    return type(name, (base,), {"_flags_": base._flags_, "_restype_": base._restype_,
                                "_argtypes_": base._argtypes_, "from_param": classmethod(from_param),
                                "__module__": __name__})


# Host functions and callbacks (acl_rt.h): void (*)(void *). Wrap a Python function as
# ``aclrtHostFunc(fn)`` and keep that object alive as long as the runtime may call it.
aclrtCallback = _function_pointer("aclrtCallback", None, c_void_p)
aclrtHostFunc = _function_pointer("aclrtHostFunc", None, c_void_p)


class aclrtMallocAttrValue(Union):
    """union aclrtMallocAttrValue (acl_rt.h)."""
    _fields_ = [("moduleId", c_uint16), ("deviceId", c_uint32), ("vaFlag", c_uint32), ("rsv", c_uint8 * 8)]


class aclrtMallocAttribute(Structure):
    """struct aclrtMallocAttribute (acl_rt.h); attr is an aclrtMallocAttrType."""
    _fields_ = [("attr", c_int), ("value", aclrtMallocAttrValue)]


class aclrtMallocConfig(Structure):
    """struct aclrtMallocConfig (acl_rt.h): aclrtMallocHostWithCfg's attributes."""
    _fields_ = [("attrs", POINTER(aclrtMallocAttribute)), ("numAttrs", c_size_t)]


class aclrtMemLocation(Structure):
    """struct aclrtMemLocation (acl_rt.h); type is an aclrtMemLocationType."""
    _fields_ = [("id", c_uint32), ("type", c_int)]


class aclrtPtrAttributes(Structure):
    """struct aclrtPtrAttributes (acl_rt.h): what aclrtPointerGetAttributes reports."""
    _fields_ = [("location", aclrtMemLocation), ("pageSize", c_uint32), ("rsv", c_uint32 * 4)]


class aclrtMemUsageInfo(Structure):
    """struct aclrtMemUsageInfo (acl_rt.h): one component of aclrtGetMemUsageInfo."""
    _fields_ = [("name", c_char * 32), ("curMemSize", c_uint64), ("memPeakSize", c_uint64),
                ("reserved", c_size_t * 8)]


class aclrtMemcpyBatchAttr(Structure):
    """struct aclrtMemcpyBatchAttr (acl_rt.h): the locations of a group of aclrtMemcpyBatch pairs."""
    _fields_ = [("dstLoc", aclrtMemLocation), ("srcLoc", aclrtMemLocation), ("rsv", c_uint8 * 16)]


class aclrtUuid(Structure):
    """struct aclrtUuid (acl_rt.h). ``bytes(u)`` gives all 16 bytes (the field reads stop at a NUL)."""
    _fields_ = [("bytes", c_char * 16)]
__all__ = [n for n in dir() if n.startswith("acl") and n not in _ENUM_ALIASES]
