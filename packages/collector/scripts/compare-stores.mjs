// Compares the two candidate stores for the collector on this machine: durable ingest rate and the
// admin dashboard's future queries over N synthetic items spread over 30 days. The figures feed
// docs/decisions/0004-collector-store.md. Run: node packages/collector/scripts/compare-stores.mjs [items]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { DuckDBInstance } from '@duckdb/node-api';

const TOTAL = Number(process.argv[2] ?? 1_000_000);
const BATCH = 500; // rows per durable commit, about what a group commit of a few requests holds
const DAY = 86_400_000;
const NOW = Date.now();

const COLUMNS = [
  'time',
  'type',
  'ikey',
  'name',
  'url',
  'session_id',
  'user_id',
  'auth_user_id',
  'operation_id',
  'duration_ms',
  'success',
  'result_code',
  'target',
  'message',
  'problem_id',
  'top_frame',
  'envelope',
];

// Deterministic pseudo-random numbers so both stores get the same data.
let seed = 42;
const rnd = () => {
  seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = (n) => Math.floor(rnd() * n);
const padding = 'x'.repeat(600);

function makeRow(i) {
  const r = rnd();
  const type =
    r < 0.4
      ? 'pageview'
      : r < 0.65
        ? 'dependency'
        : r < 0.8
          ? 'event'
          : r < 0.85
            ? 'exception'
            : r < 0.9
              ? 'trace'
              : r < 0.95
                ? 'metric'
                : r < 0.98
                  ? 'request'
                  : 'pageviewperformance';
  const session = pick(20_000);
  const page = pick(50);
  const row = {
    time: NOW - Math.floor(rnd() * 30 * DAY),
    type,
    ikey: 'ikey-1',
    name: type === 'exception' ? `TypeError${pick(20)}` : `name-${page}`,
    url: type === 'pageview' || type === 'request' ? `https://app.example/page/${page}` : null,
    session_id: `s${session}`,
    user_id: `u${session % 5000}`,
    auth_user_id: session % 3 === 0 ? `a${session % 5000}` : null,
    operation_id: `op${i}`,
    duration_ms: type === 'pageview' || type === 'dependency' || type === 'request' ? rnd() * 2000 : null,
    success: type === 'dependency' || type === 'request' ? (rnd() < 0.95 ? 1 : 0) : null,
    result_code: type === 'dependency' ? String(rnd() < 0.95 ? 200 : 500) : null,
    target: type === 'dependency' ? `api${pick(20)}.example` : null,
    message: type === 'exception' || type === 'trace' ? `message ${pick(40)}` : null,
    problem_id: null,
    top_frame: type === 'exception' ? `fn${pick(10)} (app.js:${pick(500)})` : null,
  };
  row.envelope = JSON.stringify({ ...row, padding });
  return row;
}

const rows = Array.from({ length: TOTAL }, (_, i) => makeRow(i));
const from24h = NOW - DAY;
const from30d = NOW - 30 * DAY;

function stats(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: +q(0.5).toFixed(1), p95: +q(0.95).toFixed(1) };
}

async function timeQuery(run, repeat = 7) {
  await run(); // warm-up
  const ms = [];
  for (let i = 0; i < repeat; i++) {
    const t = performance.now();
    await run();
    ms.push(performance.now() - t);
  }
  return stats(ms);
}

// The dashboard's queries, written once per dialect. p95 uses quantile_cont in DuckDB and a window
// function in SQLite (which has no percentile aggregate).
const queries = {
  overview: {
    sqlite: `SELECT count(DISTINCT user_id) AS n_users, count(DISTINCT session_id) AS n_sessions,
      sum(type='pageview') AS n_views, sum(type='exception') AS n_exceptions,
      sum(type='dependency' AND success=0) AS n_failed FROM items WHERE time >= ?`,
    duck: `SELECT count(DISTINCT user_id) AS n_users, count(DISTINCT session_id) AS n_sessions,
      count(*) FILTER (WHERE type='pageview') AS n_views, count(*) FILTER (WHERE type='exception') AS n_exceptions,
      count(*) FILTER (WHERE type='dependency' AND success=0) AS n_failed FROM items WHERE time >= $1`,
  },
  pages: {
    sqlite: `WITH v AS (SELECT url, user_id, duration_ms,
        row_number() OVER (PARTITION BY url ORDER BY duration_ms) rn, count(*) OVER (PARTITION BY url) n
        FROM items WHERE type='pageview' AND time >= ?)
      SELECT url, count(*) AS n_views, count(DISTINCT user_id) AS n_users, avg(duration_ms) AS avg_ms,
        max(CASE WHEN rn <= 0.95*n THEN duration_ms END) AS p95_ms FROM v GROUP BY url ORDER BY n_views DESC LIMIT 50`,
    duck: `SELECT url, count(*) AS n_views, count(DISTINCT user_id) AS n_users, avg(duration_ms) AS avg_ms,
        quantile_cont(duration_ms, 0.95) AS p95_ms FROM items WHERE type='pageview' AND time >= $1
        GROUP BY url ORDER BY n_views DESC LIMIT 50`,
  },
  exceptions: {
    sqlite: `SELECT name, message, top_frame, count(*) n, max(time) AS last_seen FROM items
      WHERE type='exception' AND time >= ? GROUP BY 1,2,3 ORDER BY n DESC LIMIT 50`,
    duck: `SELECT name, message, top_frame, count(*) n, max(time) AS last_seen FROM items
      WHERE type='exception' AND time >= $1 GROUP BY 1,2,3 ORDER BY n DESC LIMIT 50`,
  },
  dependencies: {
    sqlite: `WITH d AS (SELECT target, success, duration_ms,
        row_number() OVER (PARTITION BY target ORDER BY duration_ms) rn, count(*) OVER (PARTITION BY target) n
        FROM items WHERE type='dependency' AND time >= ?)
      SELECT target, count(*) calls, avg(success=0) failure_rate,
        max(CASE WHEN rn <= 0.5*n THEN duration_ms END) p50, max(CASE WHEN rn <= 0.95*n THEN duration_ms END) p95
      FROM d GROUP BY target ORDER BY calls DESC`,
    duck: `SELECT target, count(*) calls, avg(CASE WHEN success=0 THEN 1 ELSE 0 END) failure_rate,
        quantile_cont(duration_ms, 0.5) p50, quantile_cont(duration_ms, 0.95) p95
      FROM items WHERE type='dependency' AND time >= $1 GROUP BY target ORDER BY calls DESC`,
  },
  timeseries: {
    sqlite: `SELECT time/3600000 h, count(*) AS n_views, count(DISTINCT user_id) AS n_users FROM items
      WHERE type='pageview' AND time >= ? GROUP BY h ORDER BY h`,
    duck: `SELECT time//3600000 h, count(*) AS n_views, count(DISTINCT user_id) AS n_users FROM items
      WHERE type='pageview' AND time >= $1 GROUP BY h ORDER BY h`,
  },
  session: {
    sqlite: `SELECT time, type, name, operation_id FROM items WHERE session_id = ? ORDER BY time`,
    duck: `SELECT time, type, name, operation_id FROM items WHERE session_id = $1 ORDER BY time`,
  },
};

