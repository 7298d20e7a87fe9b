// The RELP frame reader: librelp's framing, any split of reads, DATALEN over the limit, garbage; the TXNR sequence.
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { HeldBudget } from '../../src/held-bytes.js';
import {
  encodeRelpFrame,
  MAX_TXNR,
  nextRelpTxnr,
  type RelpFrame,
  RelpFrameReader,
  RelpTxnrSequence,
} from '../../src/relp-frames.js';
import { splitReads as split } from '../helpers/split-reads.js';

const SEED = 20261126;

function readAll(reads: readonly Buffer[], max: number): { frames: RelpFrame[]; error: string | null } {
  const reader = new RelpFrameReader(max);
  const frames: RelpFrame[] = [];
  for (const read of reads) frames.push(...reader.push(read));
  return { frames, error: reader.error?.reason ?? null };
}

const plain = (frames: readonly RelpFrame[]) =>
  frames.map((f) => [f.txnr, f.command, f.data.toString('latin1'), f.truncated]);

test('the frames omrelp sends: open with its offers, syslog with LF inside the data, close without data', () => {
  const offers = 'relp_version=0\nrelp_software=librelp,1.11.0,http://librelp.adiscon.com\ncommands=syslog';
  const msg = '<134>Nov 26 12:00:05 gw ids: CEF:0|a|b|1|2|line\nbreak|5|';
  const stream = Buffer.concat([
    encodeRelpFrame(1, 'open', offers),
    encodeRelpFrame(2, 'syslog', msg),
    encodeRelpFrame(3, 'close'),
  ]);
  assert.equal(stream.toString('latin1').split('\n').at(-2), '3 close 0');
  const { frames, error } = readAll([stream], 64 * 1024);
  assert.equal(error, null);
  assert.deepEqual(plain(frames), [
    [1, 'open', offers, false],
    [2, 'syslog', msg, false],
    [3, 'close', '', false],
  ]);
});

test('DATALEN counts bytes, not characters', () => {
  const msg = Buffer.from('<14>é ü – done', 'utf8');
  const { frames } = readAll([encodeRelpFrame(7, 'syslog', msg)], 1024);
  assert.deepEqual(frames[0]?.data, msg);
});

test('a DATALEN over the limit is read through, keeping its beginning, and the next frame is read', () => {
  const big = 'x'.repeat(5000);
  const stream = Buffer.concat([encodeRelpFrame(1, 'syslog', big), encodeRelpFrame(2, 'syslog', 'after')]);
  const { frames, error } = readAll(split(stream, [3, 100, 4000]), 480);
  assert.equal(error, null);
  assert.deepEqual(plain(frames), [
    [1, 'syslog', 'x'.repeat(480), true],
    [2, 'syslog', 'after', false],
  ]);
});

test('broken framing ends the stream with a reason and nothing after it', () => {
  const cases: [string, string][] = [
    ['hello world\n', 'a frame must start with its TXNR'],
    ['1234567890 syslog 1 x\n', 'bad TXNR'],
    ['1 sys-log 1 x\n', 'bad COMMAND'],
    [`1 ${'a'.repeat(33)} 0\n`, 'bad COMMAND'],
    ['1 syslog 1234567890 x\n', 'bad DATALEN'],
    ['1 syslog 0 \n', 'bad DATALEN'],
    ['1 syslog 3 abcd\n', 'DATALEN does not match the data: no LF after it'],
  ];
  for (const [text, reason] of cases) {
    const { frames, error } = readAll([Buffer.from(`${text}2 syslog 1 y\n`, 'latin1')], 1024);
    assert.deepEqual([frames.length, error], [0, reason], text);
  }
  // Frames before the break are given.
  const { frames, error } = readAll([Buffer.from('1 syslog 1 a\n\n2 syslog 1 b\n', 'latin1')], 1024);
  assert.deepEqual([plain(frames), error], [[[1, 'syslog', 'a', false]], 'a frame must start with its TXNR']);
});

