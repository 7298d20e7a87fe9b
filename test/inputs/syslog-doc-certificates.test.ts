// docs/syslog.md's "Client certificates for senders" as a user follows it: every command of its shell blocks
// run as written (openssl lines by bash in an empty directory, threatcol lines by the real CLI with this test's
// data directory), then each sender's certificate and key presented by `threatcol send syslog` to a real TLS
// syslog listener (`serve`): its messages are stored under the sensor the section made for it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli, spawnServe } from '../helpers/cli.js';
import { storedSyslog } from '../helpers/stored-syslog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const DOC = fileURLToPath(new URL('../../docs/syslog.md', import.meta.url));
const SECTION = '## Client certificates for senders';

/** The section's shell commands, continuation lines joined, comments left out. */
function sectionCommands(): string[] {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf(`\n${SECTION}\n`);
  assert.ok(start >= 0, `docs/syslog.md has a "${SECTION}" section`);
  const end = text.indexOf('\n## ', start + SECTION.length + 2);
  const section = text.slice(start, end < 0 ? undefined : end);
  const commands: string[] = [];
  for (const block of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = (block[1] as string).replace(/\\\n\s*/g, '');
    for (const line of joined.split('\n'))
      if (line.trim() && !line.trim().startsWith('#')) commands.push(line);
  }
  return commands;
}

test('docs/syslog.md: the client-certificate commands, run as written, make pairs a TLS syslog listener takes as their sensors', {
  timeout: 120_000,
}, async (t) => {
  const commands = sectionCommands();
  assert.ok(commands.filter((c) => c.startsWith('openssl ')).length >= 4, commands.join('\n'));
  const work = makeTempDir(t);
  const dataDir = makeTempDir(t);
  for (const command of commands) {
    if (command.startsWith('threatcol ')) {
      // The documented arguments have no quoting: split on spaces; a file the commands made is named by its
      // place in their directory; run with this test's data directory.
      const args = command
        .slice('threatcol '.length)
        .split(/ +/)
        .map((arg) => (existsSync(join(work, arg)) ? join(work, arg) : arg));
      const r = await runCli([...args, '--data-dir', dataDir]);
      assert.equal(r.code, 0, `${command}\n${r.stderr}`);
    } else {
      execFileSync('bash', ['-euo', 'pipefail', '-c', command], { cwd: work, stdio: 'pipe' });
    }
  }
  for (const file of ['relay.pem', 'relay-key.pem', 'senders-ca.pem', 'fw-hq.pem', 'fw-hq-key.pem'])
    assert.ok(existsSync(join(work, file)), file);
  assert.equal(statSync(join(work, 'relay-key.pem')).mode & 0o077, 0, 'the key is private');

  const serve = await spawnServe(dataDir, [], { env: { THREATCOL_SYSLOG_LISTEN: '127.0.0.1:0' } });
  t.after(() => serve.stop());
  const { tlsPort } = serve.logs.find((l) => l.msg === 'syslog listening') as { tlsPort: number };
  const send = (format: string, cert: string, key: string) =>
    runCli([
      'send',
      'syslog',
      '--format',
      format,
      '--sample',
      '--count',
      '2',
      '--url',
      `127.0.0.1:${tlsPort}`,
      '--client-cert',
      join(work, cert),
      '--client-key',
      join(work, key),
      '--data-dir',
      dataDir,
    ]);
  const relay = await send('cef', 'relay.pem', 'relay-key.pem');
  assert.equal(relay.code, 0, relay.stderr);
  const hq = await send('panos', 'fw-hq.pem', 'fw-hq-key.pem');
  assert.equal(hq.code, 0, hq.stderr);
  const stored = await storedSyslog(dataDir, 4);
  assert.deepEqual(stored.map((r) => r.sensor).sort(), ['fw-hq', 'fw-hq', 'relay', 'relay']);
  const shown = await runCli(['sensor', 'show', 'fw-hq', '--data-dir', dataDir]);
  assert.match(shown.stdout, /client certificates for "fw-hq\.example\.org" from its CA/);
});
