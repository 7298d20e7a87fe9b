// The record log's vectored write resumes after a short write: unwritten() must leave exactly the bytes after
// the first `written`, whatever the chunk sizes (empty chunks included) and wherever the write stopped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { unwritten } from '../../src/store/file-ops.js';

test('unwritten(): the rest after any short write is the concatenation minus its first bytes, as views', () => {
  fc.assert(
    fc.property(
      fc.array(fc.uint8Array({ maxLength: 40 }), { maxLength: 12 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
      (arrays, at) => {
        const buffers = arrays.map((a) => Buffer.from(a));
        const all = Buffer.concat(buffers);
        const written = Math.floor(at * all.length);
        const rest = unwritten(buffers, written);
        assert.deepEqual(Buffer.concat(rest), all.subarray(written));
        // All written: nothing left, so the log's loop stops without another (empty) writev.
        if (written === all.length) assert.equal(rest.length, 0);
        // Views into the caller's buffers, not copies.
        for (const b of rest) if (b.length > 0) assert.ok(buffers.some((s) => s.buffer === b.buffer));
      },
    ),
  );
});
