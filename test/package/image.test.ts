// The OCI image (`npm run image`, packaging/image/) made of the package the package tests share (sharedDeb), loaded into a
// podman store of the test's own and run as a sysadmin would: read-only, as uid 65532, no capabilities, on free
// loopback ports; a sensor added with `exec`, a record posted over HTTPS and read back with `threats tail`, in a
// second container on the same volume too; the healthcheck; SIGTERM ends it with 0. A second build, by the npm
// script, must give the same digest. Skipped (with the reason) without root, podman, runc or dpkg-dev.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { buildImage } from '../../packaging/image/build.js';
import { watched } from '../helpers/children.js';
import { post, trustingAgent } from '../helpers/client.js';
import { freeLoopbackPort } from '../helpers/free-port.js';
import { CHECKOUT, packageUnavailable, sharedDeb } from '../helpers/package-build.js';
import { genericRecord } from '../helpers/records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { until } from '../helpers/until.js';
import { podmanIn, podmanUnavailable } from './image-podman.js';

const reason = packageUnavailable() ?? podmanUnavailable();
if (reason) console.log(`# image: skipped: ${reason}`);

const SOURCE = 'https://example.org/threatcol.git';
/**
 * The image's size on disk, unpacked, at most what the image is promised to be. The bundled Node 26 runtime is
 * 117 MB of it (stripped), the enrichment tables 3.2 MB, the modules 14 MB; measured 138 MB.
 */
const MAX_UNPACKED = 150_000_000;
const manifest = JSON.parse(readFileSync(join(CHECKOUT, 'package.json'), 'utf8')) as { version: string };
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** This process's hard limit of open files: a container may not be given more. */
function openFilesLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  return Number(line?.trim().split(/\s+/)[4] ?? 1024);
}

