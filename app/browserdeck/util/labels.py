"""Where each ref badge goes on a labelled screenshot: one placement for agents and people.

``POST /screenshot`` with ``labels`` draws a box around every element an agent can
act on and a badge with its ref (``e12``). The panel shows that same image, so
one placement serves both. The rules (docs/gui.md):

* A badge sits outside its element's box, so it never covers the element's own
  text, and never on another badge or another element's box.
* It avoids the page's text (a field's label above its input: "Full name"), at a
  cost: a badge may move a little away to keep text readable.
* A badge that had to move away from its box gets a leader line back to it. A leader
  never passes through another element, badge or the page's text (a price struck through
  is misread), never crosses another leader, and no badge is put on a leader. So on a dense table a badge is matched to its button at a glance
  (docs/gui.md); one that finds no such spot is listed rather than tangled.
* A badge that fits nowhere is not dropped silently: it is listed in ``unplaced``
  (the API returns it; the panel lists it beside the image).

Pure Python and deterministic (no Qt, no browser), so it is tested on its own and
the engine and the GUI cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

# The badge's look, shared with the overlay the engine draws (engine/screenshot.py):
# bold 11px monospace on 14px lines. A monospace glyph is at most 0.62 em wide.
FONT_PX = 11
BADGE_HEIGHT = 14
CHAR_WIDTH = 7
PAD_X = 3
GAP = 1  # between a badge and its box when it sits right beside it
SEARCH_RADIUS = 96  # how far a badge may move from its box (CSS px) before it is listed
STEP = 7
TEXT_COST = 4  # per px² of page text a badge covers: moving ~100 px beats hiding a word
MOVE_COST = 6  # a badge away from its box (with a leader line) reads worse than beside it


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float

    @property
    def right(self) -> float:
        return self.x + self.width

    @property
    def bottom(self) -> float:
        return self.y + self.height

    def overlap(self, other: Rect) -> float:
        """The area both rectangles cover (0 when they only touch)."""
        w = min(self.right, other.right) - max(self.x, other.x)
        h = min(self.bottom, other.bottom) - max(self.y, other.y)
        return w * h if w > 0 and h > 0 else 0.0

    def contains(self, other: Rect) -> bool:
        return (
            self.x <= other.x
            and self.y <= other.y
            and self.right >= other.right
            and self.bottom >= other.bottom
        )

    def gap_to(self, other: Rect) -> float:
        """The distance between the two rectangles' edges (0 if they touch or overlap)."""
        dx = max(other.x - self.right, self.x - other.right, 0.0)
        dy = max(other.y - self.bottom, self.y - other.bottom, 0.0)
        return float((dx * dx + dy * dy) ** 0.5)

    def as_list(self) -> list[float]:
        return [round(self.x, 1), round(self.y, 1), round(self.width, 1), round(self.height, 1)]


@dataclass(frozen=True)
class Placed:
    """One ref: its element box, where its badge goes, and the leader line if it moved."""

    ref: str
    box: Rect
    badge: Rect | None  # None: it fits nowhere (listed in ``Placement.unplaced``)
    leader: tuple[float, float, float, float] | None = None  # badge point -> box point


@dataclass(frozen=True)
class Placement:
    placed: list[Placed]
    unplaced: list[str]  # refs whose badge fits nowhere, in page order


def badge_size(ref: str) -> tuple[float, float]:
    return len(ref) * CHAR_WIDTH + 2 * PAD_X, BADGE_HEIGHT


def _adjacent(box: Rect, w: float, h: float) -> list[Rect]:
    """Spots right beside the box, outside it, most natural first."""
    g = GAP
    return [
        Rect(box.x, box.y - h - g, w, h),  # above, left-aligned (reads like a tag)
        Rect(box.x - w - g, box.y, w, h),  # to the left, top-aligned
        Rect(box.right + g, box.y, w, h),  # to the right
        Rect(box.x, box.bottom + g, w, h),  # below, left-aligned
        Rect(box.right - w, box.y - h - g, w, h),  # above, right-aligned
        Rect(box.right - w, box.bottom + g, w, h),  # below, right-aligned
        Rect(box.x - w - g, box.bottom - h, w, h),  # to the left, bottom-aligned
        Rect(box.right + g, box.bottom - h, w, h),  # to the right, bottom-aligned
    ]


