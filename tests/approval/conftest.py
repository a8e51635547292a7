"""Fixtures of the approval tests: the shop site, and the person answering in the tray's
place where a test is about the core rather than the window (tests/gui has the window)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from browserdeck.door.approval.asking import Answer, Question
from tests.approval.site import Site, serve


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as served:
        yield served


class Person:
    """Answers questions as the tray's person would: each in turn, as told (``answers``),
    or not at all (``None``: the question waits until its time is up)."""

    name = "the tray"

    def __init__(self, *answers: Answer | None) -> None:
        self.answers: list[Answer | None] = list(answers)
        self.questions: list[Question] = []
        self.asked = asyncio.Event()

    async def ask(self, question: Question) -> Answer:
        self.questions.append(question)
        self.asked.set()
        answer = self.answers.pop(0) if self.answers else "deny"
        if answer is None:
            await asyncio.Event().wait()  # never answers: the timeout decides
        assert answer is not None
        return answer
