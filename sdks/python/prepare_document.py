"""Prepares the API document for openapi-python-client (run by generate.sh).

The document names one error schema per route and status (`GetAppError404`:
`ErrorBody` with `code` narrowed to the codes that answer can carry). The
Python SDK reads every refusal the same way, into `FenixError` with its
`code` (all codes are the `ErrorCode` enum), so each answer that refers to
such a schema refers to `ErrorBody` instead, and the schemas are left out:
kept, they would be some 900 generated modules that no call uses.

Usage: prepare_document.py IN OUT
"""

import json
import sys

ERROR_BODY = "#/components/schemas/ErrorBody"


def narrowed_errors(schemas):
    """Names of the schemas that are `ErrorBody` narrowed (`allOf` starting with it)."""
    return {
        name
        for name, schema in schemas.items()
        if isinstance(schema.get("allOf"), list) and schema["allOf"] and schema["allOf"][0].get("$ref") == ERROR_BODY
    }


def main(source, target):
    with open(source, encoding="utf-8") as f:
        document = json.load(f)
    schemas = document.get("components", {}).get("schemas", {})
    narrowed = {f"#/components/schemas/{name}" for name in narrowed_errors(schemas)}
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for response in operation.get("responses", {}).values():
                for media in response.get("content", {}).values():
                    if media.get("schema", {}).get("$ref") in narrowed:
                        media["schema"] = {"$ref": ERROR_BODY}
    for ref in narrowed:
        del schemas[ref.rsplit("/", 1)[1]]
    with open(target, "w", encoding="utf-8") as f:
        json.dump(document, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
