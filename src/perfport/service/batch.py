"""Questions that wait together, answered together: the daemon's coalescing of predictions.

A handler hands its prepared question to ``Coalescer.ask`` and awaits the answer. The first
question to arrive when nothing is queued schedules one run of the batch function for the
event loop's next turn (``call_soon``: no timer, no added wait beyond the handlers already
runnable); every question queued by then is answered by that one call, and those arriving
while it runs wait for the next. A lone question is therefore a batch of one, at once.

The batch function runs on the event loop, as the answer did before: a batch of the model's
work costs less than the hop to a worker thread and back for each question, and the loop
answers ``/v1/health`` between batches, never waiting longer than one (``most`` bounds it).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

MOST = 64  # questions per batch at most: the loop never waits longer than one such batch


@dataclass(frozen=True)
class BatchCounts:
    """How many batches were run and how many questions they held (a mean batch size)."""

    batches: int
    questions: int


class Coalescer(Generic[Item, Result]):
    """Runs ``work`` on every queued item at once. ``work`` returns, for each item in order,
    its result or the exception that item's asker gets; if ``work`` itself raises, every
    asker of that batch gets the exception. Use from one event loop."""

    def __init__(
        self, work: Callable[[Sequence[Item]], Sequence[Result | Exception]], most: int = MOST
    ) -> None:
        if most < 1:
            raise ValueError("a batch holds at least one question")
        self._work, self._most = work, most
        self._queue: list[tuple[Item, asyncio.Future[Result]]] = []
        self._scheduled = False
        self._batches = self._questions = 0

    @property
    def counts(self) -> BatchCounts:
        return BatchCounts(self._batches, self._questions)

    async def ask(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        self._queue.append((item, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._run)
        return await future

    def _run(self) -> None:
        taken, self._queue = self._queue[: self._most], self._queue[self._most :]
        if self._queue:  # more than one batch's worth: the rest at the loop's next turn
            asyncio.get_running_loop().call_soon(self._run)
        else:
            self._scheduled = False
        self._batches += 1
        self._questions += len(taken)
        try:
            results = self._work([item for item, _ in taken])
            if len(results) != len(taken):
                raise RuntimeError(f"a batch of {len(taken)} got {len(results)} answers")
        except Exception as exc:  # the batch function's own failure: every asker's answer
            results = [exc] * len(taken)
        for (_, future), result in zip(taken, results, strict=True):
            if future.done():  # its asker went away (a dropped connection cancels it)
                continue
            if isinstance(result, Exception):
                future.set_exception(result)
            else:
                future.set_result(result)
