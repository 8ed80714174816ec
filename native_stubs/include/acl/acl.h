/*
 * acl/acl.h: the header every CANN sample includes. It brings in the whole runtime API
 * (acl_rt.h) and, through it, the basic types and status codes (acl_base.h).
 *
 * CANN's acl.h also includes acl_op.h and acl_mdl.h (single-operator and model APIs); the emulator
 * does not implement those. The aclnn API lives in aclnn/ and aclnnop/ and is included separately.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_base.h"
#include "acl_rt.h"

#endif  /* INC_EXTERNAL_ACL_ACL_H_ */
