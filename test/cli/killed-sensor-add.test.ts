// A `sensor add` killed (kill -9) in the middle of writing the registry: the next change takes the lock at once
// because its holder is dead, not because it is old, and removes the temporary file the killed one left.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { endChild, guard, killGroup } from '../helpers/children.js';
import { addSensorCli, BIN, cleanEnv, runCli } from '../helpers/cli.js';
import { straceMissing } from '../helpers/slow-renames.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';

test('a sensor add killed mid-write leaves nothing the next add waits for or keeps', {
  skip: straceMissing,
}, async (t) => {
  const dataDir = makeTempDir(t);
  await addSensorCli(dataDir, 'first');
  // strace holds the add at its rename: the temporary file written and synced, the lock held.
  const held = guard(
    spawn(
      'strace',
      [
        '-f',
        '-qq',
        '-o',
        '/dev/null',
        '-e',
        'trace=rename,renameat,renameat2',
        '-e',
        'inject=rename,renameat,renameat2:delay_enter=60000000',
        process.execPath,
        BIN,
        'sensor',
        'add',
        'killed',
        '--data-dir',
        dataDir,
      ],
      { env: cleanEnv(), stdio: 'ignore', detached: true },
    ),
    { group: true },
  );
  const exited = new Promise((resolve) => held.on('exit', resolve));
  // strace and the add it holds are one process group; the group may be gone by now (killed below).
  t.after(() => endChild(held, { group: true }));
  const temporaries = () => readdirSync(dataDir).filter((n) => n.startsWith('sensors.json.tmp-'));
  await until(() => temporaries().length === 1, 60_000, 'the held add to write its temporary file', 20);
  killGroup(held.pid as number);
  await exited;

  const lock = join(dataDir, 'sensors.json.lock');
  assert.ok(existsSync(lock), 'the killed add held the lock');
  // The lock looks fresh (proper-lockfile frees a lock by its age, 10 s): only its holder's death may free it.
  const future = new Date(Date.now() + 3_600_000);
  utimesSync(lock, future, future);

  const next = await runCli(['sensor', 'add', 'next', '--data-dir', dataDir]);
  assert.equal(next.code, 0, next.stderr);
  assert.deepEqual(temporaries(), [], 'the temporary file of the killed add is removed');
  assert.equal(existsSync(lock), false, 'the lock is released');
  const list = await runCli(['sensor', 'list', '--json', '--data-dir', dataDir]);
  assert.deepEqual((JSON.parse(list.stdout) as { name: string }[]).map((s) => s.name).sort(), [
    'first',
    'next',
  ]);
});
