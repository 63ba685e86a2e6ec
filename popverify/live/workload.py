"""Producers and POP consumers through the official Python client (rocketmq-python-client),
recording every operation in the history.

A POP consumer is a ``SimpleConsumer``: ``receive`` pops through the proxy, ``ack`` and
``change_invisible_duration`` answer with the receipt handle. What a consumer does with each
message (ack, change the invisible time then ack, drop it without ack, be slow) and the
invisible times it asks for are drawn from a generator seeded per consumer, so a run can be
repeated as far as a real broker's timing allows.
"""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import attrs

from popverify.live.history import History, parse_handle

TOPIC = "PopVerifyTopic"
GROUP = "PopVerifyGroup"
# The proxy refuses receive invisible times under 10 s (ProxyConfig#minInvisibleTimeMillsForRecv).
INVISIBLE_CHOICES_S = (10, 12, 15)
CHANGE_CHOICES_S = (10, 12)
SEND_INTERVAL_S = 0.1
LONG_POLL_S = 2
# The drain is quiet when nothing was delivered for longer than any invisible time asked for
# plus revive's margin: a message still owed would have come back by then.
QUIET_S = max(INVISIBLE_CHOICES_S + CHANGE_CHOICES_S) + 8


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {str(err)[:200]}"


def _is_timeout(err: BaseException) -> bool:
    """Indeterminate: the request may have reached the broker. Only an answer from the proxy
    (a ClientException with its code) or an error raised before sending is a definite fail."""
    if type(err).__name__ == "AioRpcError":
        return True  # transport error: the proxy may have forwarded it before the connection broke
    text = f"{type(err).__name__} {err}".lower()
    if "40018" in text:
        return False  # the proxy refused a long poll whose client deadline was too close: nothing done
    return "timeout" in text or "deadline" in text


@attrs.frozen
class Behaviour:
    """How a consumer answers deliveries (probabilities out of 100; the rest is a clean ack)."""

    drop: int = 8            # keep no promise: neither ack nor change (redelivered after the deadline)
    change: int = 12         # changeInvisibleDuration, then ack
    ack_timeout: int = 30    # inside a client-timeout fault window: the client gives up waiting at once
    fake_acks: int = 0       # test-only broken client: records this many acks it never sends, then crashes
    skip_processing: int = 0  # test-only broken push client: CONSUME_SUCCESS for this many messages never processed


