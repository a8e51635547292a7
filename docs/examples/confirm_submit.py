"""An example addon: a person confirms each click on a form's submit button.

Register it on a service (``service.addons.add(ConfirmSubmit(ask))``, as
``master.build_service`` adds the activity log). ``ask`` is how the person is asked:
the tray would show a dialog; here it is any coroutine that answers True or False.
tests/core/test_door_addons.py runs this very file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from browserdeck.door.call import Call, Element
from browserdeck.engine.acts import ClickAct
from browserdeck.errors import Forbidden

Ask = Callable[[str, Element], Awaitable[bool]]


class ConfirmSubmit:
    def __init__(self, ask: Ask, *, within: float = 120.0) -> None:
        self.ask = ask
        self.within = within  # how long a person may take before the click is refused

    async def before(self, call: Call[Any]) -> None:
        if not isinstance(call.request, ClickAct):
            return
        element = await call.element(detail=True)  # role, name, box and its form's fields
        if element is None or element.form is None or element.role != "button":
            return
        question = f"{call.caller.label} wants to submit a form of {len(element.form)} fields"
        try:
            # The call waits here: a pause is an await.
            yes = await asyncio.wait_for(self.ask(question, element), self.within)
        except TimeoutError:
            yes = False
        if not yes:
            # A refusal is an error the caller reads, in its own words (an agent too).
            raise Forbidden(
                f"the user did not allow clicking {element.describe()}",
                hint="ask the user, or do something else",
                code="refused_by_user",
            )
        call.note("the user confirmed this submit")  # appended to the answer's note

    async def after(self, call: Call[Any]) -> None:
        pass  # nothing to do once the click ran (or failed)
