"""The explain page's DAG laid out by Graphviz's `dot` (Debian's `graphviz`): layers from left to right, sources and
seeds in the first, edges as splines routed around the boxes. explain_render.py draws the boxes and edges it returns.

    nodes, edges, box sizes --> `dot -Tjson0` --> each box's corner and each edge's path, in SVG's coordinates

Box sizes are fixed here from the label's length, so the text the page draws fits whatever fonts `dot` measured with.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass

DOT = "dot"
POINTS_PER_INCH = 72
# a 12px sans-serif name over a 10px subtitle: widths of a character, in points (1px = 1pt at dot's 72 dpi)
NAME_CHAR, SUB_CHAR, BOX_PADDING, BOX_HEIGHT = 7.0, 5.8, 18, 40
INSTALL = ("Graphviz's `dot` is not on the PATH, so lakeplan explain wrote no page of the DAG (the table and the JSON "
           "are written). Fix: install Graphviz (`sudo apt-get install graphviz` on Debian, `brew install graphviz` on "
           "macOS) and rerun lakeplan explain.")  # fmt: skip


class NoGraphviz(Exception):
    """`dot` is not installed: one sentence saying how to install it."""


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Layout:
    width: float
    height: float
    boxes: dict[str, Box]
    edges: dict[tuple[str, str], str]  # (from, to) -> an SVG path's `d`, ending where the arrow points


def box_width(name: str, subtitle: str) -> float:
    return BOX_PADDING + max(NAME_CHAR * len(name), SUB_CHAR * len(subtitle))


def dot_source(widths: dict[str, float], edges: list[tuple[str, str]], first: list[str]) -> str:
    """The graph in dot's language: nodes by index (ids need no quoting), fixed sizes, `first` in the first layer."""
    index = {uid: i for i, uid in enumerate(widths)}
    lines = ["digraph lakeplan {", "graph [rankdir=LR, splines=spline, nodesep=0.3, ranksep=0.7];",
             "node [shape=box, fixedsize=true, label=\"\"];"]  # fmt: skip
    lines += [f"n{index[uid]} [width={width / POINTS_PER_INCH:.3f}, height={BOX_HEIGHT / POINTS_PER_INCH:.3f}];"
              for uid, width in widths.items()]  # fmt: skip
    if first:
        lines.append("{rank=min; " + " ".join(f"n{index[uid]};" for uid in first) + "}")
    lines += [f"n{index[a]} -> n{index[b]};" for a, b in edges]
    return "\n".join(lines + ["}"])


def layout(widths: dict[str, float], edges: list[tuple[str, str]], first: list[str]) -> Layout:
    """Runs `dot` on the graph; NoGraphviz where it is not installed."""
    if shutil.which(DOT) is None:
        raise NoGraphviz(INSTALL)
    source = dot_source(widths, edges, first)
    answer = subprocess.run([DOT, "-Tjson0"], input=source, capture_output=True, text=True, check=True).stdout
    return read_layout(json.loads(answer), list(widths), edges)


def read_layout(graph: dict, uids: list[str], edges: list[tuple[str, str]]) -> Layout:
    """dot's answer in SVG's coordinates: dot's y axis points up from the bottom, SVG's down from the top."""
    _, _, width, height = (float(v) for v in graph["bb"].split(","))
    boxes, by_gvid = {}, {}
    for one in graph.get("objects", []):
        if "pos" not in one:  # a subgraph (the first layer's rank=min)
            continue
        uid = uids[int(one["name"][1:])]
        x, y = (float(v) for v in one["pos"].split(","))
        w, h = float(one["width"]) * POINTS_PER_INCH, float(one["height"]) * POINTS_PER_INCH
        boxes[uid], by_gvid[one["_gvid"]] = Box(x - w / 2, height - y - h / 2, w, h), uid
    paths = {}
    for one in graph.get("edges", []):
        paths[(by_gvid[one["tail"]], by_gvid[one["head"]])] = spline_path(one["pos"], height)
    assert set(paths) == set(edges), "dot drew other edges than it was given"
    return Layout(width, height, boxes, paths)


def spline_path(pos: str, height: float) -> str:
    """dot's edge `pos` (`e,x,y` the arrow's tip, then the cubic B-spline's control points: one start, three per
    segment) as an SVG path: the curve, then a line to the tip."""
    end, points = None, []
    for token in pos.split():
        parts = token.split(",")
        kind, (x, y) = (parts[0], parts[1:]) if len(parts) == 3 else ("", parts)
        point = (float(x), height - float(y))
        if kind == "e":
            end = point
        elif kind != "s":  # `s,x,y`: where a tail arrow would start; the page draws none
            points.append(point)
    (x0, y0), rest = points[0], points[1:]
    d = f"M{x0:.1f},{y0:.1f} " + " ".join(
        "C" + " ".join(f"{x:.1f},{y:.1f}" for x, y in rest[i : i + 3]) for i in range(0, len(rest), 3))
    return d + (f" L{end[0]:.1f},{end[1]:.1f}" if end else "")
