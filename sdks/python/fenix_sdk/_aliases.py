"""The API's own name for each field the generator renamed.

openapi-python-client renames a field that would shadow a Python builtin
(`type` becomes `type_`), so an event's type would read `event.type_`. Each
such field is also readable under the API's name (`event.type`), so results
keep the API's field names as the other SDKs' do. Read-only: set `type_`.
"""

from __future__ import annotations

import builtins
import inspect

import attrs

from ._generated import models


def _reader(field: str) -> property:
    return property(lambda self: getattr(self, field), doc=f"The API's `{field[:-1]}` (also `{field}`).")


def add_api_names() -> None:
    """Adds the API-named property to every generated model with a renamed field."""
    for _, model in inspect.getmembers(models, inspect.isclass):
        if not attrs.has(model):
            continue
        for field in attrs.fields_dict(model):
            api_name = field[:-1]
            if field.endswith("_") and hasattr(builtins, api_name) and api_name not in vars(model):
                setattr(model, api_name, _reader(field))