async function sqlite(dir) {
  const db = new Database(path.join(dir, 'telemetry.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -65536');
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, time INTEGER NOT NULL, type TEXT NOT NULL, ikey TEXT,
    name TEXT, url TEXT, session_id TEXT, user_id TEXT, auth_user_id TEXT, operation_id TEXT, duration_ms REAL,
    success INTEGER, result_code TEXT, target TEXT, message TEXT, problem_id TEXT, top_frame TEXT, envelope TEXT NOT NULL);
    CREATE INDEX items_time ON items(time); CREATE INDEX items_type_time ON items(type, time);
    CREATE INDEX items_session ON items(session_id, time); CREATE INDEX items_operation ON items(operation_id);`);
  const insert = db.prepare(
    `INSERT INTO items (${COLUMNS.join(',')}) VALUES (${COLUMNS.map((c) => '@' + c).join(',')})`,
  );
  const commit = db.transaction((batch) => {
    for (const row of batch) insert.run(row);
  });
  const t = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) commit(rows.slice(i, i + BATCH));
  const ingest = rows.length / ((performance.now() - t) / 1000);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.exec('ANALYZE');
  const out = { ingest: Math.round(ingest) };
  for (const [name, q] of Object.entries(queries)) {
    const stmt = db.prepare(q.sqlite);
    if (name === 'session') out[name] = await timeQuery(() => stmt.all('s123'));
    else {
      out[`${name} 24h`] = await timeQuery(() => stmt.all(from24h));
      out[`${name} 30d`] = await timeQuery(() => stmt.all(from30d));
    }
  }
  db.close();
  return out;
}

async function duck(dir) {
  const instance = await DuckDBInstance.create(path.join(dir, 'telemetry.duckdb'), {
    checkpoint_threshold: '256MB',
  });
  const con = await instance.connect();
  await con.run(`CREATE TABLE items (time BIGINT NOT NULL, type VARCHAR NOT NULL, ikey VARCHAR, name VARCHAR,
    url VARCHAR, session_id VARCHAR, user_id VARCHAR, auth_user_id VARCHAR, operation_id VARCHAR, duration_ms DOUBLE,
    success TINYINT, result_code VARCHAR, target VARCHAR, message VARCHAR, problem_id VARCHAR, top_frame VARCHAR,
    envelope VARCHAR NOT NULL)`);
  const t = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) {
    // One transaction per durable commit; the appender only fills it, COMMIT writes and syncs the WAL
    // off the main thread (node-api runs statements on libuv's pool).
    await con.run('BEGIN TRANSACTION');
    const app = await con.createAppender('items');
    for (const row of rows.slice(i, i + BATCH)) {
      for (const c of COLUMNS) {
        const v = row[c];
        if (v === null) app.appendNull();
        else if (c === 'time') app.appendBigInt(BigInt(v));
        else if (c === 'duration_ms') app.appendDouble(v);
        else if (c === 'success') app.appendTinyInt(v);
        else app.appendVarchar(v);
      }
      app.endRow();
    }
    app.closeSync();
    await con.run('COMMIT');
  }
  const ingest = rows.length / ((performance.now() - t) / 1000);
  await con.run('CHECKPOINT');
  const out = { ingest: Math.round(ingest) };
  for (const [name, q] of Object.entries(queries)) {
    if (name === 'session') out[name] = await timeQuery(() => con.runAndReadAll(q.duck, ['s123']));
    else {
      out[`${name} 24h`] = await timeQuery(() => con.runAndReadAll(q.duck, [BigInt(from24h)]));
      out[`${name} 30d`] = await timeQuery(() => con.runAndReadAll(q.duck, [BigInt(from30d)]));
    }
  }
  con.closeSync();
  instance.closeSync();
  return out;
}

const dir = mkdtempSync(path.join(tmpdir(), 'collector-compare-'));
try {
  console.info(`items: ${TOTAL}, commit batch: ${BATCH}`);
  const s = await sqlite(dir);
  const d = await duck(dir);
  console.info(['measure', 'sqlite', 'duckdb'].join('\t'));
  for (const key of Object.keys(s)) {
    const fmt = (v) => (typeof v === 'number' ? `${v} rows/s` : `p50 ${v.p50} ms, p95 ${v.p95} ms`);
    console.info([key, fmt(s[key]), fmt(d[key])].join('\t'));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
