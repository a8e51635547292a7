"""The garbage collector of a long-running browserdeck process (big snapshots).

CPython runs a collection of its youngest generation every 700 net allocations of
container objects, an older one every tenth of those, and a full one, over every object
in the process, every tenth again. A snapshot of a big page makes tens of thousands of
short-lived containers (a tuple per line from the regex, a node per line for MCP's
compact form, a row per ref for the ref table), all freed by reference counting when the
call ends. With the default threshold they set off 15-20 collections per snapshot, and
the promotions led to full collections over the 135,000 objects of the loaded libraries
(Playwright, pydantic, the MCP SDK, FastAPI): measured in the service, 10 rounds of
snapshot, click, snapshot on the 2,000-element table spent 0.44 s collecting on a busy
machine, two full collections of 0.12 and 0.23 s among it (docs/performance.md, "Where a big
snapshot's time goes").

``settle()`` runs once the service has started. It moves what is loaded by then out of
the collector's sight (``gc.freeze``: modules, classes and the service's own objects,
which live as long as the process; one that becomes garbage in a cycle later is left to
the process's exit; nothing is collected first, which would hold up an MCP client's
first call) and raises the youngest generation's threshold so that a call's
temporaries are freed by reference counting before they count towards a collection.
Garbage in cycles is still collected, in larger batches.
"""

from __future__ import annotations

import gc

__all__ = ["YOUNG_THRESHOLD", "settle"]

# Net container allocations between two collections of the youngest generation: well
# above the ~15,000 that a snapshot of the 2,000-element table has alive at once, and
# small enough that one such collection stays a few milliseconds.
YOUNG_THRESHOLD = 50_000


def settle() -> None:
    """Freeze what is loaded so far and collect less often (see the module doc)."""
    # No collection first: on a service just started for an MCP client it would hold up
    # the client's first call by a full collection.
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), middle, old)
