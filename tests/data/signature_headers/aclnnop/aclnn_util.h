/*
 * Test data for tests/test_signatures.py, written for pyaclnn: the export-macro header of a
 * toolkit (no operator in it).
 */
#ifndef TEST_ACLNN_UTIL_H
#define TEST_ACLNN_UTIL_H

#if defined(_WIN32)
#define ACLNN_API __declspec(dllexport)
#else
#define ACLNN_API __attribute__((visibility("default")))
#endif

/* A macro that looks like a prototype must not be taken for one. */
#define ACLNN_DECLARE_PHASE1(op) \
    ACLNN_API aclnnStatus op##GetWorkspaceSize(const aclTensor* self, uint64_t* workspaceSize, \
                                               aclOpExecutor** executor);

#endif
