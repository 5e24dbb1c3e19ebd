"""The syrupy extension behind `prosec_snapshot` (imported only when that fixture is used).

The snapshot file is the compiled intent in exactly the bytes `prosec build` writes to
`dist/manifest.next.json`, so a reviewer can diff it against a build and `cp` one over
the other. A mismatch explains itself: the review of `intent_diff` (edges, nodes, facets,
canonicalizer rules, wake sources first; fingerprints last) comes before syrupy's line
diff, so the reason for the change is on the first lines pytest shows.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension

from .codegen.intent import dumps
from .intent_diff import review

__all__ = ["CompiledIntentExtension"]


class CompiledIntentExtension(JSONSnapshotExtension):
    """syrupy's JSON extension, writing and reviewing compiled intents."""

    def serialize(self, data: Any, **options: Any) -> Any:
        if isinstance(data, Mapping) and not any(options.values()):
            return dumps(data).decode("utf-8")
        # anything else, or a test using syrupy's include/exclude/matcher: syrupy's own form
        return super().serialize(data, **options)

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        try:
            before, after = json.loads(str(snapshot_data)), json.loads(str(serialized_data))
        except ValueError:
            before = after = None
        if before is not None and isinstance(after, Mapping):
            found = review(before, after)
            if not found.empty:
                yield from found.lines()
                yield "the snapshot's lines (- snapshot, + now):"
        yield from super().diff_lines(serialized_data, snapshot_data)
