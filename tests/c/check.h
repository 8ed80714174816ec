/*
 * CHECK(call) for the C drivers of the tests: a runtime or aclnn call that does not return 0 ends the driver
 * with status 2, naming the call, its code and aclGetRecentErrMsg() on stderr. Include after acl/acl.h.
 */
#ifndef PYACLNN_TESTS_C_CHECK_H
#define PYACLNN_TESTS_C_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                                       \
    do {                                                                                                  \
        int rc_ = (int)(call);                                                                            \
        if (rc_ != 0) {                                                                                   \
            const char *m_ = aclGetRecentErrMsg();                                                        \
            fprintf(stderr, "%s:%d: %s = %d\n%s\n", __FILE__, __LINE__, #call, rc_, m_ ? m_ : "");        \
            exit(2);                                                                                      \
        }                                                                                                 \
    } while (0)

#endif
