// The syslog framer: octet counting and trailers per frame, oversize handling, resynchronisation, any split of reads.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { HeldBudget } from '../../src/held-bytes.js';
import { type Frame, type FramerOptions, SyslogFramer } from '../../src/inputs/syslog/framer.js';
import { splitReads as split } from '../helpers/split-reads.js';

const SEED = 20261126;

/** Every message the framer gives for `reads`, in order, including at the end of the stream. */
function frameAll(
  reads: readonly Buffer[],
  options: FramerOptions,
): { frames: Frame[]; framer: SyslogFramer } {
  const framer = new SyslogFramer(options);
  const frames: Frame[] = [];
  for (const read of reads) frames.push(...framer.push(read));
  frames.push(...framer.end());
  return { frames, framer };
}

const texts = (frames: readonly Frame[]) => frames.map((f) => [f.message.toString('latin1'), f.truncated]);
const opts = (maxMessageBytes = 64 * 1024, oversize: 'truncate' | 'drop' = 'truncate') => ({
  maxMessageBytes,
  oversize,
});
const b = (text: string) => Buffer.from(text, 'latin1');

test('octet counting and each trailer are recognised per frame, in one stream', () => {
  const msg = '<34>1 2026-11-26T10:00:00Z host app - - - hello';
  const stream = `${msg.length} ${msg}<13>Nov 26 10:00:00 host tag: lf\n<13>crlf\r\n<13>nul\u0000${msg.length} ${msg}`;
  assert.deepEqual(texts(frameAll([b(stream)], opts()).frames), [
    [msg, false],
    ['<13>Nov 26 10:00:00 host tag: lf', false],
    ['<13>crlf', false],
    ['<13>nul', false],
    [msg, false],
  ]);
});

test('an octet-counted message may hold LF, NUL and a digit first; its length counts bytes, not characters', () => {
  const msg = Buffer.from('<14>1 - - - - - - é\nline two\u0000 end', 'utf8');
  const stream = Buffer.concat([b(`${msg.length} `), msg, b('9 123456789')]);
  const { frames } = frameAll([stream], opts());
  assert.deepEqual(
    frames.map((f) => f.message),
    [msg, b('123456789')],
  );
});

test('blanks before a frame are skipped and counted; stray bytes are a message of their own, read to its trailer', () => {
  const { frames, framer } = frameAll([b('\r\n\n \t junk 0\u0000 5 <13>a<13>b\n')], opts());
  assert.deepEqual(texts(frames), [
    ['junk 0', false],
    ['<13>a', false],
    ['<13>b', false],
  ]);
  assert.equal(framer.counts.garbageBytes, '\r\n\n \t  '.length);
});

test('a line without <PRI> whose digits are followed by a space takes nothing of the messages after it', () => {
  const valid = (i: number) => `<134>Nov 26 12:00:05 gw ids: CEF:0|V|P|1|IPS|Probe ${i}|High|src=10.1.1.5`;
  const stream = `Jan 10 12:00:00 fw sent 512 bytes to the server\n${[1, 2, 3].map(valid).join('\n')}\n`;
  assert.deepEqual(
    frameAll([b(stream)], opts()).frames.map((f) => f.message.toString()),
    ['Jan 10 12:00:00 fw sent 512 bytes to the server', valid(1), valid(2), valid(3)],
  );
});

test('digits not followed by a space are not a length: the frame is read to its trailer', () => {
  assert.deepEqual(texts(frameAll([b('2026-11-26 message\n12\n')], opts()).frames), [
    ['2026-11-26 message', false],
    ['12', false],
  ]);
  // Ten digits would declare gigabytes: not a length, so a stray number cannot make the framer skip the stream.
  assert.deepEqual(texts(frameAll([b('1234567890 <13>x\n')], opts()).frames), [['1234567890 <13>x', false]]);
});

test('an octet-counted message over the limit is delivered truncated and flagged, the rest of it skipped', () => {
  const long = `<13>${'a'.repeat(96)}`;
  const { frames, framer } = frameAll([b(`100 ${long}5 <13>x`)], opts(10));
  assert.deepEqual(texts(frames), [
    [long.slice(0, 10), true],
    ['<13>x', false],
  ]);
  assert.equal(framer.counts.oversize, 1);
});

test('with oversize "drop" the message is dropped but counted, and the next one still arrives', () => {
  const { frames, framer } = frameAll(
    [b(`100 <13>${'a'.repeat(96)}<13>${'b'.repeat(20)}\n<13>ok\n`)],
    opts(10, 'drop'),
  );
  assert.deepEqual(texts(frames), [['<13>ok', false]]);
  assert.equal(framer.counts.oversize, 2);
});

