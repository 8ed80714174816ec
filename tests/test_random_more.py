"""The sampling operators (native_stubs/src/ops/random/sampling.toml): InplaceRandom,
InplaceRandomWithoutFromTo, InplaceBernoulli, InplaceBernoulliTensor, Randperm, Multinomial. Fidelity class
"statistical": the emulator's Philox stream with the maps of sampling.c, recomputed bit for bit by
tests/reference/random.py, plus ranges and frequencies on large draws; every dtype of the vendor's lists
(Ascend 950; Atlas A2 statuses in one subprocess), strided views, the validation codes and messages, and
torch_npu's random_ / randint / bernoulli / randperm / multinomial on the emulator.

Adding an operator adds a row to one of the tables."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, INVALID, code, dec, names, same_bits, torch_npu_run
from _gen_ops import assert_null_checks, codes_on, message
from _op_helpers import INNER_NULLPTR, strided
from pyaclnn import ops
from reference import elementwise as R
from reference import random as RR

SEED, OFFSET = 2 ** 33 + 5, 12
RANDOM = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 BOOL DOUBLE BF16")
DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def fill(op, name, shape, *args):
    t = pyaclnn.from_numpy(np.zeros(shape, R.np_dtype(name)))
    getattr(ops, op)(t, *args)
    return t.numpy()


@pytest.mark.parametrize("name", RANDOM)
def test_random_from_to_is_the_documented_stream(name):
    frm, to = (0, 2) if name == "bool" else (-3, 100) if name not in ("uint8",) else (3, 200)
    got = fill("InplaceRandom", name, (7, 9), frm, to, SEED, OFFSET)
    same_bits(got, R.cast(RR.random_ints(SEED, OFFSET, 63, frm, to - frm).reshape(7, 9), name))
    assert got.astype(np.float64).min() >= frm and got.astype(np.float64).max() < to


@pytest.mark.parametrize("name", RANDOM)
def test_random_without_from_to_range(name):
    n = 4000
    got = fill("InplaceRandomWithoutFromTo", name, (n,), SEED, OFFSET).astype(np.float64)
    if name in DIGITS:
        rng = 2 ** DIGITS[name] + 1
    elif name == "bool":
        rng = 2
    else:
        info = np.iinfo(R.np_dtype(name))
        rng = int(info.max) + 1
    want = RR.random_ints(SEED, OFFSET, n, 0, rng % 2 ** 64)
    same_bits(got, R.cast(R.cast(want, name), "float64"))
    assert got.min() >= 0 and got.max() <= rng - 1 and len(np.unique(got)) > min(rng, n) // 3


def test_random_frequencies_and_strided():
    got = fill("InplaceRandom", "int32", (200_000,), 0, 10, 1, 0)
    freq = np.bincount(got, minlength=10) / got.size
    assert np.abs(freq - 0.1).max() < 0.005
    base = np.zeros(21, np.float32)
    t = pyaclnn.from_numpy(base).as_strided((10,), (2,), 1)
    ops.InplaceRandom(t, 5, 9, SEED, OFFSET)
    v = t.numpy()
    same_bits(v, RR.random_ints(SEED, OFFSET, 10, 5, 4).astype(np.float32))


BERNOULLI = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 UINT16 UINT32 DOUBLE BOOL UINT64 BF16")


@pytest.mark.parametrize("name", BERNOULLI)
def test_bernoulli_every_dtype(name):
    got = fill("InplaceBernoulli", name, (5, 40), ops.Scalar(0.3, "float64"), SEED, OFFSET)
    same_bits(got, R.cast(RR.bernoulli(SEED, OFFSET, np.full(200, 0.3)).reshape(5, 40), name))
    p = np.linspace(0, 1, 40, dtype=np.float32)
    got = fill("InplaceBernoulliTensor", name, (5, 40), strided(p), SEED, OFFSET)
    same_bits(got, R.cast(RR.bernoulli(SEED, OFFSET, np.broadcast_to(p, (5, 40))).reshape(5, 40), name))


def test_bernoulli_frequencies_and_edges():
    got = fill("InplaceBernoulli", "float32", (200_000,), ops.Scalar(0.25, "float64"), 3, 4)
    assert abs(got.mean() - 0.25) < 0.004 and set(np.unique(got)) <= {0.0, 1.0}
    assert fill("InplaceBernoulli", "int8", (100,), ops.Scalar(0.0, "float64"), 3, 4).sum() == 0
    assert fill("InplaceBernoulli", "int8", (100,), ops.Scalar(1.0, "float64"), 3, 4).sum() == 100
    got = fill("InplaceBernoulliTensor", "float32", (2, 50_000), np.float32([[0.1], [0.9]]), 3, 4)
    assert abs(got[0].mean() - 0.1) < 0.006 and abs(got[1].mean() - 0.9) < 0.006


RANDPERM = names("FLOAT FLOAT16 INT32 DOUBLE INT64 INT8 UINT8 INT16 BF16")


@pytest.mark.parametrize("name", RANDPERM)
def test_randperm_every_dtype(name):
    n = 100 if name not in ("int8", "uint8", "bfloat16") else 100
    got = ops.Randperm(n, SEED, OFFSET, np.zeros(n, R.np_dtype(name)))
    same_bits(got, R.cast(RR.randperm(SEED, OFFSET, n), name))
    assert sorted(got.astype(np.int64).tolist()) == list(range(n))
    assert ops.Randperm(0, SEED, OFFSET, np.zeros(0, np.int64)).shape == (0,)


MULTINOMIAL = names("FLOAT FLOAT16 DOUBLE BF16")


@pytest.mark.parametrize("name", MULTINOMIAL)
def test_multinomial_is_the_documented_stream(name):
    w = R.cast(np.abs(np.random.default_rng(5).standard_normal((3, 8))) * (np.arange(8) % 3 != 0), name)
    for k, repl in ((3, False), (5, False), (12, True)):
        got = ops.Multinomial(strided(w), k, repl, SEED, OFFSET, np.zeros((3, k), np.int64))
        same_bits(got, RR.multinomial(SEED, OFFSET, np.asarray(w, np.float64), k, repl))
        if not repl:
            assert all(len(set(r)) == k for r in got.tolist())
    one = ops.Multinomial(w[0], 2, True, SEED, OFFSET, np.zeros(2, np.int64))
    same_bits(one, RR.multinomial(SEED, OFFSET, np.asarray(w[0], np.float64), 2, True))


def test_multinomial_frequencies():
    w = np.float32([0.1, 0.0, 0.2, 0.7])
    got = ops.Multinomial(w, 100_000, True, 9, 0, np.zeros(100_000, np.int64))
    assert np.abs(np.bincount(got, minlength=4) / got.size - w / w.sum()).max() < 0.006
    first = ops.Multinomial(np.tile(w, (40_000, 1)), 1, False, 9, 0, np.zeros((40_000, 1), np.int64))
    assert np.abs(np.bincount(first.ravel(), minlength=4) / first.size - w).max() < 0.01


# ---- validation ----------------------------------------------------------------------------------------------

def test_validation_codes_and_messages():
    x = np.zeros((2, 3), np.float32)
    assert "from 5 must be less than to 5." in message(ops.InplaceRandom, x, 5, 5, 1, 0)
    assert code(ops.InplaceRandom, x.astype(np.uint16), 0, 5, 1, 0) == INVALID
    assert code(ops.InplaceRandomWithoutFromTo, np.zeros((1,) * 9, np.float32), 1, 0) == INVALID
    assert "prob should be in range 0<=prob<=1 ." in message(ops.InplaceBernoulli, x, ops.Scalar(1.5, "float64"), 1, 0)
    assert code(ops.InplaceBernoulli, x, ops.Scalar(1, "int64"), 1, 0) == INVALID            # prob dtype
    assert code(ops.InplaceBernoulliTensor, x, np.zeros(3, np.int32), 1, 0) == INVALID
    assert code(ops.InplaceBernoulliTensor, x, np.zeros(4, np.float32), 1, 0) == INVALID     # no broadcast
    assert code(ops.Randperm, 5, 1, 0, np.zeros(4, np.int64)) == INVALID
    assert code(ops.Randperm, 5, 1, 0, np.zeros(5, bool)) == INVALID
    assert code(ops.Randperm, 5, 1, 0, None) == INNER_NULLPTR
    w = np.ones((2, 4), np.float32)
    assert "Dim of self only can be 1 or 2." in message(ops.Multinomial, np.ones((1, 2, 4), np.float32), 2, True, 1, 0,
                                                         np.zeros((1, 2, 2), np.int64))
    assert "numsamples 3, but got 2" in message(ops.Multinomial, w, 3, True, 1, 0, np.zeros((2, 2), np.int64))
    assert "without replacement" in message(ops.Multinomial, w, 5, False, 1, 0, np.zeros((2, 5), np.int64))
    assert "Numsamples must > 0." in message(ops.Multinomial, w, 0, True, 1, 0, np.zeros((2, 0), np.int64))
    assert code(ops.Multinomial, w.astype(np.int32), 2, True, 1, 0, np.zeros((2, 2), np.int64)) == INVALID
    assert_null_checks((
        ("aclnnInplaceRandomGetWorkspaceSize", 5), ("aclnnInplaceBernoulliGetWorkspaceSize", 4),
                 ("aclnnInplaceBernoulliTensorGetWorkspaceSize", 4), ("aclnnMultinomialGetWorkspaceSize", 6)))


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_status_per_soc(soc):
    """Bernoulli's unsigned selfRef dtypes are Ascend 950's (the A2 side in one subprocess)."""
    got = codes_on(soc, "[code(ops.InplaceBernoulliTensor, np.zeros(3, dt), np.zeros(3, np.float32), 1, 0) "
                        "for dt in (np.uint16, np.uint64, ml_dtypes.bfloat16)]")
    assert got == ([0, 0, 0] if soc != A2 else [INVALID, INVALID, 0])


# ---- torch_npu on the emulator -------------------------------------------------------------------------------

_BODY = """
torch.manual_seed(0)
w = torch.tensor([[0.1, 0.0, 0.2, 0.7]] * 2000)
calls = {
    "random_": lambda: torch.empty(20000, device="npu").random_(0, 10),
    "random_noargs": lambda: torch.empty(4000, dtype=torch.int16, device="npu").random_(),
    "randint": lambda: torch.randint(3, 8, (20000,), device="npu"),
    "bernoulli_p": lambda: torch.empty(20000, device="npu").bernoulli_(0.3),
    "bernoulli_t": lambda: torch.bernoulli(torch.full((20000,), 0.6, device="npu")),
    "randperm": lambda: torch.randperm(1000, device="npu"),
    "multinomial": lambda: torch.multinomial(w.npu(), 1),
    "multinomial_r": lambda: torch.multinomial(w[0].npu(), 20000, replacement=True),
}
for k, f in calls.items():
    try:
        OUT[k] = enc(to_np(f()))
    except Exception as exc:
        OUT[k] = {"error": str(exc)[:300]}
