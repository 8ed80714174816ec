"""The dtype-list tables of the distance and dense linear algebra operators (tests/test_distance.py,
test_linalg.py): candidate dtypes, the vendor's accepted ones, one call per operator. Checked on both SoCs by
tests/test_blas.py::test_dtype_lists_per_soc, whose one Atlas A2 child runs the calls of all three files."""
from __future__ import annotations

FLOATS = ["float32", "float16", "bfloat16"]

DIST_CANDS = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]
DIST_OK = {"Cdist": FLOATS, "CdistBackward": FLOATS, "Pdist": ["float32", "float16"],
           "LinalgCross": [d for d in DIST_CANDS if d != "bool"]}


def dist_calls(d):
    m = ["t", d, [2, 3]]
    return [("Cdist", [m, m, 1.0, 0, ["t", d, [2, 2]]]),
            ("CdistBackward", [["t", d, [2, 2]], m, m, ["t", d, [2, 2]], 1.0, m]),
            ("Pdist", [m, 1.0, ["t", d, [1]]]), ("LinalgCross", [m, m, 1, m])]


LA_CANDS = ["float32", "float16", "bfloat16", "float64", "int32"]
LA_OK = {"TriangularSolve": ["float32", "float64"], "Inverse": ["float32", "float64", "float16"],
         "Slogdet": ["float32", "float64"], "LinalgQr": ["float32", "float16", "float64"], "Svd": ["float32", "float64"]}


def la_calls(d):
    m = ["t", d, [3, 3]]
    return [("TriangularSolve", [m, m, True, False, False, m, ["n"]]), ("Inverse", [m, m]),
            ("Slogdet", [m, ["t", d, []], ["t", d, []]]), ("LinalgQr", [m, 0, m, m]),
            ("Svd", [m, False, True, ["t", d, [3]], m, m])]
