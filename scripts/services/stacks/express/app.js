// The Express stacks of the benchmark study (scripts/services/stacks.sh): Express 5 in one
// process, one app for two PostgreSQL drivers chosen with DB_DRIVER: pg (node-postgres's
// pg.Pool) or postgres (porsager's postgres). Redis through node-redis. Configured from the
// environment: DATABASE_URL (PgBouncer's, in transaction mode), REDIS_URL, PORT, POOL_SIZE
// (default 10).
'use strict'

const fs = require('node:fs')
const path = require('node:path')
const express = require('express')
const { createClient } = require('redis')

const DRIVER = process.env.DB_DRIVER || 'pg'
const POOL_SIZE = Number(process.env.POOL_SIZE || 10)
const ACQUIRE_TIMEOUT_MS = 2000 // how long a request waits for a pooled connection
const QUERY_TIMEOUT_MS = 10000 // how long a statement may take once it has one
for (const v of ['DATABASE_URL', 'REDIS_URL', 'PORT']) {
  if (!process.env[v]) throw new Error(`${v} must be set`)
}
if (!(POOL_SIZE >= 1)) throw new Error('POOL_SIZE is a positive number')

// The installed version of a package, from its package.json beside this file.
function installed (name) {
  const file = path.join(__dirname, 'node_modules', name, 'package.json')
  return JSON.parse(fs.readFileSync(file, 'utf8')).version
}
const SERVER = `express/${installed('express')} ${DRIVER}/${installed(DRIVER)}`

class PoolExhausted extends Error {
  constructor () { super('pool exhausted: no connection within 2 s') }
}

// p, or a rejection with PoolExhausted after ACQUIRE_TIMEOUT_MS; onLate(value) gets what p
// gives after that (the connection to hand back).
async function withinAcquireTimeout (p, onLate) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new PoolExhausted()), ACQUIRE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([p, timeout])
  } catch (e) {
    if (e instanceof PoolExhausted) p.then(onLate, () => {})
    throw e
  } finally {
    clearTimeout(timer)
  }
}

// node-postgres: a parameterized query without a name goes as the unnamed statement, with
// Parse, Bind, Describe, Execute and Sync at once, so it works through PgBouncer in transaction
// mode as it is (a `name` would prepare a named statement, which would not). The pool's wait for
// a free client is bounded by connectionTimeoutMillis.
function pgStore () {
  const pg = require('pg')
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: POOL_SIZE,
    connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS
  })
  pool.on('error', (e) => console.error('pg pool:', e.message))
  return {
    async row (text, values) {
      let client
      try {
        client = await pool.connect()
      } catch (e) {
        if (/timeout exceeded when trying to connect/.test(e.message)) throw new PoolExhausted()
        throw e
      }
      let failed
      try {
        const r = await client.query({ text, values, rowMode: 'array' })
        return r.rows[0]
      } catch (e) {
        failed = e
        throw e
      } finally {
        // A connection that failed is dropped, not given back.
        client.release(failed && !failed.code ? failed : undefined)
      }
    },
    sqlDb: 'SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = $1',
    sqlTx: 'SELECT pgbench_tx($1, $2, $3, $4)'
  }
}

// porsager's postgres: prepare: false, since it otherwise prepares every statement under a
// name kept per connection, which PgBouncer in transaction mode may have left on another server
// connection; without it the unnamed statement is parsed and described, then bound and
// executed before one Sync (a Flush between), so within one server connection. Its pool has no
// wait limit (and pipelines queries on busy connections): a request reserves a connection
// (sql.reserve()) for its statement, waiting at most ACQUIRE_TIMEOUT_MS, as with the other
// drivers.
function postgresStore () {
  const postgres = require('postgres')
  const sql = postgres(process.env.DATABASE_URL, {
    max: POOL_SIZE,
    prepare: false,
    connect_timeout: ACQUIRE_TIMEOUT_MS / 1000,
    onnotice: () => {}
  })
  return {
    async row (text, values) {
      const conn = await withinAcquireTimeout(sql.reserve(), (late) => late.release())
      try {
        const q = conn.unsafe(text, values || []).values()
        const rows = await withinQueryTimeout(q, () => q.cancel())
        return rows[0]
      } finally {
        conn.release()
      }
    },
    sqlDb: 'SELECT aid, bid, abalance FROM pgbench_accounts WHERE aid = $1',
    sqlTx: 'SELECT pgbench_tx($1, $2, $3, $4)'
  }
}

