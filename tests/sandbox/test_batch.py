"""Batched calls against a fake, compromised two-instance worker (no fork): a bad batch reply ends
the worker, a bad item only its instance, and fewer replies than calls keep the answered ones."""

from __future__ import annotations

import pytest

from sandbox.limits import Limits
from spade_core.records import StepResult


class FakeBatchChannel:
    """A fake ``WorkerChannel`` of a two-instance worker: scripted batch reply bodies."""

    def __init__(self, bodies):
        self.bodies = list(bodies)
        self.killed = False
        self.sent = []

    def wait_ready(self, deadline, limit, stage=None):
        return {"ok": 1, "instances": [{"ok": 1, "env_class": "FakeEnv", "closes": False}] * 2}

    def request(self, message, deadline, limit):  # one call: a plain request, a dict reply
        self.sent.append(message)
        reply = self.bodies.pop(0)
        assert isinstance(reply, dict), "several calls must go out as one batch request"
        return reply

    def request_body(self, message, deadline, limit, stage=None):
        self.sent.append(message)
        body = self.bodies.pop(0)
        assert isinstance(body, bytes)
        return body

    def kill(self):
        self.killed = True

    def exit_status(self, timeout=1.0):
        return None

    def close(self):
        pass


def _fake_pair(*bodies):
    from sandbox.batch import load_instances
    from sandbox.process_session import ProcessSession, WorkerLink

    channel = FakeBatchChannel(bodies)
    link = WorkerLink(channel, Limits(), 2)
    sessions = [ProcessSession(channel, Limits(), link, i) for i in range(2)]
    link.sessions.extend(sessions)
    load_instances(link)
    return channel, sessions


def _frames(*replies):
    import json

    from sandbox.protocol import frame

    return b"".join(frame(r if isinstance(r, bytes) else json.dumps(r).encode())
                    for r in replies)


def _step(**changes):
    reply = {"ok": 1, "observation": "o", "reward": 0.0, "terminated": False,
             "truncated": False, "info": {}}
    reply.update(changes)
    return reply


@pytest.mark.parametrize("body, category", [
    (_frames(_step(), _step(), _step()), "crash"),                 # more replies than calls
    (_frames(_step(), b"{not json"), "crash"),                     # a malformed reply
    (_frames(_step(), _step(observation="x" * 500_000)), "output_limit"),  # over one reply's size
    (_frames(_step())[:-3], "crash"),                              # a truncated frame
    (_frames(_step(), {"ok": 0, "category": "memory", "message": "m"}), "memory"),
])
def test_a_bad_batch_reply_ends_the_worker(body, category):
    from sandbox.batch import step_many

    channel, sessions = _fake_pair(body)
    results = step_many([(s, "a") for s in sessions])
    assert channel.sent[0]["op"] == "batch"
    assert [c["i"] for c in channel.sent[0]["calls"]] == [0, 1]
    assert channel.killed
    assert results[1].verdict.category == category
    assert all(s.failure is not None for s in sessions)


def test_a_bad_item_ends_only_its_instance_and_time_is_shared_out():
    from sandbox.batch import step_many

    channel, sessions = _fake_pair(_frames(_step(c=-5), _step(reward=11.0, c=float("inf"))),
                                   _step(observation="single"))
    first = step_many([(s, "a") for s in sessions])
    assert isinstance(first[0], StepResult)
    assert first[1].verdict.category == "interface" and not channel.killed
    assert sessions[0].busy > 0 and sessions[1].busy > 0  # bogus CPU times: even shares
    second = step_many([(sessions[0], "b"), (sessions[1], "c")])
    assert second[0].observation == "single" and channel.sent[-1] == {"op": "step",
                                                                      "action": "b", "i": 0}
    assert second[1].verdict is first[1].verdict


def test_fewer_replies_than_calls_keep_the_answered_ones():
    from sandbox.batch import step_many

    channel, sessions = _fake_pair(_frames(_step()))
    results = step_many([(s, "a") for s in sessions])
    assert isinstance(results[0], StepResult)
    assert results[1].verdict.category == "crash" and "answered 1 of 2" in \
        results[1].verdict.message
    assert channel.killed