def _ring(box: Rect, w: float, h: float, distance: float) -> list[Rect]:
    """Spots around the box, ``distance`` from its edges (these need a leader line)."""
    cx, cy = box.x + box.width / 2, box.y + box.height / 2
    left, right = box.x - w - distance, box.right + distance
    top, bottom = box.y - h - distance, box.bottom + distance
    xs = [box.x, cx - w / 2, box.right - w, left, right]
    # Beside the box, also just above or below its edges: on a table, the leader then
    # runs in the gap between two rows instead of through the neighbouring button.
    ys = [box.y, cy - h / 2, box.bottom - h, box.y - h - 2, box.bottom + 2]
    out = [Rect(x, y, w, h) for y in (top, bottom) for x in xs]
    out += [Rect(x, y, w, h) for x in (left, right) for y in ys]
    return out


def _leader(badge: Rect, box: Rect) -> tuple[float, float, float, float]:
    """From the badge's nearest edge point to the box's nearest edge point."""
    bx = min(max(box.x + box.width / 2, badge.x), badge.right)
    by = min(max(box.y + box.height / 2, badge.y), badge.bottom)
    px = min(max(bx, box.x), box.right)
    py = min(max(by, box.y), box.bottom)
    return (round(bx, 1), round(by, 1), round(px, 1), round(py, 1))


def _leaders(badge: Rect, box: Rect) -> list[tuple[float, float, float, float]]:
    """Leader lines to try, the plain one (``_leader``) first; then to the box's corners
    and edge middles, each from the badge's point nearest to it: one of them may pass
    between the neighbours that the plain one runs through."""
    lines = [_leader(badge, box)]
    cx, cy = box.x + box.width / 2, box.y + box.height / 2
    for px, py in (
        (box.x, box.y),
        (box.right, box.y),
        (box.x, box.bottom),
        (box.right, box.bottom),
        (cx, box.y),
        (cx, box.bottom),
        (box.x, cy),
        (box.right, cy),
    ):
        bx = min(max(px, badge.x), badge.right)
        by = min(max(py, badge.y), badge.bottom)
        line = (round(bx, 1), round(by, 1), round(px, 1), round(py, 1))
        if line not in lines:
            lines.append(line)
    return lines


Edges = tuple[float, float, float, float]  # x1, y1, x2, y2


def _hits(a: Edges, b: Edges) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


Line = tuple[float, float, float, float]  # x1, y1, x2, y2


def _clip(line: Line, r: Edges) -> float:
    """The fraction of ``line`` inside the open rectangle ``r`` (Liang-Barsky clipping);
    touching an edge (a leader ends on its box's edge) is not inside."""
    x1, y1, x2, y2 = line
    dx, dy = x2 - x1, y2 - y1
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x1 - r[0]), (dx, r[2] - x1), (-dy, y1 - r[1]), (dy, r[3] - y1)):
        if p == 0:
            if q <= 0:
                return 0.0
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 >= t1:
            return 0.0
    return t1 - t0


def _through(line: Line, r: Edges) -> bool:
    """Whether ``line`` passes through ``r``'s inside (more than grazing it)."""
    return _clip(line, (r[0] + 0.5, r[1] + 0.5, r[2] - 0.5, r[3] - 0.5)) > 1e-6


def _cross(a: Line, b: Line) -> bool:
    """Whether two segments cross (a shared end point does not count)."""

    def side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    p1, p2, q1, q2 = (a[0], a[1]), (a[2], a[3]), (b[0], b[1]), (b[2], b[3])
    d1, d2 = side(q1, q2, p1), side(q1, q2, p2)
    d3, d4 = side(p1, p2, q1), side(p1, p2, q2)
    return d1 * d2 < 0 and d3 * d4 < 0


