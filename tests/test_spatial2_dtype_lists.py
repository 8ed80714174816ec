"""The Atlas A2 dtype lists of the operators of test_unpool, test_im2col, test_affine_grid, test_grid_sampler3d,
test_searchsorted, test_histc, test_range_space, test_renorm and test_channel_shuffle, in ONE child process on
Ascend910B4 (each of those files gives its calls and expected codes through a2_cases(); one child instead of nine
keeps CI time down)."""
from __future__ import annotations

import test_affine_grid
import test_channel_shuffle
import test_grid_sampler3d
import test_histc
import test_im2col
import test_range_space
import test_renorm
import test_searchsorted
import test_unpool
from _cnn_ops import A2, status_codes

MODULES = [test_unpool, test_im2col, test_affine_grid, test_grid_sampler3d, test_searchsorted, test_histc,
           test_range_space, test_renorm, test_channel_shuffle]


def test_a2_dtype_lists_in_one_child():
    cases = [m.a2_cases() for m in MODULES]
    got = status_codes([c for calls, _ in cases for c in calls], A2)
    at, wrong = 0, []
    for m, (calls, want) in zip(MODULES, cases):
        mine = got[at:at + len(calls)]
        at += len(calls)
        wrong += [(m.__name__, c[0], c[1][0] if isinstance(c[1][0], list) else c[1], g, w)
                  for c, g, w in zip(calls, mine, want) if g != w]
    assert wrong == []
