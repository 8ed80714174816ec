/* Two 4-bit values per byte: element 2k in bits 0-3, element 2k+1 in bits 4-7 (the NPU's INT4 and
 * FP4 layout: grouped_dynamic_mx_quant.md §3.6, amp_update_scale_...md B.10). */
#include "num_config.h" /* first: compile options */
#include "numerics.h"

void num_pack4(const uint8_t *nibbles, uint8_t *packed, size_t n)
{
    for (size_t k = 0; k < n / 2; k++)
        packed[k] = (uint8_t)((nibbles[2 * k] & 0xFu) | ((nibbles[2 * k + 1] & 0xFu) << 4));
    if (n & 1u)
        packed[n / 2] = nibbles[n - 1] & 0xFu;
}

void num_unpack4(const uint8_t *packed, uint8_t *nibbles, size_t n)
{
    for (size_t i = 0; i < n; i++)
        nibbles[i] = (uint8_t)((packed[i / 2] >> (4 * (i & 1u))) & 0xFu);
}

void num_unpack_int4(const uint8_t *packed, int8_t *values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int v = (packed[i / 2] >> (4 * (i & 1u))) & 0xF;
        values[i] = (int8_t)(v >= 8 ? v - 16 : v);
    }
}
