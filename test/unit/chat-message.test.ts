// The chat alert (webhook format `slack`) and the mail digest quote records a sender wrote: whatever a record's
// fields hold, each stays on its own line and no field can form Slack markup (`<!channel>`, `<url|text>`), a
// mention (`@all`) or a markdown link in the message.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { buildDigest } from '../../src/outputs/receivers/email-digest.js';
import type { OutgoingRecord } from '../../src/outputs/receivers/receiver.js';
import { slackMessage } from '../../src/outputs/receivers/slack-message.js';
import type { StoredRecord } from '../../src/records/stored-record.js';
import { storedGenericRecord } from '../helpers/records.js';

const outgoing = (fields: Record<string, unknown>): OutgoingRecord => {
  const record = storedGenericRecord(fields) as unknown as StoredRecord;
  return { id: record.id, line: JSON.stringify(record), head: record, record };
};

/** Strings heavy in what could break a chat line: markup, entities, mentions, every kind of line break. */
const hostileUnit = fc.oneof(
  fc.constantFrom('<', '>', '&', '|', '@', '!', '[', ']', '(', ')', '`', '*', '_', '~', '#', ':', ';'),
  fc.constantFrom(
    '\n',
    '\r',
    '\r\n',
    '\u0085',
    '\u2028',
    '\u2029',
    '\u000b',
    '\u000c',
    '\t',
    '\u0000',
    '\u202e',
  ),
  fc.constantFrom(
    'amp;',
    'lt;',
    'gt;',
    'channel',
    'here',
    'all',
    'https://evil.example/login',
    '\ud83d\udea8',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const hostile = fc.string({ unit: hostileUnit, maxLength: 40 });
const anyValue = fc.oneof(hostile, fc.integer(), fc.constant(undefined), fc.constant(null));

const FIELDS = ['threat', 'src_ip', 'dst_ip', 'dst_port', 'protocol', 'sensor', 'received_at', 'criticality'];

/** What no field may bring into a chat message: markup brackets, a bare `&`, a line break, a mention. */
function assertClean(text: string, lines: number): void {
  const split = text.split('\n');
  assert.equal(split.length, lines, `one line per record: ${JSON.stringify(text)}`);
  for (const line of split) {
    assert.doesNotMatch(line, /[<>]/, line);
    assert.doesNotMatch(line, /&(?!amp;|lt;|gt;)/, line);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what must be absent
    assert.doesNotMatch(line, /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/, line);
    assert.doesNotMatch(line, /@(?!\u200b)/, `a mention could form: ${line}`);
    assert.doesNotMatch(line, /\]\(/, `a markdown link could form: ${line}`);
  }
}

test('no record field can bring markup, a bare &, a line break or a mention into the chat message', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record(Object.fromEntries(FIELDS.map((f) => [f, anyValue]))), {
        minLength: 1,
        maxLength: 6,
      }),
      fc.integer({ min: 1, max: 6 }),
      (fields, quoted) => {
        const batch = fields.map((f) => outgoing(f));
        const text = slackMessage(batch, quoted);
        const shown = Math.min(quoted, batch.length);
        assertClean(text, 1 + shown + (batch.length > quoted ? 1 : 0));
      },
    ),
    { numRuns: 500 },
  );
});

test('the review example: a forged Slack command and link, a mention and line breaks stay inert text', () => {
  const threat =
    '<!channel> urgent <https://evil.example/login|Click to acknowledge> @all\r\nET POLICY fake\n[x](https://evil.example)';
  const text = slackMessage([outgoing({ threat, criticality: 4 }), outgoing({ threat: 'a & b' })], 10);
  assertClean(text, 3);
  const line = text.split('\n')[1] ?? '';
  assert.ok(
    line.includes(
      '&lt;!channel&gt; urgent &lt;https://evil.example/login|Click to acknowledge&gt; @\u200ball ET POLICY fake [x]\u200b(https://evil.example)',
    ),
    line,
  );
  assert.match(text.split('\n')[2] ?? '', /\] a &amp; b — /);
});

test('plain values are quoted as they are; a long one is cut to 200 characters with …', () => {
  const text = slackMessage([outgoing({ threat: 'ET SCAN Nmap -sS (port 22)', dst_port: 22 })], 10);
  assert.match(
    text,
    /• \[3\] ET SCAN Nmap -sS \(port 22\) — 203\.0\.113\.5 → 2001:db8::1:22\/TCP \(sensor fw1, /,
  );
  const long = slackMessage([outgoing({ threat: `${'a'.repeat(199)}\ud83d\udea8tail` })], 10);
  assert.ok(long.includes(`${'a'.repeat(199)}… —`), 'cut before the surrogate pair, never inside it');
});

test('the mail digest cleans with the same rule: one line per record, whatever the fields hold', () => {
  fc.assert(
    fc.property(
      fc.array(fc.record({ threat: hostile, sensor: hostile, protocol: hostile }), {
        minLength: 1,
        maxLength: 5,
      }),
      (fields) => {
        const digest = buildDigest(
          fields.map((f) => outgoing(f)),
          'collector',
          '[threatcol]',
        );
        const recordLines = digest.text.split('\n').filter((l) => / id [0-9a-f-]{36}$/.test(l));
        assert.equal(recordLines.length, fields.length);
        assert.doesNotMatch(digest.subject, /[\r\n]/);
      },
    ),
    { numRuns: 200 },
  );
});
