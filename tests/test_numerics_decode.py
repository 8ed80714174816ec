"""Decoding: every code of every format -> float32, C and pyaclnn.codecs against the reference.

The reference tables come from numpy / ml_dtypes where they decode the format and from the spec's
field tables (tests/reference/formats.py) for HiFloat8 and FP4 E1M2.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import codecs
from reference import formats as R
from test_numerics_lib import c_decode, same_bits

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
ALL8 = np.arange(256, dtype=np.uint16).astype(np.uint8)
ALL4 = np.arange(16, dtype=np.uint8)

CASES = [  # C name, codecs name, codes, reference table
    ("fp16", "float16", ALL16, R.FP16.table),
    ("bf16", "bfloat16", ALL16, R.BF16.table),
    ("fp8_e4m3fn", "float8_e4m3fn", ALL8, R.E4M3FN.table),
    ("fp8_e5m2", "float8_e5m2", ALL8, R.E5M2.table),
    ("hif8", "hifloat8", ALL8, R.HIF8_TABLE),
    ("fp4_e2m1", "float4_e2m1", ALL4, R.E2M1.table),
    ("fp4_e1m2", "float4_e1m2", ALL4, R.E1M2.table),
    ("e8m0", "float8_e8m0", ALL8, R.E8M0_TABLE),
]


def _agree(got: np.ndarray, table: np.ndarray) -> bool:
    """Equal values (NaN where the table has NaN; -0 distinct from +0)."""
    with np.errstate(invalid="ignore"):
        want = table.astype(np.float32)
    nan = np.isnan(want)
    return (np.array_equal(np.isnan(got), nan)
            and same_bits(got[~nan], want[~nan]))


@pytest.mark.parametrize("c_name,py_name,codes,table", CASES, ids=[c[0] for c in CASES])
def test_every_code_decodes_to_the_reference_value(c_name, py_name, codes, table):
    assert _agree(c_decode(c_name, codes), table)
    assert _agree(codecs.decode(codes, py_name), table)


def test_fp16_and_bf16_widening_keeps_nan_payloads():
    for name, view in (("fp16", np.float16), ("bf16", ml_dtypes.bfloat16)):
        got = c_decode(name, ALL16)
        assert same_bits(got, ALL16.view(view).astype(np.float32))


def test_fp4_decoders_ignore_the_high_nibble():
    codes = np.arange(256, dtype=np.uint16).astype(np.uint8)
    for c_name, py_name, _, table in CASES[5:7]:
        assert _agree(c_decode(c_name, codes), table[codes & 0xF])
        assert _agree(codecs.decode(codes, py_name), table[codes & 0xF])


def test_hifloat8_published_codes():
    """Spec §5.4 / B.10 examples."""
    examples = {0x00: 0.0, 0x01: 2.0 ** -22, 0x07: 2.0 ** -16, 0x08: 1.0, 0x10: 2.0, 0x18: 0.5,
                0x2E: 14.0, 0x60: 256.0, 0x6E: 32768.0, 0x7E: 2.0 ** -15, 0x6F: np.inf,
                0xEF: -np.inf, 0x88: -1.0}
    codes = np.array(list(examples), np.uint8)
    want = np.array(list(examples.values()), np.float32)
    assert same_bits(c_decode("hif8", codes), want)
    assert same_bits(codecs.decode_hifloat8(codes), want)
    assert np.isnan(c_decode("hif8", np.array([0x80], np.uint8))[0])


def test_hifloat8_table_matches_en_dtypes_when_installed():
    en_dtypes = pytest.importorskip("en_dtypes")
    en = ALL8.view(en_dtypes.hifloat8).astype(np.float64)
    assert _agree(c_decode("hif8", ALL8), en)


def test_fp4_e1m2_table_matches_en_dtypes_when_installed():
    en_dtypes = pytest.importorskip("en_dtypes")
    en = ALL4.view(en_dtypes.float4_e1m2).astype(np.float64)
    assert _agree(c_decode("fp4_e1m2", ALL4), en)
