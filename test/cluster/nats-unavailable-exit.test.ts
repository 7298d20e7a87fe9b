// Black box: a CLI command that finds NATS unusable exits as soon as it says so. `block list` against a three-node
// cluster with two nodes paused (SIGSTOP: no quorum, the bucket cannot be opened) prints UNAVAILABLE and exits 69;
// the time from that line to the exit is compared with the same command's in the same run against an address
// where no server listens (nothing left running there), never with a fixed time alone. Uses dist/.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startCli } from '../helpers/cli.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { type NatsNode, startNatsCluster } from '../helpers/nats-server.js';
import { stopProcess } from '../helpers/stop-process.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Each command's wait for NATS (nats.publishTimeoutMs): short, it runs out in both runs. */
const BUDGET_MS = 2000;

/** Runs `block list` against `servers`; its exit code, stderr, and the ms from its UNAVAILABLE line to its exit. */
async function lingerAfterError(dir: string, name: string, servers: string[]) {
  const config = join(dir, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      store: { backend: 'nats' },
      nats: { servers, replicas: 3, publishTimeoutMs: BUDGET_MS },
    }),
  );
  const cli = startCli(['block', 'list', '--config', config, '--data-dir', dir], {
    timeoutMs: 120_000,
  });
  let said = 0;
  let stderr = '';
  cli.child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    if (said === 0 && stderr.includes('UNAVAILABLE')) said = performance.now();
  });
  const exited = new Promise<number>((resolve) => cli.child.once('exit', () => resolve(performance.now())));
  const result = await cli.result;
  return {
    code: result.code,
    stderr: result.stderr,
    lingerMs: said === 0 ? Number.NaN : (await exited) - said,
  };
}

test('a CLI command on a NATS cluster without quorum exits right after its UNAVAILABLE line', async (t) => {
  const dir = makeTempDir(t);
  const cluster = await startNatsCluster(t, 3);
  const paused = cluster.nodes.slice(1) as NatsNode[];
  t.after(() => {
    for (const n of paused) if (n.pid) process.kill(n.pid, 'SIGCONT');
  });
  for (const n of paused) await stopProcess(n.pid as number);

  // Reference: nothing listens at the address, so nothing is left to wait on once the command gives up.
  const [nowhere, noQuorum] = await Promise.all([
    lingerAfterError(dir, 'nowhere', [`nats://127.0.0.1:${await freeLoopbackPort()}`]),
    lingerAfterError(dir, 'no-quorum', [cluster.nodes[0]?.url as string]),
  ]);
  t.diagnostic(
    `from UNAVAILABLE to exit: ${noQuorum.lingerMs.toFixed(0)} ms; reference ${nowhere.lingerMs.toFixed(0)} ms`,
  );
  for (const run of [nowhere, noQuorum]) {
    assert.equal(run.code, 69, run.stderr);
    assert.match(run.stderr, /^threatcol: UNAVAILABLE: /m);
  }
  // Before, the bucket's opening went on retrying after the error (its timers held the process until the
  // CLI's 3 s safety net): about 3000 ms against tens.
  assert.ok(
    noQuorum.lingerMs < 2 * nowhere.lingerMs + 1000,
    `${noQuorum.lingerMs.toFixed(0)} ms from UNAVAILABLE to the exit, against ${nowhere.lingerMs.toFixed(0)} ms for the reference`,
  );
});
