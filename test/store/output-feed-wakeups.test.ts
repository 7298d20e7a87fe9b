// A files output feed filling a batch reads the segments again on its own timer (output-feed.ts), and watches
// them (inotify) only while it waits with nothing to read. Its watch used to stay open: every write of the writer
// woke the reading thread (the decisions engine's, the outputs'), a thousand times a second beside keep-alive
// ingest, while the batch filled for its quarter second anyway. Checked here by the watch itself, in
// /proc/self/fdinfo of this process's inotify descriptor: there while the feed waits for a first record, gone as
// soon as records come and the batch fills, while a writer in another process appends a line a millisecond. (The
// main thread's wake-ups are printed too; they also count the garbage collector's waits, which a busy box
// multiplies, so they are not what is asserted.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { openTestFeed } from '../helpers/file-feed.js';
import { recordsFromSpecs, writeDaySegments } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

/** This thread's voluntary context switches: each time it slept and was woken. */
function wakeUps(): number {
  const status = readFileSync(`/proc/self/task/${process.pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)?.[1]);
}

/** Whether this process holds an inotify watch on the file or directory whose inode is `ino`. */
function watching(ino: number): boolean {
  const mark = new RegExp(`\\bino:${ino.toString(16)}\\b`);
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      if (mark.test(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))) return true;
    } catch {
      // closed meanwhile (the readdir's own descriptor among them)
    }
  }
  return false;
}

/** Appends the lines of `from` to `to` one write each, a line a millisecond; prints "go" as it starts. */
const WRITER = `
const fs = require('node:fs');
const [from, to] = process.argv.slice(1);
const lines = fs.readFileSync(from, 'utf8').split('\\n').filter(Boolean);
const fd = fs.openSync(to, 'a');
const pause = new Int32Array(new SharedArrayBuffer(4));
process.stdout.write('go\\n');
for (const line of lines) {
  fs.writeSync(fd, line + '\\n');
  Atomics.wait(pause, 0, 0, 1);
}
fs.closeSync(fd);
`;

test('a feed filling a batch is not woken by each write of the writer', async (t) => {
  const dataDir = makeTempDir(t);
  const spec = { ageMinutes: 0, src: '198.51.100.1', dst: '198.51.100.2', threat: 'scan', sensor: 'fw1' };
  const records = recordsFromSpecs(
    Array.from({ length: 1001 }, () => ({ ...spec, criticality: 3 })),
    Date.now(),
  );
  writeDaySegments(dataDir, records.slice(0, 1));
  const day = (records[0]?.received_at as string).slice(0, 10).replaceAll('-', '');
  const segment = join(dataDir, 'threats', `${day}-000001.ndjson`);
  const lines = join(dataDir, 'lines.ndjson');
  writeFileSync(
    lines,
    records
      .slice(1)
      .map((r) => `${JSON.stringify(r)}\n`)
      .join(''),
  );
  const feed = await openTestFeed(dataDir, 'wakeups');
  t.after(() => feed.close());
  const signal = new AbortController().signal;
  // The record stored before: read and acked, then a pause, so what loading the modules left to finish in the
  // background (a first run's compile caches) is not counted below.
  const first = await feed.next({ maxRecords: 10, maxBytes: 1 << 20, waitMs: 0, signal });
  assert.equal(first.records.length, 1);
  await first.ack();
  await new Promise((resolve) => setTimeout(resolve, 500));

  // Nothing to read: the feed waits, watching the segments' directory.
  const threats = statSync(join(dataDir, 'threats')).ino;
  const before = wakeUps();
  const filling = feed.next({ maxRecords: 100_000, maxBytes: 1 << 26, waitMs: 1000, signal });
  await until(() => watching(threats), 10_000, 'the feed watching while it waits with nothing to read');

  const writer = spawn(process.execPath, ['-e', WRITER, lines, segment], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => writer.kill());
  // Records come: the batch fills for a second on its own timer, unwatched, while the writer goes on.
  await until(() => !watching(threats), 10_000, 'the watch ended once records came');
  let done = false;
  const settled = filling.then((b) => {
    done = true;
    return b;
  });
  let watchedWhileFilling = 0;
  while (!done) {
    if (watching(threats)) watchedWhileFilling++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const batch = await settled;
  const woken = wakeUps() - before;
  t.diagnostic(`${batch.records.length} records in the batch, main thread woken ${woken} times`);
  assert.ok(batch.records.length > 100, `the batch took what was written meanwhile: ${batch.records.length}`);
  assert.equal(watchedWhileFilling, 0, 'no watch while the batch filled');
});