test('a trailer message exactly at the limit, ended by CRLF, is whole; one byte more is truncated', () => {
  assert.deepEqual(texts(frameAll([b('<13>123456\r\n')], opts(10)).frames), [['<13>123456', false]]);
  assert.deepEqual(texts(frameAll([b('<13>1234567\r\n<1>x\n')], opts(10)).frames), [
    ['<13>123456', true],
    ['<1>x', false],
  ]);
  assert.deepEqual(texts(frameAll([b('<13>123456\r\u0000')], opts(10)).frames), [['<13>123456', true]]);
});

test('a length prefix far beyond the limit: the declared bytes are skipped, then framing resumes', () => {
  const declared = 999_999_999;
  const framer = new SyslogFramer(opts(16));
  const first = framer.push(b(`${declared} <13>start of a huge one`));
  assert.deepEqual(texts(first), [['<13>start of a h', true]]);
  // Push a megabyte of the declared body: nothing comes out and nothing is held.
  for (let i = 0; i < 16; i++) assert.deepEqual(framer.push(Buffer.alloc(65536, 0x41)), []);
  assert.equal(framer.counts.oversize, 1);
});

test('the stream ends: a trailer frame without trailer is a message, an unfinished octet frame is counted, not delivered', () => {
  assert.deepEqual(texts(frameAll([b('<13>last words')], opts()).frames), [['<13>last words', false]]);
  const { frames, framer } = frameAll([b('50 <13>cut short')], opts());
  assert.deepEqual(frames, []);
  assert.equal(framer.counts.incomplete, 1);
});

test('a connection cut without its end: a frame begun is counted lost; blanks, a finished frame or an oversize one skipped are not', () => {
  const cut = (text: string, max = 64 * 1024) => {
    const framer = new SyslogFramer(opts(max));
    framer.push(b(text));
    framer.abandon();
    return framer.counts.incomplete;
  };
  assert.equal(cut('50 <13>cut short'), 1, 'inside an octet-counted frame');
  assert.equal(cut('<13>no trailer yet'), 1, 'inside a trailer frame');
  assert.equal(cut('12'), 1, 'inside a length prefix');
  assert.equal(cut('<13>whole\n\r\n  '), 0, 'a whole message, then blanks');
  assert.equal(
    cut(`600 <13>${'x'.repeat(520)}`, 480),
    0,
    'an oversize frame already delivered cut, its rest skipped',
  );
});

test('a framer let go for the budget delivers nothing more, not its message nor those after it, and counts it lost', () => {
  for (const kind of ['octets', 'trailer'] as const) {
    const budget = new HeldBudget(1200);
    let evicted = 0;
    const first = new SyslogFramer({ ...opts(1000), budget, evicted: () => evicted++ });
    const second = new SyslogFramer({ ...opts(1000), budget });
    const head = kind === 'octets' ? `900 <13>${'a'.repeat(392)}` : `<13>${'a'.repeat(396)}`;
    assert.deepEqual(first.push(b(head)), []);
    assert.deepEqual(second.push(b(`<13>${'b'.repeat(396)}`)), []);
    // the first's message began first: growing past the budget, it is the one let go, in the middle of this read.
    const rest = kind === 'octets' ? `${'a'.repeat(500)}11 <13>after` : `${'a'.repeat(400)}\n<13>after\n`;
    assert.deepEqual(first.push(b(rest)), [], kind);
    assert.equal(evicted, 1, kind);
    first.abandon();
    assert.equal(first.counts.incomplete, 1, kind);
    assert.equal(budget.used, 512, 'the second still holds its message');
  }
});

/** A well-formed stream: frames of each kind, with garbage between them, and the messages it must give. */
const item = (max: number) =>
  fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: max * 2 }).map((bytes) => {
      const msg = Buffer.from(bytes);
      const expect: [string, boolean][] = [[msg.subarray(0, max).toString('latin1'), msg.length > max]];
      return { bytes: Buffer.concat([b(`${msg.length} `), msg]), expect };
    }),
    fc
      .tuple(fc.stringMatching(/^[\x20-\x7e\t]{0,40}$/), fc.constantFrom('\n', '\r\n', '\u0000'))
      .map(([body, trailer]) => {
        const msg = `<${body}`;
        const expect: [string, boolean][] = [[msg.slice(0, max), msg.length > max]];
        return { bytes: b(msg + trailer), expect };
      }),
    fc
      // biome-ignore lint/suspicious/noControlCharactersInRegex: CR, LF and NUL are blanks under test
      .stringMatching(/^[\r\n\u0000 \t]{1,5}$/)
      .map((junk) => ({ bytes: b(junk), expect: [] as [string, boolean][] })),
  );

