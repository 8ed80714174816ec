/*
 * The NLL loss kernels' plan (nll_loss.c), shared with NLLLoss2d (nll_loss2d.c), which runs the same kernels over
 * self [N, C, H, W] seen as [N, H, W, C] (rows N * H * W).
 */
#ifndef PYACLNN_NLL_LOSS_H
#define PYACLNN_NLL_LOSS_H

#include <stdint.h>

typedef struct {
    int64_t reduction, ignore_index, rows, classes;
    int grad_per_row;   /* the backward's gradOutput has one element per row (reduction none) */
} nll_plan;

#endif