def place(
    boxes: list[tuple[str, float, float, float, float]],
    width: float,
    height: float,
    texts: list[tuple[float, float, float, float]] | None = None,
) -> Placement:
    """Badge positions for ``boxes`` (ref, x, y, w, h) inside a ``width`` x ``height`` image.

    ``texts`` are the page's text rectangles, which badges avoid when they can.
    Badges are placed in reading order (top to bottom, left to right).
    """
    items = [(ref, Rect(x, y, w, h)) for ref, x, y, w, h in boxes]
    order = sorted(range(len(items)), key=lambda i: (round(items[i][1].y), items[i][1].x))
    edges = [(b.x, b.y, b.right, b.bottom) for _, b in items]
    text_edges = [(x, y, x + w, y + h) for x, y, w, h in texts or []]
    placed_badges: list[Edges] = []
    leaders: list[Line] = []
    result: dict[int, Placed] = {}
    unplaced: list[str] = []
    for i in order:
        ref, box = items[i]
        w, h = badge_size(ref)
        reach = SEARCH_RADIUS + w + h
        area = (box.x - reach, box.y - reach, box.right + reach, box.bottom + reach)
        own = (box.x, box.y, box.right, box.bottom)

        # Plain tuples (x1, y1, x2, y2) in the hot loop: this runs for every candidate.
        # Other elements' boxes are off limits, except those that hold this one (a row
        # around its button): a badge may sit inside an ancestor.
        blocked = [
            b
            for j, b in enumerate(edges)
            if j != i
            and _hits(b, area)
            and not (b[0] <= own[0] and b[1] <= own[1] and b[2] >= own[2] and b[3] >= own[3])
        ]
        blocked += [b for b in placed_badges if _hits(b, area)]
        near_text = [t for t in text_edges if _hits(t, area)]
        near_leaders = [
            ln
            for ln in leaders
            if _hits((min(ln[0], ln[2]), min(ln[1], ln[3]), max(ln[0], ln[2]), max(ln[1], ln[3])), area)
        ]
        best: tuple[float, Rect, Line | None] | None = None
        rings: list[tuple[float, list[Rect]]] = [(0.0, _adjacent(box, w, h))]
        distance = float(STEP)
        while distance <= SEARCH_RADIUS:
            rings.append((distance, _ring(box, w, h, distance)))
            distance += STEP
        for distance, candidates in rings:
            # A moved badge costs at least its distance: once the best so far is cheaper,
            # no farther ring can win.
            if best is not None and best[0] <= distance + MOVE_COST:
                break
            for cand in candidates:
                x1, y1 = cand.x, cand.y
                x2, y2 = x1 + w, y1 + h
                if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
                    continue
                if x1 < own[2] and own[0] < x2 and y1 < own[3] and own[1] < y2:
                    continue
                if any(x1 < b[2] and b[0] < x2 and y1 < b[3] and b[1] < y2 for b in blocked):
                    continue
                if any(_through(ln, (x1, y1, x2, y2)) for ln in near_leaders):
                    continue  # it would sit on another badge's leader line
                covered = 0.0
                for t in near_text:
                    ow = min(x2, t[2]) - max(x1, t[0])
                    oh = min(y2, t[3]) - max(y1, t[1])
                    if ow > 0 and oh > 0:
                        covered += ow * oh
                gap = cand.gap_to(box)
                cost = covered * TEXT_COST + gap
                line = None
                if gap > GAP + 0.5:
                    # Never through another element or badge, across another leader or
                    # through the page's text: a line the eye cannot follow to its box, or
                    # a price struck through.
                    line = next(
                        (
                            ln
                            for ln in _leaders(cand, box)
                            if not any(_through(ln, b) for b in blocked)
                            and not any(_cross(ln, other) for other in near_leaders)
                            and not any(_through(ln, t) for t in near_text)
                        ),
                        None,
                    )
                    if line is None:
                        continue
                    cost += MOVE_COST
                if best is None or cost < best[0]:
                    best = (cost, cand, line)
        if best is None:
            unplaced.append(ref)
            result[i] = Placed(ref, box, None)
            continue
        _, badge, leader = best
        placed_badges.append((badge.x, badge.y, badge.right, badge.bottom))
        if leader is not None:
            leaders.append(leader)
        result[i] = Placed(ref, box, badge, leader)
    return Placement([result[i] for i in range(len(items))], unplaced)
