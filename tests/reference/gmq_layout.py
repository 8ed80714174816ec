"""Groups, 32-row blocks and the mxscale layout of GroupedDynamicMxQuant (spec §3).

groupIndex holds cumulative group END offsets: group g is rows [groupIndex[g-1], groupIndex[g]) with
groupIndex[-1] read as 0. Blocks are 32 rows of one column counted from the group's own start; two
consecutive blocks (one 64-row chunk) share an mxscale row:

    mxscale[start_g // 64 + g + c, j, slot]    slot 0: block 2c; slot 1: block 2c+1 (or 0x00)

Invalid groupIndex values (spec §3.5) are never validated on the host. The NPU then skips, re-reads
or reads/writes out of bounds; an emulator must do none of the latter. plan_groups() turns any
groupIndex into in-bounds segments under one of these policies:

  "clamp"  (proposed for the emulator) end'_g = min(max(groupIndex[g], end'_{g-1}), m), end'_-1 = 0.
           Decreasing or negative entries become empty groups, entries beyond m end at m. Groups
           never overlap, so the result is deterministic however the work is split.
  "kernel" the NPU's reading (start = groupIndex[g-1], end = groupIndex[g]) with both clipped to
           [0, m]. Equals the NPU wherever the NPU stays in bounds; decreasing entries make groups
           overlap (on the NPU a race; here the later group wins).
  "strict" raise ValueError on any violation.

Both repairing policies keep every write inside y and mxscale: with 0 <= s <= e <= m,
s // 64 + ceil((e - s) / 64) <= m // 64 + 1, so the last row group g writes is <= m // 64 + g.
Rows beyond the last end are never processed (as on the NPU when groupIndex[-1] < m).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BLOCK_ROWS = 32
CHUNK_ROWS = 64
GROUP_INDEX_POLICIES = ("clamp", "kernel", "strict")


@dataclass(frozen=True)
class Segment:
    group: int
    start: int
    end: int          # > start


@dataclass(frozen=True)
class GroupPlan:
    segments: tuple[Segment, ...]   # processing order; later segments overwrite earlier ones
    notes: tuple[str, ...]          # one line per repaired or suspicious groupIndex entry
    m: int
    group_count: int

    @property
    def overlapping(self) -> bool:
        return any(b.start < a.end for a, b in zip(self.segments, self.segments[1:]))


def mxscale_row_count(m: int, group_count: int) -> int:
    return m // CHUNK_ROWS + group_count


def _violations(ends: list[int], m: int) -> list[str]:
    notes, prev = [], 0
    for g, end in enumerate(ends):
        if end < 0:
            notes.append(f"groupIndex[{g}]={end} is negative")
        elif end > m:
            notes.append(f"groupIndex[{g}]={end} exceeds m={m}")
        if end < prev:
            notes.append(f"groupIndex[{g}]={end} is below groupIndex[{g - 1}]={prev}")
        prev = end
    if ends and ends[-1] < m:
        notes.append(f"groupIndex[-1]={ends[-1]} < m={m}: rows from there on are not processed")
    return notes


def plan_groups(group_index, m: int, policy: str = "clamp") -> GroupPlan:
    """The row segments to quantise for this groupIndex (see the module docstring)."""
    if policy not in GROUP_INDEX_POLICIES:
        raise ValueError(f"unknown groupIndex policy {policy!r}")
    ends = [int(v) for v in np.asarray(group_index).reshape(-1)]
    notes = _violations(ends, m)
    if policy == "strict" and notes:
        raise ValueError("invalid groupIndex: " + "; ".join(notes))
    segments = []
    prev = 0
    for g, raw_end in enumerate(ends):
        if policy == "kernel":
            start = min(max(ends[g - 1] if g else 0, 0), m)
            end = min(max(raw_end, 0), m)
        else:
            start = prev
            end = min(max(raw_end, prev), m)
            prev = end
        if end > start:
            segments.append(Segment(g, start, end))
    return GroupPlan(tuple(segments), tuple(notes), m, len(ends))


@dataclass(frozen=True)
class Blocks:
    """The 32-row blocks of a run of adjacent segments, rows relative to the run start."""
    start: np.ndarray      # first row of each block (relative), increasing
    length: np.ndarray     # 1..32 rows
    row: np.ndarray        # mxscale row
    slot: np.ndarray       # mxscale last-axis index (0 or 1)


def segment_blocks(seg: Segment, offset: int) -> Blocks:
    count = -(-(seg.end - seg.start) // BLOCK_ROWS)
    k = np.arange(count, dtype=np.int64)
    start = seg.start + BLOCK_ROWS * k
    return Blocks(start - offset, np.minimum(BLOCK_ROWS, seg.end - start),
                  seg.start // CHUNK_ROWS + seg.group + k // 2, k % 2)


def runs(plan: GroupPlan) -> list[list[Segment]]:
    """Split the segments into runs of adjacent ones; each run covers contiguous rows."""
    out: list[list[Segment]] = []
    for seg in plan.segments:
        if out and out[-1][-1].end == seg.start:
            out[-1].append(seg)
        else:
            out.append([seg])
    return out


def run_blocks(run: list[Segment]) -> Blocks:
    parts = [segment_blocks(seg, run[0].start) for seg in run]
    return Blocks(*(np.concatenate([getattr(p, f) for p in parts])
                    for f in ("start", "length", "row", "slot")))


def mxscale_written_rows(plan: GroupPlan) -> np.ndarray:
    """bool [m // 64 + g]: the mxscale rows the kernel writes (all n columns, both slots)."""
    written = np.zeros(mxscale_row_count(plan.m, plan.group_count), dtype=bool)
    for seg in plan.segments:
        first = seg.start // CHUNK_ROWS + seg.group
        written[first:first + -(-(seg.end - seg.start) // CHUNK_ROWS)] = True
    return written


def mxscale_written_mask(group_index, m: int, n: int, policy: str = "clamp") -> np.ndarray:
    """bool [m // 64 + g, n, 2]: True where the kernel writes mxscale."""
    rows = mxscale_written_rows(plan_groups(group_index, m, policy))
    return np.broadcast_to(rows[:, None, None], (rows.size, n, 2)).copy()


def y_written_rows(plan: GroupPlan) -> np.ndarray:
    """bool [m]: the rows of y the kernel writes (all columns)."""
    written = np.zeros(plan.m, dtype=bool)
    for seg in plan.segments:
        written[seg.start:seg.end] = True
    return written
