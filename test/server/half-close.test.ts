// Issue 27 F8: a sender that writes a whole request and then shuts its write side (half-close) must get its
// answer. Before: the records were stored but the answer never came, so the sender's retry duplicated them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestServer } from '../helpers/in-process-server.js';
import { openTls, postHead, readResponse } from '../helpers/raw-tls.js';
import { genericRecord, readStored } from '../helpers/records.js';

test('F8: a request followed by a write-side close is answered 200, and stored once', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw');
  const replies: string[] = [];
  for (let i = 0; i < 5; i++) {
    const body = JSON.stringify(genericRecord({ threat: `half-close ${i}` }));
    const socket = await openTls(s.url);
    t.after(() => socket.destroy());
    socket.end(postHead('/generic', 'fw', key, Buffer.byteLength(body)) + body);
    // Read until the server closes: the whole answer, then the end of the connection.
    replies.push(await readResponse(socket, () => false));
  }
  for (const reply of replies) assert.match(reply, /^HTTP\/1\.1 200 /, reply || '(no answer)');
  const threats = readStored(s.dataDir).map((r) => r.threat);
  assert.deepEqual(
    threats,
    [0, 1, 2, 3, 4].map((i) => `half-close ${i}`),
  );
});

test('F8: a body cut short by a half-close is not stored, and the connection ends', async (t) => {
  const s = await startTestServer(t);
  const key = await s.addSensor('fw');
  const body = JSON.stringify(genericRecord({ threat: 'cut short' }));
  const socket = await openTls(s.url);
  t.after(() => socket.destroy());
  socket.end(postHead('/generic', 'fw', key, Buffer.byteLength(body)) + body.slice(0, 20));
  // No whole request, nothing to answer: the connection ends (a 400 would do too); the sender retries.
  const reply = await readResponse(socket, () => false);
  assert.match(reply, /^(HTTP\/1\.1 400 [\s\S]*"code":"BAD_REQUEST"|)$/, reply);
  assert.deepEqual(readStored(s.dataDir), []);
});
