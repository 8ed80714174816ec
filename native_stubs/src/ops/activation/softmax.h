/*
 * The softmax operators' parameter block (softmax.c), also their definitions' spec type (softmax.toml):
 * the spec gives the operation, the softmax_dim step the dim of the call.
 */
#ifndef PYACLNN_OPS_SOFTMAX_H
#define PYACLNN_OPS_SOFTMAX_H

#include <stdint.h>

typedef enum { SM_SOFTMAX = 0, SM_SOFTMAX_BWD, SM_LOG_SOFTMAX, SM_LOG_SOFTMAX_BWD } sm_kind;

typedef struct {
    int64_t dim;       /* wrapped (0 for a 0-d tensor) */
    int backward;      /* inputs are (gradOutput, output) */
    sm_kind kind;
} sm_plan;

#endif
