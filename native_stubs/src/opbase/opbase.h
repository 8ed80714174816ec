/*
 * The operator framework of libopapi: what a generated aclnnXxxGetWorkspaceSize runs.
 *
 * Every operator is defined once, as data, in src/ops/<family>/<family>.toml (docs: native_stubs/DESIGN.md).
 * The generator (native_stubs/tools/opgen) turns each definition into an op_def table and two exported
 * functions:
 *
 *   aclnnXxxGetWorkspaceSize(<params>, uint64_t *workspaceSize, aclOpExecutor **executor)
 *       packs its arguments into op_arg[] and calls op_phase1(&def, args, workspaceSize, executor);
 *   aclnnXxx(workspace, workspaceSize, executor, stream)
 *       calls pyaclnn_stub_executor_run (shared by every operator).
 *
 * op_phase1 runs the definition's steps in order -- the vendor's ordered checks (null pointers, dtype
 * lists per SoC, shapes, attribute ranges ...) each with the vendor's status and message -- on an
 * op_call that holds the arguments and, once read, their validated snapshots. A step is a function
 * `aclnnStatus opc_<name>(op_call *c, const op_step *s)`: the common ones live in src/opbase/checks.c,
 * a family's own ones next to its kernels. The first step that returns non-zero ends phase 1 with
 * that status (it has reported its message). When all pass, op_phase1 builds the executor: the
 * definition's kernel (or the one a step chose; none when a step set `nothing`) with the parameter
 * block the steps filled (c->params), over the tensors of the definition's inputs and outputs.
 */
#ifndef PYACLNN_OPBASE_H
#define PYACLNN_OPBASE_H

#include <stddef.h>
#include <stdint.h>

#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "kernels/dtype.h"
#include "pyaclnn_stub.h"

#define OP_MAX_PARAMS 48         /* parameters of one GetWorkspaceSize, without the trailing pair  */
#define OP_MAX_STEP_PARAMS 16    /* parameter operands of one step                                  */
#define OP_MAX_IO 16             /* tensors of an executor taken from single-tensor parameters      */
#define OP_PARAMS_MAX 8192       /* bytes of a kernel's parameter block                             */
#define OP_MAX_SCRATCH 4         /* blocks of memory the steps of one call may take (op_scratch)     */

/* What a parameter carries (the signature registry's kinds, pyaclnn/signatures/model.py). */
typedef enum {
    OP_K_TENSOR = 0,
    OP_K_TENSOR_LIST,
    OP_K_SCALAR,
    OP_K_SCALAR_LIST,
    OP_K_INT_ARRAY,
    OP_K_FLOAT_ARRAY,
    OP_K_BOOL_ARRAY,
    OP_K_INT,                    /* any integer by value (int8_t ... int64_t, enums): arg.i       */
    OP_K_DOUBLE,                 /* double or float by value: arg.d                               */
    OP_K_BOOL,                   /* arg.i (0/1)                                                   */
    OP_K_DTYPE,                  /* aclDataType by value: arg.i                                   */
    OP_K_STRING,                 /* const char*: arg.p                                            */
    OP_K_POINTER,                /* any other pointer: arg.p                                      */
} op_kind;

typedef enum { OP_IN = 0, OP_OUT = 1, OP_INOUT = 2 } op_role;

typedef struct {
    const char *name;            /* the vendor header's parameter name ("self", "selfRef" ...)    */
    uint8_t kind;                /* op_kind                                                       */
    uint8_t role;                /* op_role (tensors and tensor lists; others are inputs)         */
    uint8_t optional;            /* may be NULL                                                   */
} op_param;

/* One argument as passed: pointers in p, integers/bools/dtypes in i, doubles/floats in d. */
typedef union {
    const void *p;
    int64_t i;
    double d;
} op_arg;

/* A dtype support list per SoC family (indexed by pyaclnn_soc_family: OTHER, A2, 950). */
typedef struct {
    const char *name;            /* the list's name in the definitions, for tests and messages    */
    struct {
        const aclDataType *v;
        uint8_t n;
    } soc[3];
} op_dtype_list;

struct op_call;
struct op_step;
typedef aclnnStatus (*op_step_fn)(struct op_call *c, const struct op_step *s);

/* One step of phase 1: a check function and its operands, as the definition wrote them. */
typedef struct op_step {
    op_step_fn fn;
    const char *name;            /* the step's name in the definition ("dtype_in" ...)            */
    int8_t p[OP_MAX_STEP_PARAMS]; /* parameter indexes, in the order written                      */
    uint8_t np;
    int64_t n;                   /* an integer operand (0 when none)                              */
    uint8_t has_n;
    const op_dtype_list *list;   /* a dtype list operand (NULL when none)                         */
    const char *text;            /* a quoted string operand (NULL when none)                      */
    const char *const *labels;   /* per operand, the name messages use ("selfRef@self"); NULL: the
                                  * parameters' own names                                          */
} op_step;

typedef struct op_def {
    const char *name;            /* "Relu"                                                        */
    const char *api;             /* "aclnnReluGetWorkspaceSize"                                   */
    const op_param *params;
    uint8_t n_params;
    const op_step *steps;
    uint8_t n_steps;
    pyaclnn_stub_kernel_fn kernel;   /* NULL: a step picks it (c->kernel)                         */
    int8_t inputs[OP_MAX_IO];    /* executor inputs: parameter indexes, in kernel order (-1: NULL) */
    uint8_t n_inputs;
    int8_t outputs[OP_MAX_IO];   /* executor outputs                                              */
    uint8_t n_outputs;
    const void *spec;            /* the family's data for this operator (e.g. an ew_spec), or NULL */
    const char *exec_name;       /* the operator the executor runs when not this one (a V2 form's L0
                                  * operator: "GroupedDynamicMxQuant"), NULL: name                */
} op_def;

