/*
 * acl/acl_base.h: umbrella for the basic types and every ACL status code.
 *
 * In CANN 9.x this file only includes others (it also pulls in acl_base_mdl.h, the model API, which
 * the emulator does not provide). In CANN <= 8.x it held the contents of acl_base_rt.h itself.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

#include "acl_base_rt.h"
#include "error_codes/rt_error_codes.h"
#include "error_codes/ge_error_codes.h"

#endif  /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
