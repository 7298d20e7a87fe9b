// `threatcol check`'s runtime line: a WARN once the Node.js line threatcol runs on (the one the package bundles) is
// past its end of life, or near it; the table of end-of-life dates at an injected clock, then the real CLI on the
// pinned runtime and on the machine's older one.
import { strict as assert } from 'node:assert';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { pinnedRuntime } from '../../packaging/runtime.js';
import { checkRuntime, NODE_END_OF_LIFE } from '../../src/check/runtime-support.js';
import { runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const CHECKOUT = fileURLToPath(new URL('../..', import.meta.url));
const at = (iso: string) => Date.parse(iso);

test('the runtime check against the table of LTS end-of-life dates, at an injected clock', () => {
  assert.deepEqual(checkRuntime('v26.12.1', at('2026-11-28T08:00:00Z')), {
    name: 'runtime',
    status: 'ok',
    message: 'Node.js v26.12.1, security support until 2029-04-30',
  });
  const near = checkRuntime('v26.12.1', at('2029-03-01T00:00:00Z'));
  assert.equal(near.status, 'warn');
  assert.match(near.message, /reaches its end of life on 2029-04-30 \(in 61 days\): plan an update/);
  // The last day listed is still supported.
  assert.match(checkRuntime('v26.12.1', at('2029-04-30T23:00:00Z')).message, /\(in 1 days\)/);
  const past = checkRuntime('v26.12.1', at('2029-05-01T00:00:00Z'));
  assert.equal(past.status, 'warn');
  assert.match(past.message, /reached its end of life on 2029-04-30 and gets no security fixes/);
  assert.equal(checkRuntime('v20.20.2', at('2026-11-28T08:00:00Z')).status, 'warn');
  assert.equal(checkRuntime('v24.21.0', at('2026-11-28T08:00:00Z')).status, 'ok');
  // An odd (never LTS) or unknown line is not vouched for.
  for (const version of ['v25.1.0', 'v27.0.0', 'nonsense']) {
    const r = checkRuntime(version, at('2026-11-28T08:00:00Z'));
    assert.equal(r.status, 'warn', version);
    assert.match(r.message, /not a long-term support line whose end of life threatcol knows/);
  }
  // The table knows the line package.json pins: pinning a new line means adding its date here.
  const major = Number(pinnedRuntime(CHECKOUT).version.split('.')[0]);
  assert.ok(NODE_END_OF_LIFE[major], `NODE_END_OF_LIFE lists Node ${major}`);
});

/** The machine's own `node` (first on PATH outside node_modules), when it is not the pinned runtime. */
function machineNode(): string | null {
  const pinned = realpathSync(pinnedRuntime(CHECKOUT).node);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '' || dir.includes('node_modules')) continue;
    try {
      accessSync(join(dir, 'node'), constants.X_OK);
      return realpathSync(join(dir, 'node')) === pinned ? null : join(dir, 'node');
    } catch {
      // not here
    }
  }
  return null;
}

async function runtimeLine(dataDir: string, node?: string) {
  const r = await runCli(['check', '--json', '--no-daemon', '--data-dir', dataDir, '--port', '0'], {
    ...(node ? { node } : {}),
  });
  const report = JSON.parse(r.stdout) as { checks: { name: string; status: string; message: string }[] };
  return { r, line: report.checks.find((c) => c.name === 'runtime') };
}

test('check through the real CLI names the runtime it runs on and warns on one past its end of life', async (t) => {
  const dataDir = makeTempDir(t);
  const pinned = await runtimeLine(dataDir);
  assert.deepEqual(pinned.line, checkRuntime(process.version, Date.now()), pinned.r.stdout + pinned.r.stderr);
  assert.match(pinned.line?.message ?? '', new RegExp(`Node\\.js ${process.version}`));
  const other = machineNode();
  if (other === null) {
    t.diagnostic('no other node on PATH: the past-end-of-life run is skipped');
    return;
  }
  const old = await runtimeLine(dataDir, other);
  const expected = checkRuntime(/Node\.js (v\S+)/.exec(old.line?.message ?? '')?.[1] ?? '?', Date.now());
  assert.deepEqual(old.line, expected, old.r.stdout + old.r.stderr);
  if (expected.message.includes('reached its end of life')) assert.equal(old.line?.status, 'warn');
  else t.diagnostic(`the machine's node is still supported: ${expected.message}`);
});
