/* Which modes each conversion accepts (numerics.h lists them). */
#include "num_config.h" /* first: compile options */
#include "numerics.h"

static int flags_ok(int mode, int allowed) { return (mode & ~NUM_ROUND_MASK & ~allowed) == 0; }

static int round_in(int mode, int lo, int hi)
{
    int r = mode & NUM_ROUND_MASK;
    return r >= lo && r <= hi;
}

int num_mode_valid_float(int mode)
{
    return round_in(mode, NUM_RINT, NUM_ODD) && flags_ok(mode, NUM_SAT | NUM_NAN_TO_ZERO);
}

int num_mode_valid_minifloat(int mode)
{
    return round_in(mode, NUM_RINT, NUM_TRUNC) && flags_ok(mode, NUM_SAT | NUM_NAN_TO_ZERO);
}

int num_mode_valid_hif8(int mode)
{
    int r = mode & NUM_ROUND_MASK;
    return (r == NUM_ROUND || r == NUM_HYBRID) && flags_ok(mode, NUM_SAT | NUM_NAN_TO_ZERO);
}

int num_mode_valid_int(int mode)
{
    return round_in(mode, NUM_RINT, NUM_TRUNC) && flags_ok(mode, NUM_SAT);
}

int num_mode_valid_e8m0(int mode)
{
    return round_in(mode, NUM_RINT, NUM_TRUNC) && flags_ok(mode, 0);
}
