"""The FastAPI stacks of the benchmark study (scripts/services/stacks.sh): FastAPI on uvicorn,
one app for two PostgreSQL drivers chosen with DB_DRIVER: asyncpg (its own pool) or psycopg
(psycopg 3's AsyncConnectionPool). Redis through redis-py's asyncio client. Configured from the
environment: DATABASE_URL (PgBouncer's, in transaction mode), REDIS_URL, POOL_SIZE (default 10);
uvicorn gets the port.
"""

import asyncio
import os
import random
from contextlib import asynccontextmanager
from importlib.metadata import version

import redis.asyncio as aioredis
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse

DRIVER = os.environ.get("DB_DRIVER", "asyncpg")
DATABASE_URL = os.environ["DATABASE_URL"]
REDIS_URL = os.environ["REDIS_URL"]
POOL_SIZE = int(os.environ.get("POOL_SIZE", "10"))
ACQUIRE_TIMEOUT = 2.0  # how long a request waits for a pooled connection
QUERY_TIMEOUT = 10.0  # how long a statement may take once it has one
SERVER = f"fastapi/{version('fastapi')} {DRIVER}/{version(DRIVER)}".encode()


class PoolExhausted(Exception):
    """No connection could be had from the pool within ACQUIRE_TIMEOUT."""


class Asyncpg:
    """asyncpg's pool. statement_cache_size=0: asyncpg otherwise prepares every statement under a
    name, kept per connection, that PgBouncer in transaction mode may have left on another
    server connection; without the cache it uses the unnamed statement, parsed and described
    then bound and executed before one Sync (a Flush between), so within one server connection.
    reset: a no-op, in place of the RESET ALL, UNLISTEN *, CLOSE ALL... that asyncpg sends at
    every release to clear session state, which transaction pooling rules out anyway, and that
    would cost every request a second round trip."""

    SQL_DB = "SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = $1"
    SQL_TX = "SELECT pgbench_tx($1, $2, $3, $4)"

    async def open(self):
        import asyncpg

        async def no_reset(_conn):
            pass

        self.pool = await asyncpg.create_pool(
            DATABASE_URL, min_size=0, max_size=POOL_SIZE, statement_cache_size=0, reset=no_reset
        )

    async def close(self):
        await self.pool.close()

    async def fetchrow(self, sql, *args):
        try:
            conn = await self.pool.acquire(timeout=ACQUIRE_TIMEOUT)
        except TimeoutError:
            raise PoolExhausted() from None
        try:
            return tuple(await conn.fetchrow(sql, *args, timeout=QUERY_TIMEOUT))
        finally:
            await self.pool.release(conn)


class Psycopg:
    """psycopg 3's AsyncConnectionPool. prepare_threshold=None: psycopg otherwise prepares a
    statement under a name after its 5th use on a connection, which PgBouncer in transaction
    mode may have left on another server connection; without it every statement goes as
    Parse, Bind, Describe, Execute and Sync at once, in the unnamed statement. autocommit: each
    statement is its own transaction, as with the other drivers, not BEGIN ... COMMIT around it."""

    SQL_DB = "SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = %s"
    SQL_TX = "SELECT pgbench_tx(%s, %s, %s, %s)"

    async def open(self):
        from psycopg_pool import AsyncConnectionPool

        self.pool = AsyncConnectionPool(
            DATABASE_URL,
            min_size=0,
            max_size=POOL_SIZE,
            timeout=ACQUIRE_TIMEOUT,
            kwargs={"prepare_threshold": None, "autocommit": True},
            open=False,
        )
        await self.pool.open()

    async def close(self):
        await self.pool.close()

    async def fetchrow(self, sql, *args):
        from psycopg_pool import PoolTimeout

        try:
            conn = await self.pool.getconn(timeout=ACQUIRE_TIMEOUT)
        except PoolTimeout:
            raise PoolExhausted() from None
        try:
            cur = await asyncio.wait_for(conn.execute(sql, args or None), QUERY_TIMEOUT)
            return await cur.fetchone()
        finally:
            await self.pool.putconn(conn)


db = {"asyncpg": Asyncpg, "psycopg": Psycopg}[DRIVER]()
rds = aioredis.from_url(REDIS_URL, socket_timeout=QUERY_TIMEOUT, socket_connect_timeout=QUERY_TIMEOUT)


@asynccontextmanager
async def lifespan(_app):
    await db.open()
    yield
    await db.close()
    await rds.aclose()


app = FastAPI(lifespan=lifespan, openapi_url=None, docs_url=None, redoc_url=None)


def db_error(e):
    """503 when the pool gave no connection in time, else 500 with the error's text."""
    if isinstance(e, PoolExhausted):
        return PlainTextResponse("pool exhausted: no connection within 2 s\n", status_code=503)
    return PlainTextResponse(f"{type(e).__name__}: {e}\n", status_code=500)


@app.get("/")
async def hello():
    return PlainTextResponse("Hello, World!")


@app.get("/db")
async def db_one():
    aid = random.randint(1, 100000)
    try:
        r = await db.fetchrow(db.SQL_DB, aid)
    except Exception as e:  # noqa: BLE001 - every failure is answered, none raised
        return db_error(e)
    return JSONResponse({"aid": r[0], "bid": r[1], "abalance": r[2]})


@app.get("/tx")
async def tx():
    aid, tid, bid, delta = random.randint(1, 100000), random.randint(1, 10), 1, random.randint(-5000, 5000)
    try:
        r = await db.fetchrow(db.SQL_TX, aid, tid, bid, delta)
    except Exception as e:  # noqa: BLE001
        return db_error(e)
    return JSONResponse({"aid": aid, "tid": tid, "bid": bid, "delta": delta, "abalance": r[0]})


async def check(coro):
    try:
        await coro
        return "ok"
    except Exception as e:  # noqa: BLE001
        return f"error: {type(e).__name__}: {e}"


async def check_redis():
    await asyncio.wait_for(rds.ping(), QUERY_TIMEOUT)


@app.get("/health/all")
async def health_all(mode: str = "sequential"):
    if mode == "sequential":
        pg = await check(db.fetchrow("SELECT 1"))
        rd = await check(check_redis())
    elif mode == "concurrent":
        pg, rd = await asyncio.gather(check(db.fetchrow("SELECT 1")), check(check_redis()))
    else:
        return PlainTextResponse("mode is sequential or concurrent\n", status_code=400)
    code = 200 if pg == "ok" and rd == "ok" else 503
    return JSONResponse({"postgres": pg, "redis": rd, "mode": mode}, status_code=code)


def with_server_header(inner):
    """ASGI middleware: the Server header on every response (uvicorn runs with
    --no-server-header, so it is the only one)."""

    async def wrapped(scope, receive, send):
        if scope["type"] != "http":
            return await inner(scope, receive, send)

        async def send_with_header(message):
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), (b"server", SERVER)]
            await send(message)

        return await inner(scope, receive, send_with_header)

    return wrapped


# uvicorn serves this: the FastAPI app wrapped in the header's middleware.
asgi = with_server_header(app)
