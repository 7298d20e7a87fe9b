// `threatcol send` against a hostile HTTPS server on loopback: whatever the server answers (its error message,
// its code, a non-JSON body), no escape sequence, bell or bidi control reaches the admin's terminal.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { writeSelfSigned } from '../helpers/self-signed.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const EVIL = '\u001b]0;EVIL-TITLE\u0007\u001b[2J\u009b31m\u202e\r';

/** No byte a terminal acts on but the line feed. */
function assertInert(text: string, what: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for exactly these
  assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/, what);
}

test('send: a hostile server cannot put escapes on the terminal (message, code, body; one request and load mode)', async (t) => {
  const dir = makeTempDir(t);
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  writeSelfSigned(cert, key, { cn: 'localhost', altName: 'IP:127.0.0.1', days: 1 });
  const answers: { status: number; body: string }[] = [
    { status: 401, body: JSON.stringify({ error: { code: 'AUTH_INVALID', message: `bad key ${EVIL}` } }) },
    { status: 502, body: `<h1>proxy ${EVIL}</h1>` },
    { status: 200, body: JSON.stringify({ accepted: 1, ids: [EVIL] }) },
  ];
  let answer = answers[0] as { status: number; body: string };
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.unref();
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keyFile = join(dir, 'sensor-key');
  writeFileSync(keyFile, 'k'.repeat(43), { mode: 0o600 });
  const base = [
    'send',
    'generic',
    '--sample',
    '--url',
    url,
    '--ca',
    cert,
    '--sensor',
    'fw1',
    '--key-file',
    keyFile,
  ];

  for (const a of answers) {
    answer = a;
    for (const extra of [[], ['--count', '3']]) {
      const r = await runCli([...base, ...extra]);
      const what = `${a.status} ${extra.join(' ')}`;
      assertInert(r.stdout, `stdout, ${what}`);
      assertInert(r.stderr, `stderr, ${what}`);
      if (a.status === 401 && extra.length === 0) {
        assert.equal(r.code, 77, r.stderr);
        // The message is there, only its controls replaced.
        assert.match(r.stderr, /AUTH_INVALID: bad key \?\]0;EVIL-TITLE\?\?\[2J\?31m\?\?/);
      }
    }
  }
  // --json escapes them instead, and stays valid JSON.
  answer = answers[2] as { status: number; body: string };
  const json = await runCli([...base, '--json']);
  assert.equal(json.code, 0, json.stderr);
  assertInert(json.stdout, 'stdout --json');
  assert.deepEqual((JSON.parse(json.stdout) as { body: { ids: string[] } }).body.ids, [EVIL]);
});
