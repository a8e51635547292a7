"""Fixtures of the approval tests: the shop site, and the person answering in the tray's
place where a test is about the core rather than the window (tests/gui has the window)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from browserdeck.door.approval import hub_of
from browserdeck.door.approval.asking import Answer, Question
from browserdeck.service import Service
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


def tray(service: Service, *answers: Answer | None) -> Person:
    """A person answering ``answers`` where the tray app's window would ask."""
    hub = hub_of(service.addons)
    assert hub is not None, "the service has no approval addon"
    person = Person(*answers)
    hub.set_tray(person)
    return person
