"""An answer model as the dict of its top-level fields that were set (JSON names).

The engine answers with models (results.py); engine tests read their fields by the
JSON names the API sends, and what an answer lists stays the models it holds.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def fields_of(answer: BaseModel) -> dict[str, Any]:
    declared = type(answer).model_fields
    out = {
        (declared[name].alias or name) if name in declared else name: getattr(answer, name)
        for name in answer.model_fields_set
    }
    out.update(answer.model_extra or {})
    return out
