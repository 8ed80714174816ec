"""ctypes spellings of the C typedefs used in the prototypes (acl_base_rt.h, acl_meta.h)."""
from ctypes import c_int, c_int32, c_uint16, c_void_p

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

_ENUM_ALIASES = {"aclDataType", "aclFormat", "aclrtMemcpyKind", "aclrtMemMallocPolicy", "aclrtMemAttr",
                 "aclrtRunMode", "aclMemType", "aclLogLevel", "aclrtStreamStatus", "aclrtEventStatus",
                 "aclrtEventRecordedStatus", "aclrtEventWaitStatus", "aclrtLastErrLevel"}
__all__ = [n for n in dir() if n.startswith("acl") and n not in _ENUM_ALIASES]