test('property: a well-formed stream gives its messages, truncated past the limit, with blanks between frames', () => {
  fc.assert(
    fc.property(
      fc
        .integer({ min: 1, max: 30 })
        .chain((max) => fc.tuple(fc.constant(max), fc.array(item(max), { maxLength: 12 }))),
      ([max, items]) => {
        const stream = Buffer.concat(items.map((i) => i.bytes));
        // Blanks start no frame, so the expected messages are exactly the items'.
        assert.deepEqual(
          texts(frameAll([stream], opts(max)).frames),
          items.flatMap((i) => i.expect),
        );
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
});

test('property: any split of the byte stream into reads gives the same messages and counts (well-formed streams)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 30 }),
      fc.array(item(30), { maxLength: 10 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      fc.constantFrom<'truncate' | 'drop'>('truncate', 'drop'),
      (max, items, cuts, oversize) => {
        const stream = Buffer.concat(items.map((i) => i.bytes));
        const whole = frameAll([stream], opts(max, oversize));
        const pieces = frameAll(split(stream, cuts), opts(max, oversize));
        assert.deepEqual(texts(pieces.frames), texts(whole.frames));
        assert.deepEqual(pieces.framer.counts, whole.framer.counts);
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

test('property: on arbitrary bytes the framer never throws, never exceeds the limit, and any split gives the same messages', () => {
  const byte = fc.oneof(
    fc.integer({ min: 0, max: 255 }),
    fc.constantFrom(0x0a, 0x0d, 0x00, 0x20, 0x3c, 0x31, 0x35, 0x39, 0x30),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      fc.array(byte, { maxLength: 300 }),
      fc.array(fc.nat(), { maxLength: 30 }),
      (max, bytes, cuts) => {
        const stream = Buffer.from(bytes);
        const whole = frameAll([stream], opts(max));
        const pieces = frameAll(split(stream, cuts), opts(max));
        assert.deepEqual(texts(pieces.frames), texts(whole.frames));
        assert.deepEqual(pieces.framer.counts, whole.framer.counts);
        for (const f of whole.frames) {
          assert.ok(f.message.length > 0 && f.message.length <= max);
          if (f.truncated) assert.equal(f.message.length, max);
        }
      },
    ),
    { seed: SEED, numRuns: 1000 },
  );
});

test('property: a byte a read gives the messages and counts the whole stream gives, holding one buffer of at most maxMessageBytes + 1', () => {
  const byte = fc.oneof(
    fc.integer({ min: 0, max: 255 }),
    fc.constantFrom(0x0a, 0x0d, 0x00, 0x20, 0x3c, 0x31, 0x35, 0x39, 0x30),
  );
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 40 }),
      fc.oneof(
        fc.array(item(40), { maxLength: 8 }).map((items) => Buffer.concat(items.map((i) => i.bytes))),
        fc.array(byte, { maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
      ),
      fc.constantFrom<'truncate' | 'drop'>('truncate', 'drop'),
      (max, stream, oversize) => {
        const whole = frameAll([stream], opts(max, oversize));
        const framer = new SyslogFramer(opts(max, oversize));
        const frames: Frame[] = [];
        for (let i = 0; i < stream.length; i++) {
          frames.push(...framer.push(stream.subarray(i, i + 1)));
          assert.ok(framer.heldBytes <= max + 1, `${framer.heldBytes} held`);
        }
        frames.push(...framer.end());
        assert.deepEqual(texts(frames), texts(whole.frames));
        assert.deepEqual(framer.counts, whole.framer.counts);
        assert.equal(framer.midFrame, false, 'the end closes any frame');
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

test('a 64 KiB message a byte a read: one buffer of its size is held, and midFrame holds from its first byte to its LF', () => {
  const max = 64 * 1024;
  const framer = new SyslogFramer(opts(max));
  assert.deepEqual([framer.midFrame, framer.heldBytes], [false, 0]);
  const message = b(`<13>${'m'.repeat(max - 4)}`);
  const one = Buffer.alloc(1);
  for (let i = 0; i < message.length; i++) {
    message.copy(one, 0, i, i + 1);
    assert.deepEqual(framer.push(one), []);
  }
  assert.deepEqual([framer.midFrame, framer.framesStarted], [true, 1]);
  assert.ok(framer.heldBytes >= max && framer.heldBytes <= max + 1, `${framer.heldBytes} held`);
  const [frame] = framer.push(b('\n'));
  assert.deepEqual([frame?.message, frame?.truncated], [message, false]);
  // The message's buffer is let go with it (an idle connection holds nothing large).
  assert.deepEqual([framer.midFrame, framer.heldBytes], [false, 0]);
  // Bytes between frames are skipped, not a frame begun.
  framer.push(b('\r\n  '));
  assert.deepEqual([framer.midFrame, framer.framesStarted], [false, 1]);
});
