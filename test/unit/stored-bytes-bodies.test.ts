// Receivers that send a stored line as it is build their bodies from the line's bytes when the feed gives them:
// byte for byte what the same body built from the line's text is (non-ASCII and escapes included).
import assert from 'node:assert/strict';
import test from 'node:test';
import type { OutgoingRecord } from '../../src/outputs/receivers/receiver.js';
import { frameOctetCounted, framePieces } from '../../src/outputs/receivers/syslog-message.js';
import { jsonBody } from '../../src/outputs/receivers/webhook.js';
import { outgoingRecords } from '../helpers/outgoing.js';

const batch = outgoingRecords(3, (i) => ({ threat: ['plain', 'Zürich ☃ 😀', 'a "quoted" \\ one'][i] }));
const withBytes: OutgoingRecord[] = batch.map((r) => ({ ...r, bytes: Buffer.from(r.line, 'utf8') }));

test('webhook JSON: the body from stored bytes is the body from the lines', () => {
  const fromText = jsonBody(batch);
  const fromBytes = jsonBody(withBytes);
  assert.equal(typeof fromText, 'string');
  assert.ok(Buffer.isBuffer(fromBytes));
  assert.deepEqual(fromBytes, Buffer.from(fromText as string, 'utf8'));
  assert.deepEqual(
    JSON.parse((fromBytes as Buffer).toString('utf8')).records.map((r: { id: string }) => r.id),
    batch.map((r) => r.id),
  );
});

test('syslog: a frame from a header and stored bytes is the frame of the whole message', () => {
  for (const r of batch) {
    const header = '<10>1 2026-11-26T10:00:00.000Z höst threatcol - threat [x id="1"] ';
    const pieces = Buffer.concat(framePieces(header, Buffer.from(r.line, 'utf8')));
    assert.deepEqual(pieces, frameOctetCounted(header + r.line));
  }
});
