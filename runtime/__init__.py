"""prosec.runtime: canonical JSON, content addresses, receipts, state and the reconciler."""

__all__: list[str] = []
