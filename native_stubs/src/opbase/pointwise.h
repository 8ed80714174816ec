/*
 * The pointwise operators on the elementwise engine (unary math, comparisons, pow, bitwise and,
 * activations and their backwards ...), following the vendor's op_api pattern (hicann/ops-math
 * math/<op>/op_api/aclnn_<op>.cpp, hicann/ops-nn activation/...): their definitions' ew_spec and the
 * steps pw_out / pw_pair_out (the compute dtype: promotion, integers to FLOAT for float-only kernels,
 * and the output dtype rule: castable / same dtype / BOOL / a float dtype, 161002), pw_plan (the
 * engine's plan; empty inputs give an executor that does nothing) and pw_attrs.
 */
#ifndef PYACLNN_EW_POINTWISE_H
#define PYACLNN_EW_POINTWISE_H

#include <stddef.h>

#include "aclnn/aclnn_base.h"
#include "opbase/checks.h"
#include "kernels/elementwise.h"

typedef enum {
    EW_PROMOTE_KEEP = 0,          /* compute in self's dtype                                      */
    EW_PROMOTE_INT_TO_FLOAT,      /* integral and BOOL inputs compute in FLOAT (Sqrt, Cos, ...)    */
    EW_PROMOTE_BOOL_INT64_TO_FLOAT, /* only BOOL and INT64 go to FLOAT (Exp)                       */
    EW_PROMOTE_INT_TO_OUT,        /* integral and BOOL inputs compute in out's dtype (Log1p)       */
    EW_PROMOTE_TO_OUT,            /* every input is cast to out's dtype and computed there (LogAddExp) */
} ew_promote_rule;

typedef enum {
    EW_OUT_CASTABLE = 0,          /* the result dtype can cast to out's (op::CanCast)              */
    EW_OUT_SAME_DTYPE,            /* out has self's dtype                                          */
    EW_OUT_FLOAT,                 /* out is FLOAT, FLOAT16, BF16 or DOUBLE, and castable            */
    EW_OUT_BOOL,                  /* out is BOOL                                                   */
    EW_OUT_COMPUTE,               /* out has the compute dtype: self's (float self) or the promoted
                                   * one (Log10: OP_CHECK_DTYPE_NOT_SAME / NOT_MATCH(out, FLOAT))     */
    EW_OUT_ANY,                   /* no rule: the result is cast to out, whatever it is (Atan2)     */
} ew_out_rule;

/* The pointwise families' data for one operator (an op_def spec: the `spec` of its definition). */
typedef struct {
    ew_opcode op;                 /* the engine's operation (EW_OP_FN: the functions below)       */
    ew_promote_rule promote;      /* compute dtype from the input dtype(s)                        */
    ew_out_rule out;              /* what out's dtype may be                                      */
    ew_fn f;                      /* EW_OP_FN: the element function for float compute dtypes      */
    ew_fn i;                      /* EW_OP_FN: ... for integral and BOOL ones (NULL: none)         */
    int bool_result;              /* EW_OP_FN: the result is BOOL                                 */
} ew_spec;

#endif
