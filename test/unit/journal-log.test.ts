// Logging into the systemd journal: each line carries its syslog priority (sd-daemon(3) `<N>` prefixes), so
// `journalctl -p warning` finds warnings; `auto` writes readable text there, `json` stays JSON for shippers;
// and the journal is recognised by JOURNAL_STREAM's device:inode, not by the variable alone.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger, isJournalStream, journalLine } from '../../src/log.js';
import { BIN, cleanEnv, serveArgs } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

function capture(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((l) => l !== ''),
      );
      callback();
    },
  });
  return { stream, lines };
}

test('in the journal, each line starts with its priority: readable text by default, JSON on request', () => {
  const text = capture();
  const logger = createLogger({ level: 'debug', format: 'auto', stream: text.stream, journal: true });
  logger.debug('d');
  logger.info({ port: 443, dataDir: '/var/lib/threatcol' }, 'threatcol is listening');
  logger.warn({ keys: ['server.port'], note: 'two words' }, 'needs a restart');
  logger.error({ err: 'line one\nline two' }, 'failed');
  logger.fatal('gone');
  assert.deepEqual(text.lines, [
    '<7>d',
    '<6>threatcol is listening port=443 dataDir=/var/lib/threatcol',
    '<4>needs a restart keys=["server.port"] note="two words"',
    '<3>failed err="line one\\nline two"',
    '<2>gone',
  ]);

  const json = capture();
  createLogger({ level: 'info', format: 'json', stream: json.stream, journal: true }).warn({ a: 1 }, 'w');
  assert.equal(json.lines.length, 1);
  assert.match(json.lines[0] as string, /^<4>\{/);
  assert.equal((JSON.parse((json.lines[0] as string).slice(3)) as { msg: string }).msg, 'w');

  // Outside the journal nothing changes: NDJSON without a prefix.
  const plain = capture();
  createLogger({ level: 'info', format: 'auto', stream: plain.stream }).warn('w');
  assert.equal((JSON.parse(plain.lines[0] as string) as { level: number }).level, 40);
});

test('a message cannot start a second journal entry or smuggle a priority', () => {
  const line = journalLine(JSON.stringify({ level: 30, msg: 'a\n<0>b', sensor: 'x\n<0>y' }), 'text');
  assert.equal(line.split('\n').length, 2);
  assert.match(line, /^<6>a <0>b sensor="x\\n<0>y"\n$/);
});

test('JOURNAL_STREAM counts only when it names the very file the fd is', (t) => {
  const dir = makeTempDir(t);
  const fd = openSync(join(dir, 'out'), 'w');
  const other = openSync(join(dir, 'other'), 'w');
  t.after(() => {
    closeSync(fd);
    closeSync(other);
  });
  const st = fstatSync(fd);
  assert.equal(isJournalStream(`${st.dev}:${st.ino}`, fd), true);
  assert.equal(isJournalStream(`${st.dev}:${st.ino}`, other), false);
  assert.equal(isJournalStream(undefined, fd), false);
  assert.equal(isJournalStream('garbage', fd), false);
});

test('serve with stdout on the journal stream writes priorities; an inherited variable changes nothing', async (t) => {
  const run = async (matching: boolean) => {
    const dataDir = makeTempDir(t);
    const out = join(makeTempDir(t), 'stdout');
    const fd = openSync(out, 'w');
    const st = fstatSync(fd);
    // Without --log-format: the default (auto), as the units run it.
    const args = serveArgs(dataDir).filter(
      (a, i, all) => a !== '--log-format' && all[i - 1] !== '--log-format',
    );
    const child = spawn(process.execPath, [BIN, ...args], {
      env: cleanEnv({ JOURNAL_STREAM: matching ? `${st.dev}:${st.ino}` : `${st.dev}:${st.ino + 1}` }),
      stdio: ['ignore', fd, 'pipe'],
    });
    closeSync(fd);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    t.after(() => child.kill('SIGKILL'));
    await until(() => readFileSync(out, 'utf8').includes('threatcol is listening'), 20_000, 'listening');
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    return readFileSync(out, 'utf8').trim().split('\n');
  };
  const journal = await run(true);
  assert.ok(
    journal.some((l) => /^<6>threatcol is listening address=127\.0\.0\.1 port=\d+ /.test(l)),
    journal.join('\n'),
  );
  assert.ok(
    journal.every((l) => /^<[0-7]>[^{]/.test(l)),
    journal.join('\n'),
  );
  const elsewhere = await run(false);
  assert.ok(
    elsewhere.every((l) => l.startsWith('{')),
    elsewhere.join('\n'),
  );
});
