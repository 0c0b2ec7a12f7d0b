"""The journey of bench/journey_vs_peers.sh for Locust: log in ONCE for the whole run, then
every journey is POST /items -> GET /items/{id} -> DELETE /items/{id} with the shared token.

    locust -f bench/journey/locustfile.py --headless --host http://127.0.0.1:PORT \
        -u USERS -r USERS -t 10s --stop-timeout 0 --json-file OUT/locust [--journey-rate N]

--journey-rate N (or JOURNEY_RATE=N): N journeys/s in total, whatever the number of users: every
journey waits for the next slot of one schedule shared by all users (slots 1/N s apart from the
first journey on), so -u is the most journeys in flight at once, like an open model with an
in-flight cap. A user that finds its slot already past starts at once (the journey is "late":
counted and reported at exit as `journey-pacer: ...`); no slot is skipped. 0 (default): closed
loop, every user starts its next journey as soon as its last one ends (wait_time constant(0)).

The id comes from the 201's JSON body ({"id":ID}), or from its Location header if the body has
none. A step whose status is not the expected one (201, 200, 204) counts as a failure in
Locust's stats and ends that journey. Completed journeys = successful DELETEs
(num_requests - num_failures of the DELETE entry in --json-file's output).
"""

import json
import logging
import os
import time

import gevent
from locust import FastHttpUser, constant, events, task
from locust.contrib.fasthttp import FastHttpSession
from locust.exception import StopTest

LOGIN_BODY = {"user": "bench", "password": "bench"}
ITEM_BODY = {"name": "x"}
ITEM_NAME = "/items/[id]"  # one stats entry per method for every id

_state = {"token": None, "auth": None, "pacer": None}


@events.init_command_line_parser.add_listener
def _options(parser):
    parser.add_argument(
        "--journey-rate",
        type=float,
        env_var="JOURNEY_RATE",
        default=0.0,
        help="journeys/s in total, shared by all users (0: closed loop at full speed)",
    )


class Pacer:
    """One schedule for all users: slot k is at t0 + k/rate."""

    def __init__(self, rate):
        self.interval = 1.0 / rate
        self.next = None
        self.scheduled = 0
        self.late = 0  # started more than 1 ms after their slot
        self.max_lag = 0.0

    def wait(self):
        now = time.monotonic()
        if self.next is None:
            self.next = now
        slot = self.next
        self.next += self.interval
        self.scheduled += 1
        if slot > now:
            gevent.sleep(slot - now)
        elif now - slot > 0.001:
            self.late += 1
            self.max_lag = max(self.max_lag, now - slot)


@events.test_start.add_listener
def _login(environment, **_kw):
    """Log in once, before any user starts; every user shares the token."""
    host = environment.host
    if not host:
        raise StopTest("journey: no --host given")
    session = FastHttpSession(base_url=host, request_event=environment.events.request, user=None)
    resp = session.post("/login", json=LOGIN_BODY, name="/login (once)")
    token = None
    if resp.status_code == 200:
        try:
            token = json.loads(resp.text or "")["access_token"]
        except (ValueError, KeyError, TypeError):
            token = None
    if not token:
        environment.process_exit_code = 2  # whatever --exit-code-on-error says
        raise StopTest(f"journey: POST {host}/login failed: status {resp.status_code}, error {resp.error!r}, body {resp.text!r:.200}")
    _state["token"] = token
    _state["auth"] = {"Authorization": f"Bearer {token}"}
    rate = getattr(environment.parsed_options, "journey_rate", 0.0) or 0.0
    _state["pacer"] = Pacer(rate) if rate > 0 else None
    logging.info("journey: logged in once; %s", f"fixed rate {rate:g} journeys/s" if rate > 0 else "closed loop")


@events.quitting.add_listener
def _report(environment, **_kw):
    p = _state["pacer"]
    if p is not None:
        logging.info("journey-pacer: scheduled=%d late=%d max_lag_ms=%.1f", p.scheduled, p.late, p.max_lag * 1e3)


class Journey(FastHttpUser):
    wait_time = constant(0)

    @task
    def journey(self):
        pacer = _state["pacer"]
        if pacer is not None:
            pacer.wait()
        auth = _state["auth"]
        with self.client.post("/items", json=ITEM_BODY, headers=auth, catch_response=True) as r:
            if r.status_code != 201:
                r.failure(f"status {r.status_code}")
                return
            item = None
            try:
                item = json.loads(r.text)["id"]
            except (ValueError, KeyError, TypeError):
                loc = r.headers.get("Location") or ""
                item = loc.rsplit("/", 1)[-1] or None
            if item is None:
                r.failure("no id in the 201 (JSON body nor Location)")
                return
        path = f"/items/{item}"
        with self.client.get(path, headers=auth, name=ITEM_NAME, catch_response=True) as r:
            if r.status_code != 200:
                r.failure(f"status {r.status_code}")
                return
        with self.client.delete(path, headers=auth, name=ITEM_NAME, catch_response=True) as r:
            if r.status_code != 204:
                r.failure(f"status {r.status_code}")