// p, or a rejection after QUERY_TIMEOUT_MS (onTimeout is called then).
async function withinQueryTimeout (p, onTimeout) {
  let timer
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => { onTimeout(); reject(new Error('statement timed out')) }, QUERY_TIMEOUT_MS)
  })
  try {
    return await Promise.race([p, timeout])
  } finally {
    clearTimeout(timer)
  }
}

const db = { pg: pgStore, postgres: postgresStore }[DRIVER]()
if (!db) throw new Error(`DB_DRIVER is pg or postgres, not ${DRIVER}`)
const redis = createClient({ url: process.env.REDIS_URL, socket: { connectTimeout: QUERY_TIMEOUT_MS } })
redis.on('error', (e) => console.error('redis:', e.message))

const rand = (lo, hi) => lo + Math.floor(Math.random() * (hi - lo + 1))

function dbError (res, e) {
  res.status(e instanceof PoolExhausted ? 503 : 500).type('text/plain').send(`${e.message}\n`)
}

async function check (f) {
  try {
    await f()
    return 'ok'
  } catch (e) {
    // A refused connection is an AggregateError, its message empty, its errors' not.
    return `error: ${e.message || (e.errors || []).map((x) => x.message).join('; ') || e.name}`
  }
}
const checkPostgres = () => db.row('SELECT 1')
const checkRedis = () => withinQueryTimeout(redis.ping(), () => {})

const app = express()
app.disable('x-powered-by')
app.disable('etag')
app.use((req, res, next) => {
  res.set('Server', SERVER)
  next()
})
app.get('/', (req, res) => {
  res.type('text/plain').send('Hello, World!')
})
app.get('/db', async (req, res) => {
  try {
    const [aid, bid, abalance] = await db.row(db.sqlDb, [rand(1, 100000)])
    res.json({ aid, bid, abalance })
  } catch (e) {
    dbError(res, e)
  }
})
app.get('/tx', async (req, res) => {
  const [aid, tid, bid, delta] = [rand(1, 100000), rand(1, 10), 1, rand(-5000, 5000)]
  try {
    const [abalance] = await db.row(db.sqlTx, [aid, tid, bid, delta])
    res.json({ aid, tid, bid, delta, abalance })
  } catch (e) {
    dbError(res, e)
  }
})
app.get('/health/all', async (req, res) => {
  const mode = req.query.mode || 'sequential'
  let pg, rd
  if (mode === 'sequential') {
    pg = await check(checkPostgres)
    rd = await check(checkRedis)
  } else if (mode === 'concurrent') {
    [pg, rd] = await Promise.all([check(checkPostgres), check(checkRedis)])
  } else {
    return res.status(400).type('text/plain').send('mode is sequential or concurrent\n')
  }
  res.status(pg === 'ok' && rd === 'ok' ? 200 : 503).json({ postgres: pg, redis: rd, mode })
})
// Whatever else goes wrong is answered with its message, never a stack trace.
app.use((err, req, res, next) => {
  res.status(err.status || 500).type('text/plain').send(`${err.message}\n`)
})

redis.connect().catch((e) => console.error('redis connect:', e.message))
app.listen(Number(process.env.PORT), '127.0.0.1', (err) => {
  if (err) throw err
  console.log(`${SERVER} listening on 127.0.0.1:${process.env.PORT} (pool ${POOL_SIZE})`)
})