@attrs.define
class Consumer:
    """One SimpleConsumer on its own thread; ``crash`` makes it abandon what it holds."""

    name: str
    endpoint: str
    history: History
    rng: random.Random
    behaviour: Behaviour
    # Above the long poll plus the proxy's reserve: with 3 s a loaded proxy answered 40018
    # ("deadline time remaining is not enough for polling").
    request_timeout_s: int = 5
    tls: bool = False
    draining: threading.Event = attrs.Factory(threading.Event)
    timeout_window: threading.Event = attrs.Factory(threading.Event)
    stopping: threading.Event = attrs.Factory(threading.Event)
    crashed: threading.Event = attrs.Factory(threading.Event)
    thread: threading.Thread | None = None
    faked: int = 0
    _client: Any = None
    _pool: ThreadPoolExecutor = attrs.Factory(lambda: ThreadPoolExecutor(max_workers=2))

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self.thread.start()

    def _connect(self) -> Any:
        from rocketmq import ClientConfiguration, Credentials, FilterExpression, SimpleConsumer

        config = ClientConfiguration(self.endpoint, Credentials(), request_timeout=self.request_timeout_s)
        client = SimpleConsumer(config, GROUP, {TOPIC: FilterExpression()}, await_duration=LONG_POLL_S,
                                tls_enable=self.tls)
        client.startup()
        return client

    def _run(self) -> None:
        self.history.add("info", "start", self.name)
        while not self.stopping.is_set() and self._client is None:
            try:
                self._client = self._connect()
            except Exception as err:  # noqa: BLE001 - the real client raises many kinds; record and retry
                self.history.add("info", "start", self.name, error=_error_text(err))
                time.sleep(1)
        # The proxy answers receive with an error until the client's settings reached it over
        # the telemetry stream (ReceiveMessageActivity#receiveMessage: settings null).
        time.sleep(2)
        while not self.stopping.is_set() and not self.crashed.is_set():
            invisible = self.rng.choice(INVISIBLE_CHOICES_S)
            batch = self.rng.randint(1, 8)
            self.history.add("invoke", "receive", self.name, value={"max": batch, "invisible_s": invisible})
            try:
                messages = self._client.receive(batch, invisible)
            except Exception as err:  # noqa: BLE001
                self.history.add("timeout" if _is_timeout(err) else "fail", "receive", self.name,
                                 error=_error_text(err))
                time.sleep(0.5)
                continue
            keys = []
            for msg in messages:
                keys.append(self._key(msg))
            self.history.add("ok", "receive", self.name, value=len(messages))
            for msg in messages:
                handle = parse_handle(msg.receipt_handle or "")
                self.history.add("info", "deliver", self.name, key=self._key(msg), handle=msg.receipt_handle,
                                 topic=msg.topic, queue=handle.queue_id if handle else None,
                                 offset=handle.offset if handle else None, value={"attempt": msg.delivery_attempt,
                                                                                  "message_id": msg.message_id})
            for msg in messages:
                if self.crashed.is_set():
                    break  # a crash abandons every message the consumer holds
                self._handle(msg)
        self._shutdown()

    @staticmethod
    def _key(msg: Any) -> str | None:
        keys = sorted(msg.keys or ())
        return keys[0] if keys else None

    def _handle(self, msg: Any) -> None:
        roll = self.rng.randrange(100)
        key = self._key(msg)
        drain = self.draining.is_set()
        if not drain and roll < self.behaviour.drop:
            self.history.add("info", "drop", self.name, key=key, handle=msg.receipt_handle)
            return
        if not drain and roll < self.behaviour.drop + self.behaviour.change:
            seconds = self.rng.choice(CHANGE_CHOICES_S)
            self.history.add("invoke", "change", self.name, key=key, handle=msg.receipt_handle, value=seconds)
            try:
                self._client.change_invisible_duration(msg, seconds)
            except Exception as err:  # noqa: BLE001
                self.history.add("timeout" if _is_timeout(err) else "fail", "change", self.name, key=key,
                                 error=_error_text(err))
                return
            # The client replaced the message's handle with the one the proxy returned.
            self.history.add("ok", "change", self.name, key=key, handle=msg.receipt_handle, value=seconds)
        self.history.add("info", "process", self.name, key=key)
        self.history.add("invoke", "ack", self.name, key=key, handle=msg.receipt_handle)
        if self.faked < self.behaviour.fake_acks:
            # Test-only broken client: claims the ack without sending it, and crashes after the last.
            self.faked += 1
            self.history.add("ok", "ack", self.name, key=key, handle=msg.receipt_handle)
            if self.faked == self.behaviour.fake_acks:
                self.crash()
            return
        give_up = not drain and self.timeout_window.is_set() and self.rng.randrange(100) < self.behaviour.ack_timeout
        try:
            if give_up:
                # The ack goes out on a helper thread; this consumer stops waiting after 1 ms, so
                # the ack may or may not take effect (SimpleConsumer#ack_async needs an asyncio
                # loop in the calling thread and cannot be used from here).
                self._pool.submit(self._client.ack, msg).result(timeout=0.001)
            else:
                self._client.ack(msg)
        except FutureTimeout:
            self.history.add("timeout", "ack", self.name, key=key, error="client gave up waiting")
            return
        except Exception as err:  # noqa: BLE001
            self.history.add("timeout" if _is_timeout(err) else "fail", "ack", self.name, key=key,
                             error=_error_text(err))
            return
        self.history.add("ok", "ack", self.name, key=key, handle=msg.receipt_handle)

    def _shutdown(self) -> None:
        self._pool.shutdown(wait=True)
        client, self._client = self._client, None
        if client is not None:
            try:
                client.shutdown()
            except Exception as err:  # noqa: BLE001 - shutting down against a dead proxy
                self.history.add("info", "stop", self.name, error=_error_text(err))

    def crash(self) -> None:
        """Abandon every held message (no ack, no change) and stop, as a killed process would."""
        self.history.add("info", "crash", self.name)
        self.crashed.set()

    def join(self, timeout: float) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout)


@attrs.define
class Producer:
    """Sends messages keyed ``k-<n>`` one after another until stopped."""

    endpoint: str
    history: History
    stopping: threading.Event = attrs.Factory(threading.Event)
    thread: threading.Thread | None = None
    sent: int = 0
    max_messages: int = 100_000
    tls: bool = False

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, name="producer", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        from rocketmq import ClientConfiguration, Credentials, Message
        from rocketmq import Producer as RmqProducer

        client = None
        while client is None and not self.stopping.is_set():
            try:
                client = RmqProducer(ClientConfiguration(self.endpoint, Credentials(), request_timeout=3), (TOPIC,),
                                     tls_enable=self.tls)
                client.startup()
            except Exception as err:  # noqa: BLE001
                self.history.add("info", "start", "producer", error=_error_text(err))
                client = None
                time.sleep(1)
        while not self.stopping.is_set() and self.sent < self.max_messages:
            key = f"k-{self.sent}"
            self.sent += 1
            msg = Message()
            msg.topic = TOPIC
            msg.body = key.encode()
            msg.keys = key
            self.history.add("invoke", "send", "producer", key=key)
            try:
                receipt = client.send(msg)
            except Exception as err:  # noqa: BLE001
                # Any failed send may still have been stored: indeterminate unless the proxy said no.
                self.history.add("timeout" if _is_timeout(err) else "fail", "send", "producer", key=key,
                                 error=_error_text(err))
                time.sleep(0.5)
                continue
            queue = int(str(receipt.message_queue).rsplit(".", 1)[1])
            self.history.add("ok", "send", "producer", key=key, queue=queue, offset=receipt.offset,
                             value={"message_id": receipt.message_id})
            time.sleep(SEND_INTERVAL_S)
        if client is not None:
            try:
                client.shutdown()
            except Exception as err:  # noqa: BLE001
                self.history.add("info", "stop", "producer", error=_error_text(err))

    def join(self, timeout: float) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout)
