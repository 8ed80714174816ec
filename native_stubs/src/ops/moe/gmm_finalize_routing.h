/*
 * What the GroupedMatmulFinalizeRouting entries share: the ND ones (gmm_finalize_routing.c) and the FRACTAL_NZ ones
 * (gmm_finalize_routing_nz.c) run the one op_api's checks.
 */
#ifndef PYACLNN_OPS_MOE_GMM_FINALIZE_ROUTING_H
#define PYACLNN_OPS_MOE_GMM_FINALIZE_ROUTING_H

#include "opbase/checks.h"
#include "opbase/opbase.h"

/* OP_CHECK_WRONG_DIMENSION (absent optional operands pass; the vendor's message names the expression) */
aclnnStatus gmmfr_rank(op_call *c, const char *name, const pyaclnn_stub_tensor *t, int64_t want);

#endif
