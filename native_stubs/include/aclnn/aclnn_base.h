/*
 * aclnn/aclnn_base.h: the aclnn object API plus aclnn-only initialisation.
 *
 * CPU-emulator copy of CANN's header (hicann/opbase include/nnopbase/aclnn/aclnn_base.h). Operator
 * headers include this. aclnnInit/aclnnFinalize set up only the aclnn side; samples usually call
 * aclInit/aclFinalize instead, and calling both pairs is allowed.
 */
#ifndef OP_API_OP_API_COMMON_INC_EXTERNAL_ACLNN_BASE_H
#define OP_API_OP_API_COMMON_INC_EXTERNAL_ACLNN_BASE_H

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* configPath: optional JSON file, may be NULL. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnInit(const char *configPath);
ACL_FUNC_VISIBILITY aclnnStatus aclnnFinalize(void);

#ifdef __cplusplus
}
#endif

#endif  /* OP_API_OP_API_COMMON_INC_EXTERNAL_ACLNN_BASE_H */