const frameArb = fc.record({
  txnr: fc.integer({ min: 0, max: 999_999_999 }),
  command: fc.stringMatching(/^[a-zA-Z]{1,32}$/),
  data: fc.uint8Array({ maxLength: 300 }),
});

test('property: any split of a stream of frames into reads gives the same frames', () => {
  fc.assert(
    fc.property(
      fc.array(frameArb, { maxLength: 12 }),
      fc.array(fc.nat(), { maxLength: 20 }),
      fc.integer({ min: 0, max: 400 }),
      (sent, cuts, max) => {
        const stream = Buffer.concat(
          sent.map((f) => encodeRelpFrame(f.txnr, f.command, Buffer.from(f.data))),
        );
        const whole = readAll([stream], max);
        const pieces = readAll(split(stream, cuts), max);
        assert.deepEqual(plain(pieces.frames), plain(whole.frames));
        assert.equal(whole.error, null);
        assert.deepEqual(
          plain(whole.frames),
          sent.map((f) => {
            const data = Buffer.from(f.data);
            return [f.txnr, f.command, data.subarray(0, max).toString('latin1'), data.length > max];
          }),
        );
      },
    ),
    { seed: SEED, numRuns: 400 },
  );
});

test('property: a byte a read gives the frames the whole stream gives, holds at most maxDataBytes, and the frames do not share it', () => {
  fc.assert(
    fc.property(fc.array(frameArb, { maxLength: 8 }), fc.integer({ min: 0, max: 400 }), (sent, max) => {
      const stream = Buffer.concat(sent.map((f) => encodeRelpFrame(f.txnr, f.command, Buffer.from(f.data))));
      const reader = new RelpFrameReader(max);
      const frames: RelpFrame[] = [];
      for (let i = 0; i < stream.length; i++) {
        frames.push(...reader.push(stream.subarray(i, i + 1)));
        // One buffer at most, of at most the limit: never a Buffer per read.
        assert.ok(reader.heldBytes <= max, `${reader.heldBytes} held`);
      }
      assert.deepEqual(plain(frames), plain(readAll([stream], max).frames));
      assert.equal(reader.midFrame, false, 'between frames at the end');
      assert.equal(reader.framesStarted, sent.length);
      // Each frame's data is its own: reading on does not change a frame already given.
      assert.deepEqual(
        plain(frames),
        sent.map((f) => {
          const data = Buffer.from(f.data);
          return [f.txnr, f.command, data.subarray(0, max).toString('latin1'), data.length > max];
        }),
      );
    }),
    { seed: SEED, numRuns: 300 },
  );
});

test("midFrame: from a frame's first byte to its LF, whatever is split where", () => {
  const reader = new RelpFrameReader(1024);
  assert.equal(reader.midFrame, false);
  reader.push(Buffer.from('1', 'latin1'));
  assert.equal(reader.midFrame, true);
  reader.push(Buffer.from(' syslog 3 ab', 'latin1'));
  assert.equal(reader.midFrame, true);
  assert.equal(reader.push(Buffer.from('c\n2', 'latin1')).length, 1);
  assert.deepEqual([reader.midFrame, reader.framesStarted], [true, 2]);
  assert.equal(reader.push(Buffer.from(' close 0\n', 'latin1')).length, 1);
  assert.deepEqual([reader.midFrame, reader.framesStarted], [false, 2]);
});

test('property: garbage never throws; the reader gives frames only up to where the stream broke', () => {
  fc.assert(
    fc.property(fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 10 }), (reads) => {
      const reader = new RelpFrameReader(128);
      let afterError = 0;
      for (const read of reads) {
        const before = reader.error;
        const frames = reader.push(Buffer.from(read));
        if (before !== null) afterError += frames.length;
        for (const f of frames) assert.ok(f.data.length <= 128 && /^[a-zA-Z]{1,32}$/.test(f.command));
      }
      assert.equal(afterError, 0);
    }),
    { seed: SEED, numRuns: 500 },
  );
});

