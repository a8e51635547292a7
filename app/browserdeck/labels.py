"""Where each ref badge goes on a labelled screenshot: one placement for agents and people.

``POST /screenshot`` with ``labels`` draws a box around every element an agent can
act on and a badge with its ref (``e12``). The panel shows that same image, so
one placement serves both. The rules (issue 15):

* A badge sits outside its element's box, so it never covers the element's own
  text, and never on another badge or another element's box.
* It avoids the page's text (a field's label above its input: "Full name"), at a
  cost: a badge may move a little away to keep text readable.
* A badge that had to move away from its box gets a leader line back to it.
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
CROSS_COST = 200  # a leader line drawn across another element or badge is hard to follow


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
    ys = [box.y, cy - h / 2, box.bottom - h]
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


Edges = tuple[float, float, float, float]  # x1, y1, x2, y2


def _hits(a: Edges, b: Edges) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _crossings(line: tuple[float, float, float, float], rects: list[Edges]) -> int:
    """How many of ``rects`` the leader line passes through (sampled along the line)."""
    x1, y1, x2, y2 = line
    steps = max(2, int(max(abs(x2 - x1), abs(y2 - y1)) / 4))
    points = [(x1 + (x2 - x1) * i / steps, y1 + (y2 - y1) * i / steps) for i in range(1, steps)]
    return sum(
        1 for r in rects if any(r[0] < px < r[2] and r[1] < py < r[3] for px, py in points)
    )


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
        best: tuple[float, Rect] | None = None
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
                covered = 0.0
                for t in near_text:
                    ow = min(x2, t[2]) - max(x1, t[0])
                    oh = min(y2, t[3]) - max(y1, t[1])
                    if ow > 0 and oh > 0:
                        covered += ow * oh
                gap = cand.gap_to(box)
                cost = covered * TEXT_COST + gap
                if gap > GAP + 0.5:
                    cost += MOVE_COST + CROSS_COST * _crossings(_leader(cand, box), blocked)
                if best is None or cost < best[0]:
                    best = (cost, cand)
        if best is None:
            unplaced.append(ref)
            result[i] = Placed(ref, box, None)
            continue
        badge = best[1]
        placed_badges.append((badge.x, badge.y, badge.right, badge.bottom))
        leader = _leader(badge, box) if badge.gap_to(box) > GAP + 0.5 else None
        result[i] = Placed(ref, box, badge, leader)
    return Placement([result[i] for i in range(len(items))], unplaced)
