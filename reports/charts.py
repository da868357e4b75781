"""Geometry of the server-rendered SVG charts. The figures come from the engine; this only maps them to pixels."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Tick:
    position: float  # pixel coordinate along the axis
    value: float


@dataclass(frozen=True)
class ChartPoint:
    x: float
    y: float
    context: int
    gib: float  # what the GPUs hold at this context
    verdict: str  # the engine's verdict at this context (fit.verdict_for): "fits", "tight", "unified" or "exceeds"

    @property
    def fits(self) -> bool:
        return self.verdict != "exceeds"


@dataclass(frozen=True)
class VramChart:
    width: int
    height: int
    left: int
    top: int
    plot_width: int
    plot_height: int
    points: tuple[ChartPoint, ...]
    line_path: str
    area_path: str
    usable_y: float | None
    usable_gib: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]

    @property
    def plot_right(self) -> int:
        return self.left + self.plot_width

    @property
    def label_y(self) -> int:
        """Baseline of the x-axis labels, inside the bottom margin."""
        return self.top + self.plot_height + 24


def _nice_step(span: float, target_ticks: int = 5) -> float:
    """A 1-2-5 step giving about `target_ticks` ticks over `span`."""
    raw = span / max(target_ticks, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for multiple in (1, 2, 2.5, 5, 10):
        if raw <= multiple * magnitude:
            return multiple * magnitude
    return 10 * magnitude


def vram_chart(points: list[tuple[int, float, str]], usable_gib: float, *, width: int = 640,
               height: int = 280) -> VramChart:
    """Memory the GPUs hold against context (log₂ x axis) with the accelerator's usable memory as a horizontal
    line; each point is (context, GiB, the engine's verdict at that context: a tight fit is marked as tight, as the
    report's fit card says it)."""
    left, right, top, bottom = 56, 16, 16, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    contexts = [c for c, _, _ in points]
    lo, hi = math.log2(min(contexts)), math.log2(max(contexts))
    top_value = max(max(t for _, t, _ in points), usable_gib) * 1.08 or 1.0
    step = _nice_step(top_value)
    y_max = math.ceil(top_value / step) * step

    def x_of(context: int) -> float:
        return left + (math.log2(context) - lo) / ((hi - lo) or 1) * plot_w

    def y_of(gib: float) -> float:
        return top + plot_h - gib / y_max * plot_h

    chart_points = tuple(ChartPoint(round(x_of(c), 1), round(y_of(t), 1), c, t, verdict) for c, t, verdict in points)
    line = " ".join(f"{'M' if i == 0 else 'L'}{p.x},{p.y}" for i, p in enumerate(chart_points))
    base_y = top + plot_h
    area = f"{line} L{chart_points[-1].x},{base_y} L{chart_points[0].x},{base_y} Z"
    y_ticks = tuple(Tick(round(y_of(v), 1), v) for v in _frange(0, y_max, step))
    x_ticks = tuple(Tick(p.x, p.context) for p in chart_points)
    usable_y = round(y_of(usable_gib), 1) if usable_gib <= y_max else None
    return VramChart(width, height, left, top, plot_w, plot_h, chart_points, line, area, usable_y, usable_gib,
                     x_ticks, y_ticks)


def _frange(start: float, stop: float, step: float) -> list[float]:
    count = int(round((stop - start) / step))
    return [start + i * step for i in range(count + 1)]


@dataclass(frozen=True)
class BarSegment:
    key: str
    gib: float
    x: float
    width: float


def stacked_bar(parts: list[tuple[str, float]], capacity_gib: float, *, width: int = 600) -> tuple[
        tuple[BarSegment, ...], float | None]:
    """Segments of a horizontal memory bar scaled to max(total, capacity); returns the capacity marker's x too."""
    total = sum(g for _, g in parts)
    scale = max(total, capacity_gib) or 1.0
    x, segments = 0.0, []
    for key, gib in parts:
        w = gib / scale * width
        segments.append(BarSegment(key, gib, round(x, 2), round(w, 2)))
        x += w
    marker = round(capacity_gib / scale * width, 2) if capacity_gib > 0 else None
    return tuple(segments), marker
