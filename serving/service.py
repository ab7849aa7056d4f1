"""What runs a request: a worker thread per model, a batcher per batchable signature.

Signatures whose outputs are all 1-D (``serving_default``) are batched across requests when
batching is on; the others (``cross_attention``: padded pieces and weights) run per request.

Example:
    >>> service = ModelService(registry, BatchingOptions())
    >>> service.start()      # in the event loop (the app's lifespan)
    >>> await service.run(model, model.signature("serving_default"), (["Ein Hund."],))
    {'translation': array([b'A dog.'], dtype=object)}
    >>> await service.stop()
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from serving.batching import Batcher, BatchingOptions
from serving.registry import ModelRegistry, ServedModel, Signature
from serving.runner import ModelRunner

# At shutdown the requests in flight have been answered or given up (uvicorn's graceful period):
# a model call still running is nobody's, and is waited for this long only.
CLOSE_SECONDS = 2.0


class ModelService:
    """Runs the registry's models; :meth:`start` and :meth:`stop` belong to the event loop."""

    def __init__(self, registry: ModelRegistry, batching: BatchingOptions) -> None:
        self.registry, self.batching = registry, batching
        self._runners: dict[str, ModelRunner] = {}
        self._batchers: dict[tuple[str, str], Batcher] = {}

    def start(self) -> None:
        """Creates the worker threads and starts the batchers."""
        for name, model in self.registry.models.items():
            runner = self._runners[name] = ModelRunner(name, self.batching.max_enqueued_batches)
            if not self.batching.enabled:
                continue
            for signature in model.signatures.values():
                if signature.batchable:
                    batcher = Batcher(runner, signature, self.batching)
                    self._batchers[name, signature.name] = batcher
                    batcher.start()

    async def stop(self) -> None:
        """Stops the batchers and ends the worker threads, waiting for a running call at most
        ``CLOSE_SECONDS`` (then it is abandoned: the threads are daemons)."""
        for batcher in self._batchers.values():
            await batcher.stop()
        for runner in self._runners.values():
            await runner.close(CLOSE_SECONDS)
        self._batchers.clear()
        self._runners.clear()

    async def run(
        self, model: ServedModel, signature: Signature, columns: Sequence[list[str]]
    ) -> dict[str, np.ndarray]:
        """``signature``'s outputs for ``columns`` (one list of texts per input).

        Example:
            >>> outputs = await service.run(model, model.signature("serving_default"), [["Ja"]])
        """
        batcher = self._batchers.get((model.name, signature.name))
        if batcher is not None:
            return await batcher.run(columns)
        return await self._runners[model.name].call(signature, columns)
