"""PullRequest and PullMessageService: the push consumer's queue of pull requests
(client/impl/consumer/PullRequest.java, PullMessageService.java; seed 004).

Java's service thread takes requests from a LinkedBlockingQueue, and executePullRequestLater
parks them on a scheduled executor; the model keeps one list ordered by (due time, arrival)
on the virtual clock, so "immediately" is "due now, after those already due".
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

import attrs

from reference.client.process_queue import ProcessQueue
from reference.common.message_queue import MessageQueue


@attrs.define(eq=False)
class PullRequest:
    """PullRequest: one queue's pull cursor and its ProcessQueue."""

    consumer_group: str
    message_queue: MessageQueue
    process_queue: ProcessQueue
    next_offset: int
    previously_locked: bool = False


class PullMessageService:
    """Pull requests waiting to be executed, by due time."""

    def __init__(self, now: Callable[[], int]) -> None:
        self._now = now
        self._queue: list[tuple[int, int, PullRequest]] = []
        self._seq = 0

    def execute_pull_request_immediately(self, request: PullRequest) -> None:
        """executePullRequestImmediately: to the back of the queue, due now."""
        self.execute_pull_request_later(request, 0)

    def execute_pull_request_later(self, request: PullRequest, time_delay: int) -> None:
        """executePullRequestLater: due after ``time_delay`` ms."""
        heapq.heappush(self._queue, (self._now() + max(time_delay, 0), self._seq, request))
        self._seq += 1

    def next_due(self) -> int | None:
        """When the first request is due (None when there is none)."""
        return self._queue[0][0] if self._queue else None

    def take(self) -> PullRequest | None:
        """pullRequestQueue.take(): the first request that is due now, else None."""
        if not self._queue or self._queue[0][0] > self._now():
            return None
        return heapq.heappop(self._queue)[2]

    def pending(self) -> list[PullRequest]:
        """Requests waiting, in due order (inspection)."""
        return [r for _, _, r in sorted(self._queue)]

    def clear(self) -> None:
        """The service stops (shutdown or crash)."""
        self._queue.clear()