test('the OCI image: built from the package, run read-only as 65532 under podman, reproducible', {
  skip: reason ?? false,
  timeout: 600_000,
}, async (t) => {
  const dir = makeTempDir(t, 'image-');
  const podman = podmanIn(join(dir, 'podman'));
  t.after(() => podman.remove());
  const deb = await sharedDeb();

  // The second build runs beside the rest, as `npm run image` runs it, from the same package.
  const argv = watched([
    process.execPath,
    '--import',
    'tsx',
    'packaging/image/build.ts',
    ...['--deb', deb, '--out', join(dir, 'again'), '--source', SOURCE],
  ]);
  const secondBuild = promisify(execFile)(argv[0] as string, argv.slice(1), {
    cwd: CHECKOUT,
    timeout: 300_000,
    killSignal: 'SIGKILL',
  });
  const started = Date.now();
  const image = buildImage({ checkout: CHECKOUT, outDir: join(dir, 'out'), deb, source: SOURCE });
  t.diagnostic(`built ${basename(image.path)} in ${Date.now() - started} ms: ${image.bytes} bytes`);
  const arch = /_([a-z0-9]+)\.deb$/.exec(deb)?.[1];
  assert.equal(basename(image.path), `threatcol-${manifest.version}-${arch}.oci.tar`);

  const load = await podman(['load', '--input', image.path]);
  assert.equal(load.code, 0, load.stderr);
  const [inspected] = JSON.parse((await podman(['image', 'inspect', image.reference])).stdout) as {
    Digest: string;
    Size: number;
    Config: { User: string; ExposedPorts: Record<string, unknown>; Volumes: Record<string, unknown> };
    Labels: Record<string, string>;
    Healthcheck?: { Test: string[] };
  }[];
  assert.ok(inspected, `${image.reference} is loaded`);
  assert.equal(inspected.Digest, image.digest);
  assert.equal(inspected.Config.User, '65532:65532');
  assert.deepEqual(Object.keys(inspected.Config.ExposedPorts).sort(), ['8443/tcp', '9441/tcp']);
  assert.deepEqual(Object.keys(inspected.Config.Volumes), ['/var/lib/threatcol']);
  assert.deepEqual(inspected.Healthcheck?.Test, ['CMD', '/usr/bin/threatcol', 'check']);
  assert.equal(inspected.Labels['org.opencontainers.image.version'], manifest.version);
  assert.equal(inspected.Labels['org.opencontainers.image.licenses'], 'MIT');
  assert.equal(inspected.Labels['org.opencontainers.image.source'], SOURCE);
  t.diagnostic(`unpacked ${inspected.Size} bytes, ${image.layerBytes} compressed`);
  assert.ok(inspected.Size <= MAX_UNPACKED, `${inspected.Size} bytes unpacked`);

  // As a restricted Kubernetes pod runs it: read-only root, no capabilities, no privilege escalation. Host
  // networking on loopback ports of the test's choosing; no systemd here to time the healthcheck (run below).
  const port = await freeLoopbackPort();
  const adminPort = await freeLoopbackPort();
  const files = openFilesLimit();
  const locked = [
    '--pull=never',
    '--network=host',
    '--read-only',
    '--cap-drop=all',
    '--security-opt=no-new-privileges',
    `--ulimit=nofile=${files}:${files}`,
    '--ulimit=nproc=4096:4096',
    '--volume=threatcol-data:/var/lib/threatcol',
  ];
  const serve = await podman([
    'run',
    '--detach',
    '--name=collector',
    '--health-interval=disable',
    ...locked,
    '--env=THREATCOL_SERVER_HOST=127.0.0.1',
    `--env=THREATCOL_SERVER_PORT=${port}`,
    `--env=THREATCOL_ADMIN_LISTEN=127.0.0.1:${adminPort}`,
    image.reference,
  ]);
  assert.equal(serve.code, 0, serve.stderr);
  const logs = async () => (await podman(['logs', 'collector'])).stdout;
  await until(
    async () => (await logs()).includes('"msg":"threatcol is listening"'),
    60_000,
    'serve listening',
  );

  const top = await podman(['top', 'collector', 'user', 'group', 'capeff']);
  assert.match(top.stdout, /^threatcol\s+threatcol\s+none$/m, top.stdout);
  const [container] = JSON.parse((await podman(['inspect', 'collector'])).stdout) as {
    EffectiveCaps: string[] | null;
    HostConfig: { ReadonlyRootfs: boolean };
  }[];
  assert.deepEqual(container?.EffectiveCaps ?? [], []);
  assert.equal(container?.HostConfig.ReadonlyRootfs, true);

  // The CLI through exec, on the collector's configuration: the firewall setup names the port it listens on.
  const added = await podman(['exec', 'collector', 'threatcol', 'sensor', 'add', 'fw-image']);
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, new RegExp(`protocol HTTPS, port ${port}, TLS`));
  const key = /Key: (\S+)/.exec(added.stdout)?.[1];
  assert.ok(key, added.stdout);

  const volume = (
    await podman(['volume', 'inspect', 'threatcol-data', '--format', '{{.Mountpoint}}'])
  ).stdout.trim();
  const agent = trustingAgent(volume);
  t.after(() => agent.close());
  const record = genericRecord({ threat: 'image test' });
  let status = 0;
  await until(
    async () => {
      status = (
        await post(`https://127.0.0.1:${port}`, '/generic', record, { agent, sensor: 'fw-image', key })
      ).status;
      return status === 200;
    },
    30_000,
    'the new sensor accepted',
    200,
  );

  const tail = ['threatcol', 'threats', 'tail', '--no-follow', '--json'];
  const inCollector = await podman(['exec', 'collector', ...tail]);
  assert.equal(inCollector.code, 0, inCollector.stderr);
  assert.match(inCollector.stdout, /"threat":"image test"/);
  // Another container on the same volume (the entrypoint is the CLI): what an upgrade's new image would find.
  const second = await podman(['run', '--rm', ...locked, image.reference, ...tail.slice(1)]);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /"threat":"image test"/);

  const health = await podman(['healthcheck', 'run', 'collector']);
  assert.equal(health.code, 0, `${health.stdout}${health.stderr}`);

  const stop = await podman(['stop', '--time=60', 'collector']);
  assert.equal(stop.code, 0, stop.stderr);
  const exit = await podman(['inspect', 'collector', '--format', '{{.State.ExitCode}}']);
  assert.equal(exit.stdout.trim(), '0');
  // Logs are JSON on stdout, one object a line, ending with the stop.
  const lines = (await logs()).trim().split('\n');
  const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
  assert.equal(messages.at(-1), 'stopped');

  const again = await secondBuild;
  const digest = /^digest (sha256:[0-9a-f]{64})/m.exec(again.stdout)?.[1];
  assert.equal(digest, image.digest, again.stdout);
  assert.equal(sha256(join(dir, 'again', basename(image.path))), sha256(image.path));
});