try:
    a = torch.multinomial(w[0].npu(), 5000, replacement=True)
    b = torch.multinomial(w[0].npu(), 5000, replacement=True)
    OUT["advances"] = bool((a != b).any().cpu())
except Exception as exc:
    OUT["advances"] = str(exc)[:300]
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


def test_torch_npu_calls(on_npu):
    got = {k: dec(v) for k, v in on_npu.items() if isinstance(v, dict) and "error" not in v}
    assert set(got) == {"random_", "random_noargs", "randint", "bernoulli_p", "bernoulli_t", "randperm", "multinomial",
                        "multinomial_r"}, on_npu
    r = got["random_"]
    assert r.dtype == np.float32 and r.min() == 0 and r.max() == 9 and abs(r.mean() - 4.5) < 0.1
    assert got["random_noargs"].min() >= 0 and got["random_noargs"].max() > 30000
    assert got["randint"].min() == 3 and got["randint"].max() == 7
    assert abs(got["bernoulli_p"].mean() - 0.3) < 0.02 and abs(got["bernoulli_t"].mean() - 0.6) < 0.02
    assert sorted(got["randperm"].tolist()) == list(range(1000))
    freq = np.bincount(got["multinomial"].ravel(), minlength=4) / 2000
    assert np.abs(freq - [0.1, 0, 0.2, 0.7]).max() < 0.04
    freq = np.bincount(got["multinomial_r"], minlength=4) / 20000
    assert np.abs(freq - [0.1, 0, 0.2, 0.7]).max() < 0.02
    assert on_npu["advances"] is True                 # torch_npu's generator moves the offset between calls