test('the TXNR sequence: 1 first, then each + 1, 1 again after 999,999,999; hints (0) outside it', () => {
  assert.deepEqual(
    [nextRelpTxnr(1), nextRelpTxnr(41), nextRelpTxnr(MAX_TXNR - 1), nextRelpTxnr(MAX_TXNR)],
    [2, 42, MAX_TXNR, 1],
  );
  const session = new RelpTxnrSequence();
  assert.deepEqual(
    [1, 0, 2, 3, 0].map((t) => session.check(t)),
    [null, null, null, null, null],
  );
  assert.equal(session.check(3), 'TXNR 3 out of sequence: 4 expected', 'a repeated frame');
  assert.equal(new RelpTxnrSequence().check(2), 'TXNR 2 out of sequence: 1 expected', 'open is 1');
  const wrapping = new RelpTxnrSequence(MAX_TXNR - 1);
  assert.deepEqual(
    [MAX_TXNR - 1, MAX_TXNR, 1, 2].map((t) => wrapping.check(t)),
    [null, null, null, null],
  );
  assert.equal(
    new RelpTxnrSequence(MAX_TXNR).check(1),
    'TXNR 1 out of sequence: 999999999 expected',
    'the wrap skips no number',
  );
});

test('property: from any start, the counted sequence (hints anywhere) is accepted, and the first frame off it is refused', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: MAX_TXNR }),
      fc.array(fc.boolean(), { maxLength: 40 }),
      fc.integer({ min: 1, max: MAX_TXNR }),
      (first, hints, wrong) => {
        const session = new RelpTxnrSequence(first);
        let expected = first;
        const sent: number[] = [];
        for (const hint of hints) {
          if (hint) sent.push(0);
          sent.push(expected);
          expected = nextRelpTxnr(expected);
        }
        for (const t of sent) {
          assert.ok(t >= 0 && t <= MAX_TXNR);
          assert.equal(session.check(t), null);
        }
        // Any other number next (repeated, skipped, from another session) is refused, naming the expected one.
        const off = wrong === expected ? nextRelpTxnr(wrong) : wrong;
        assert.equal(session.check(off), `TXNR ${off} out of sequence: ${expected} expected`);
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

test('under a budget: data whose trailer is in a later read is copied and counted, never a slice pinning the read; an evicted reader gives nothing more; abandon gives its bytes back', () => {
  const budget = new HeldBudget(1800);
  let evicted = 0;
  const reader = new RelpFrameReader(1024, budget, () => evicted++);
  const frame = encodeRelpFrame(1, 'syslog', 'x'.repeat(300));
  // All the data in this read, its LF in the next: held in the budget's count.
  assert.deepEqual(reader.push(frame.subarray(0, frame.length - 1)), []);
  assert.equal(budget.used, 512);
  assert.deepEqual(plain(reader.push(frame.subarray(frame.length - 1))), [
    [1, 'syslog', 'x'.repeat(300), false],
  ]);
  // Its next frame begins, then another reader's; the first, whose frame began before, must grow past the
  // budget: it is let go, and nothing after that is read, not even a whole frame behind it in the same read.
  const next = Buffer.concat([
    encodeRelpFrame(2, 'syslog', 'z'.repeat(1000)),
    encodeRelpFrame(3, 'syslog', 'after'),
  ]);
  assert.deepEqual(reader.push(next.subarray(0, 500)), []);
  const other = new RelpFrameReader(1024, budget);
  assert.deepEqual(other.push(encodeRelpFrame(1, 'syslog', 'y'.repeat(1000)).subarray(0, 1000)), []);
  assert.equal(budget.used, 512 + 1024);
  assert.deepEqual(reader.push(next.subarray(500)), []);
  assert.equal(evicted, 1);
  assert.equal(budget.used, 1024, 'the other still holds its frame');
  other.abandon();
  reader.abandon();
  assert.equal(budget.used, 0, 'abandoned readers hold nothing');
});
