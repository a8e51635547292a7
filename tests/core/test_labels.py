"""Badge placement for labelled screenshots (browserdeck.labels): shared by the API and panel."""

from __future__ import annotations

import time

from browserdeck.labels import Rect, badge_size, place


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
