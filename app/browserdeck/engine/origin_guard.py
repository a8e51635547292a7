"""The front door's check of where an agent goes: an addon (``door/addons.py``).

A navigation (``NavigateOptions`` with a URL, its policies already applied) or a new
tab (``OpenTab``) to an origin the profile's ``allowedOrigins`` / ``blockedOrigins``
refuse is refused before it runs, with an error naming the rule; nothing starts and no
request leaves. What a page does by itself (a link, a redirect, a popup, a
subresource, a WebSocket) is refused in the browser (``engine/network.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from browserdeck.door.admin import OpenTab
from browserdeck.engine.options import NavigateOptions
from browserdeck.errors import BrowserdeckError
from browserdeck.policy import origins, urls

if TYPE_CHECKING:
    from browserdeck.config import Config
    from browserdeck.door.call import Call


class OriginGuard:
    def __init__(self, settings: Callable[[], Config]) -> None:
        self.settings = settings

    async def before(self, call: Call[Any]) -> None:
        request = call.request
        if isinstance(request, NavigateOptions) and request.action == "goto" and request.url:
            url = request.url  # as prepared: the URL that would load
        elif isinstance(request, OpenTab) and request.url:
            settings = self.settings()
            try:
                url = urls.prepare(request.url, allow_file_urls=settings.allow_file_urls)
            except BrowserdeckError:
                return  # the call refuses it itself, in its own words
        else:
            return
        rules = self.settings().origin_rules(call.profile)
        why = rules.refusal(url) if rules.active else None
        if why is not None:
            raise origins.refused(url, why)
