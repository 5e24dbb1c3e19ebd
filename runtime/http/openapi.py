"""The OpenAPI description of the server (`/openapi.json`) and a page that reads it (`/docs`).

Written by hand from the endpoints' contracts; the docs page is rendered here, so it
needs nothing from the network.
"""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["docs_html", "openapi"]

_JSON = {"application/json": {"schema": {"type": "object"}}}
_ERROR = {
    "description": "an error",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}
_DENIED = {
    "401": {
        "description": "missing or wrong credentials (nothing ran)",
        **{k: v for k, v in _ERROR.items() if k != "description"},
    }
}


def _get(summary: str, description: str, secured: bool = True, **extra: Any) -> dict[str, Any]:
    op: dict[str, Any] = {
        "summary": summary,
        "description": description,
        "responses": {
            "200": {"description": "OK", "content": _JSON},
            **(_DENIED if secured else {}),
        },
    }
    if not secured:
        op["security"] = []
    op.update(extra)
    return {"get": op}


def openapi() -> dict[str, Any]:
    trigger = {
        "summary": "Wake a gateway with external data",
        "description": (
            "The JSON body becomes the gateway's trigger data, fingerprinted by its content. "
            "The wake is queued durably before the answer; 202 names the run that took it "
            "when known within the acknowledgement window, else `run_id` is null and "
            "`GET /wakes/{wake_id}` tells later. Wakes arriving during a run coalesce."
        ),
        "parameters": [
            {"name": "gateway", "in": "path", "required": True, "schema": {"type": "string"}}
        ],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {}}}},
        "security": [{"bearer": []}, {"signature": []}],
        "responses": {
            "202": {
                "description": "queued",
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Accepted"}}
                },
            },
            "400": {**_ERROR, "description": "malformed JSON (the reason is given)"},
            **_DENIED,
            "404": {**_ERROR, "description": "no such node"},
            "413": {**_ERROR, "description": "the body is over the limit"},
            "422": {**_ERROR, "description": "the node is not a gateway"},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "prosec serve", "version": "1"},
        "security": [{"bearer": []}],
        "components": {
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "PROSEC_SERVE_TOKEN"},
                "signature": {
                    "type": "apiKey",
                    "in": "header",
                    "name": "X-Prosec-Signature",
                    "description": "sha256=HMAC-SHA256(PROSEC_WEBHOOK_SECRET, body) in hex (X-Hub-Signature-256 is read too)",
                },
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": {"error": {"type": "string"}},
                    "required": ["error"],
                },
                "Accepted": {
                    "type": "object",
                    "properties": {
                        "wake_id": {"type": "string"},
                        "gateway": {"type": "string"},
                        "token": {"type": "string"},
                        "state": {"enum": ["queued", "running", "done"]},
                        "run_id": {"type": ["string", "null"]},
                    },
                },
            },
        },
        "paths": {
            "/health": _get(
                "Liveness", "200 while the server runs; needs no credentials.", secured=False
            ),
            "/status": _get("Status", "Node heads, recent runs, the reconciler's state."),
            "/cost": _get("Cost", "Fresh vs reused tokens by node and by surprise cause."),
            "/runs": _get("Runs", "Recent runs, newest first; `?limit=` (1-500)."),
            "/runs/{run_id}": _get("One run", "What a run did, event by event."),
            "/wakes/{wake_id}": _get("One wake", "Queued, running or done, and its run."),
            "/trigger/{gateway}": {"post": trigger},
            "/api/scene": _get("Devtools scene", "The topology's SVG and the receipt timeline."),
            "/api/nodes/{node}": _get("Inspector", "A node's contract, receipts and versions."),
            "/api/nodes/{node}/versions/{address}": _get("Artifact", "One version's files."),
            "/api/nodes/{node}/diff": _get(
                "Version diff", "`?old=&new=`: a unified diff per file."
            ),
            "/api/events": _get("Live events", "Server-sent events: steps, scene, status."),
        },
    }


def docs_html() -> str:
    """A self-contained page listing every operation of `openapi()`."""
    spec = openapi()
    rows = []
    for path, item in spec["paths"].items():
        for method, op in item.items():
            codes = ", ".join(sorted(op.get("responses", {})))
            rows.append(
                f"<section><h2><code>{method.upper()} {escape(path)}</code></h2>"
                f"<p><b>{escape(op['summary'])}</b>. {escape(op['description'])}</p>"
                f"<p>Responses: {escape(codes)}</p></section>"
            )
    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>prosec serve API</title>"
        "<style>body{font:15px/1.5 system-ui,sans-serif;max-width:52em;margin:2em auto;padding:0 1em}"
        "code{background:#eef;padding:0 .3em}section{border-top:1px solid #ddd}</style>"
        "<h1>prosec serve API</h1><p>The machine-readable description is "
        "<a href=/openapi.json>/openapi.json</a>. Send <code>Authorization: Bearer $PROSEC_SERVE_TOKEN</code> "
        "when the server requires a token; webhooks may sign the body instead.</p>"
        + "".join(rows)
        + "</html>"
    )