/* A scalar argument once read: its dtype and value in the dtype's representation. */
typedef struct {
    aclDataType dtype;
    ew_value v;
} op_scalar;

/* Phase 1 in progress. Steps read the arguments through it and leave their results in it. */
typedef struct op_call {
    const op_def *def;
    const char *api;                         /* def->api: the name messages are reported under    */
    const op_arg *arg;                       /* the arguments, by parameter index                 */
    uint64_t *workspace_size;
    aclOpExecutor **executor;
    uint64_t read;                           /* bit k: parameter k was read (snapshots below valid) */
    /* Read arguments, by parameter index (only the entry of the parameter's kind is meaningful). */
    pyaclnn_stub_tensor t[OP_MAX_PARAMS];    /* tensors: present == 0 for an absent optional one  */
    op_scalar s[OP_MAX_PARAMS];              /* scalars                                           */
    struct {
        const int64_t *v;
        uint64_t n;
    } ints[OP_MAX_PARAMS];                   /* int arrays (n == 0 and v == NULL when absent)     */
    /* Results of steps. */
    int64_t shape[PYACLNN_STUB_MAX_DIMS];    /* the result shape a step computed (e.g. broadcast) */
    int64_t ndim;
    aclDataType compute;                     /* the dtype the kernel computes in, when one applies */
    pyaclnn_stub_kernel_fn kernel;           /* starts as def->kernel                             */
    int nothing;                             /* the launch does nothing (empty tensors)           */
    int done;                                /* a step ended phase 1 with success (the vendor's early
                                              * return): the steps after it do not run            */
    uint64_t workspace;                      /* workspace bytes phase 2 needs                     */
    size_t params_size;                      /* bytes of params the kernel gets                   */
    _Alignas(16) unsigned char params[OP_PARAMS_MAX];
    /* Executor tensors: by default the definition's inputs/outputs; a step may replace them (lists),
     * with the snapshots phase 1 validated (NULL: phase 1 takes them from the handles when it builds
     * the executor). The executor runs these snapshots, never a re-read of the handles, so that
     * another thread re-describing a tensor (aclInitTensor ...) cannot make it run what was not checked. */
    const aclTensor *const *in_handles;
    const pyaclnn_stub_tensor *in_snaps;
    size_t n_in;
    const aclTensor *const *out_handles;
    const pyaclnn_stub_tensor *out_snaps;
    size_t n_out;
    aclOpExecutor *made;                     /* a step built the executor itself (op_make_executor) */
    int shape_output;                        /* >= 0: data-dependent shape of this output         */
    /* Tensor lists once read (read_list), by parameter index: the list's own handles and their snapshots. */
    struct {
        const aclTensor *const *v;
        pyaclnn_stub_tensor *t;
        uint64_t n;
    } lists[OP_MAX_PARAMS];
    void *scratch[OP_MAX_SCRATCH];           /* op_scratch's blocks, freed when phase 1 ends      */
    uint8_t n_scratch;
} op_call;

/* Runs phase 1 of `def` (called by the generated GetWorkspaceSize functions). */
aclnnStatus op_phase1(const op_def *def, const op_arg *args, uint64_t *workspaceSize, aclOpExecutor **executor);

/* ---- for steps ---------------------------------------------------------------------------- */

/* The name messages use for step operand k: its label, else its parameter's name ("" when out of range). */
static inline const char *op_pname(const op_call *c, const op_step *s, int k) {
    if (k >= s->np) return "";
    return s->labels != NULL && s->labels[k] != NULL ? s->labels[k] : c->def->params[s->p[k]].name;
}
/* The snapshot / scalar / argument of step operand k. */
static inline pyaclnn_stub_tensor *op_tensor(op_call *c, const op_step *s, int k) { return &c->t[s->p[k]]; }
static inline op_scalar *op_scalar_of(op_call *c, const op_step *s, int k) { return &c->s[s->p[k]]; }
static inline const op_arg *op_argument(const op_call *c, const op_step *s, int k) { return &c->arg[s->p[k]]; }

/* The SoC's version of a dtype list. */
static inline const aclDataType *op_list(const op_dtype_list *l, size_t *n) {
    int soc = (int)pyaclnn_stub_soc_family();
    *n = l->soc[soc].n;
    return l->soc[soc].v;
}

/* The parameter block the kernel gets: a step fills it once (`size` bytes, zeroed first). */
void *op_params(op_call *c, size_t size);

/* `size` zeroed bytes that live until phase 1 ends (list snapshots, executor tensor arrays); NULL if out of
 * memory or the call already holds OP_MAX_SCRATCH blocks. */
void *op_scratch(op_call *c, size_t size);

/* The operator name the executor carries (messages of the address setters, the hazard checker). */
static inline const char *op_exec_name(const op_call *c) {
    return c->def->exec_name != NULL ? c->def->exec_name : c->def->name;
}

/* Builds the executor now, as phase 1 does after its last step, into c->made (phase 1 hands it out): c->kernel
 * (none when c->nothing) with c->params, c->workspace, over the definition's tensors or, `with_tensors` 0, over
 * none (the vendor's early return before its tensors are set). For a step that must act on the executor (defer an
 * error to phase 2) or end phase 1 early. 561101 (reported) if out of memory. */
aclnnStatus op_make_executor(op_call *c, int with_tensors);

/* Index of parameter `name` of the operator, -1 if it has none. */
int op_param_index(const op_def *def, const char *name);

#endif
