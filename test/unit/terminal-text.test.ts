// The one cleaning of text printed to a terminal: no input leaves a control, C1 or bidi character in what the
// CLI writes (write() in cli/io.ts applies it to every human-readable output), line feeds of a laid-out text
// stay, and a stored line for --json stays the same JSON value.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import fc from 'fast-check';
import { logStream, write } from '../../src/cli/io.js';
import { clean, cleanText, safeJsonLine } from '../../src/cli/terminal-text.js';
import { createLogger } from '../../src/log.js';
import { until } from '../helpers/until.js';

const ACTIVE = /[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;
const ACTIVE_BUT_LF = /(?!\n)[\p{Cc}\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

test('terminal text: clean() leaves nothing a terminal acts on; cleanText() keeps only line feeds', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary' }), (s) => {
      assert.doesNotMatch(clean(s), ACTIVE);
      const text = cleanText(s);
      assert.doesNotMatch(text, ACTIVE_BUT_LF);
      assert.equal(text.split('\n').length, s.split('\n').length);
    }),
  );
  assert.equal(clean(undefined), '');
  assert.equal(clean(8080), '8080');
});

test('terminal text: write() cleans every line it prints', () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  write(out, 'AUTH_INVALID: \u001b]0;EVIL\u0007\u001b[2J\nsecond \u009b31m line\r');
  assert.equal(text, 'AUTH_INVALID: ?]0;EVIL??[2J\nsecond ?31m line?\n');
});

test('terminal text: safeJsonLine keeps the JSON value and drops raw CR and tab between tokens', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (value) => {
      const line = `{\t"v":\r${JSON.stringify(value)}}`;
      const safe = safeJsonLine(line);
      assert.doesNotMatch(safe, /[\r\t\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u);
      assert.deepEqual(JSON.parse(safe), JSON.parse(line));
    }),
  );
});

test('terminal text: a command log on a terminal keeps its colours but loses C1 and bidi controls', async () => {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean };
  out.isTTY = true;
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const logger = createLogger({ level: 'warn', format: 'auto', stream: logStream(out), isTty: true });
  logger.warn({ reason: 'refused \u009b2J \u001b]0;EVIL\u0007 \u202eevil' }, 'NATS is unreachable');
  await until(() => text.includes('NATS is unreachable'), 5000, 'the log line');
  assert.ok(text.includes('\u001b['), 'colours stay');
  assert.ok(!text.includes('\u0007'), 'the bell is quoted by pino-pretty');
  assert.doesNotMatch(text, /[\u0080-\u009f\u202a-\u202e]/u);
  assert.match(text, /refused \?2J/);
});
