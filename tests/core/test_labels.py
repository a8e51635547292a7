"""Badge placement for labelled screenshots (browserdeck.util.labels): shared by the API and panel."""

from __future__ import annotations

import time

from browserdeck.util.labels import Rect, badge_size, place


def _badges(placement):  # type: ignore[no-untyped-def]
    return [p.badge for p in placement.placed if p.badge is not None]


def test_badge_sits_outside_its_box_and_off_the_label_text() -> None:
    # A labelled field: "Full name" text right above the input, as on a form.
    label_text = (20.0, 40.0, 70.0, 16.0)
    placement = place([("e1", 20, 58, 200, 24)], 800, 600, texts=[label_text])
    [p] = placement.placed
    assert p.badge is not None and placement.unplaced == []
    assert p.badge.overlap(p.box) == 0, "the badge must not cover the element's own text"
    assert p.badge.overlap(Rect(*label_text)) == 0, "nor the field's label"


def test_dense_table_badges_never_overlap_each_other_or_other_buttons() -> None:
    # 12 rows x 3 buttons, 4 px apart: the old overlay piled tags on the buttons above.
    boxes = []
    for row in range(12):
        for col in range(3):
            boxes.append((f"e{row * 3 + col + 10}", 300 + col * 64, 40 + row * 26, 60, 22))
    placement = place(boxes, 1000, 400)
    badges = _badges(placement)
    elements = [p.box for p in placement.placed]
    for i, a in enumerate(badges):
        assert all(a.overlap(b) == 0 for b in badges[i + 1 :]), "badges overlap"
        assert all(a.overlap(e) == 0 for e in elements), "a badge covers a button"
    # Every ref is either drawn or listed, none silently dropped.
    assert len(badges) + len(placement.unplaced) == len(boxes)
    moved = [p for p in placement.placed if p.leader is not None]
    assert moved, "in a table this dense some badges move, with a leader line"
    for p in moved:
        assert p.badge is not None and p.badge.gap_to(p.box) > 1


def test_a_badge_that_fits_nowhere_is_listed() -> None:
    # The box fills the image: no room outside it.
    placement = place([("e7", 0, 0, 100, 50)], 100, 50)
    assert placement.unplaced == ["e7"] and placement.placed[0].badge is None


def test_badge_size_fits_the_ref() -> None:
    assert badge_size("e1")[0] < badge_size("e123")[0]


def test_placement_is_quick_for_150_boxes() -> None:
    boxes = [(f"e{i}", (i % 10) * 120 + 10, (i // 10) * 40 + 20, 100, 20) for i in range(150)]
    texts = [((i % 10) * 120 + 10, (i // 10) * 40 + 5, 60, 12) for i in range(150)]
    started = time.perf_counter()
    placement = place(boxes, 1280, 720, texts)
    assert time.perf_counter() - started < 10  # a no-hang bound, not a speed claim
    assert len(_badges(placement)) + len(placement.unplaced) == 150


def _helpdesk() -> tuple[list[tuple[str, float, float, float, float]], list[tuple[float, ...]]]:
    """The dense table of the panel's screenshot (docs/screenshots: "Open tickets"): per
    row a ticket number, a subject and a customer in text, then Open / Assign / Close
    buttons 4 px apart; rows 38 px apart; links in the header."""
    boxes: list[tuple[str, float, float, float, float]] = [
        ("e4", 480, 222, 56, 22),
        ("e5", 558, 222, 86, 22),
        ("e6", 666, 222, 62, 22),
    ]
    texts: list[tuple[float, ...]] = [(296, 222, 150, 22), (480, 222, 56, 22)]
    n = 7
    for row in range(12):
        y = 348 + row * 38
        texts += [(685, y + 6, 34, 18), (737, y + 6, 160, 18), (918, y + 6, 150, 18)]
        for col, (x, w) in enumerate(((1078, 58), (1141, 66), (1212, 58))):
            boxes.append((f"e{n}", x, y, w, 30))
            n += 1 if col < 2 else 6  # each row's buttons are refs e35, e36, e37, e43…
    return boxes, texts


def test_leader_lines_do_not_tangle_on_a_dense_table() -> None:
    """A badge is matched to its button without hovering: its leader line passes through
    no other element or badge, crosses no other leader, runs through no text (a price
    struck through), and no badge sits on a leader."""
    boxes, texts = _helpdesk()
    placement = place(boxes, 1280, 713, texts=texts)  # type: ignore[arg-type]
    placed = [p for p in placement.placed if p.badge is not None]
    assert len(placed) + len(placement.unplaced) == len(boxes)
    # A badge with no clean spot is listed beside the image (never dropped, never tangled).
    assert len(placement.unplaced) <= len(boxes) * 2 // 5, placement.unplaced
    leaders = [p for p in placed if p.leader is not None]
    assert leaders, "on a table this dense some badges move, with a leader line"
    for p in leaders:
        line = p.leader
        assert line is not None
        for q in placement.placed:
            if q is not p:
                assert not _through(line, q.box), f"{p.ref}'s leader runs through {q.ref}"
                if q.badge is not None:
                    assert not _through(line, q.badge), f"{p.ref}'s leader runs under a badge"
                    assert not _on(q.badge, line), f"{q.ref}'s badge sits on {p.ref}'s line"
                if q.leader is not None:
                    assert not _cross(line, q.leader), f"{p.ref} and {q.ref}'s leaders cross"
        for t in texts:
            assert not _through(line, Rect(*t)), f"{p.ref}'s leader strikes through text {t}"


def _through(line: tuple[float, float, float, float], r: Rect) -> bool:
    """``line`` passes through ``r``'s inside (sampled every 0.5 px)."""
    x1, y1, x2, y2 = line
    steps = max(2, int(max(abs(x2 - x1), abs(y2 - y1)) * 2))
    for i in range(1, steps):
        px, py = x1 + (x2 - x1) * i / steps, y1 + (y2 - y1) * i / steps
        if r.x + 0.5 < px < r.right - 0.5 and r.y + 0.5 < py < r.bottom - 0.5:
            return True
    return False


def _on(badge: Rect, line: tuple[float, float, float, float]) -> bool:
    return _through(line, badge)


def _cross(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    def side(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    p1, p2, q1, q2 = (a[0], a[1]), (a[2], a[3]), (b[0], b[1]), (b[2], b[3])
    return side(q1, q2, p1) * side(q1, q2, p2) < 0 and side(p1, p2, q1) * side(p1, p2, q2) < 0
