/*
 * aclnnop/aclnn_util.h: the export marker of operator functions (CANN hicann/opbase
 * include/aclnnop/aclnn_util.h).
 */
#ifndef OPBASE_COMMON_ACLNN_UTIL_H
#define OPBASE_COMMON_ACLNN_UTIL_H

#ifndef ACLNN_API
#define ACLNN_API __attribute__((visibility("default")))
#endif

#endif  /* OPBASE_COMMON_ACLNN_UTIL_H */
