// Type=notify without a running systemd: the test binds the unix datagram socket systemd would (NOTIFY_SOCKET)
// and reads what `serve` sends through systemd-notify: READY=1 once listening, RELOADING=1 with MONOTONIC_USEC
// then READY=1 around a SIGHUP reload, STOPPING=1 on SIGTERM. Node cannot receive unix datagrams, so python3
// receives them (and closes the barrier fds systemd-notify waits on, as systemd does).
import { strict as assert } from 'node:assert';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createSdNotifier } from '../../src/daemon/sd-notify.js';
import { createLogger } from '../../src/log.js';
import { spawnServe } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const RECEIVER = `
import array, json, os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"bound": True}), flush=True)
while True:
    msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(16 * 4))
    fds = array.array("i")
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % 4])
    for fd in fds:
        os.close(fd)
    print(json.dumps({"text": msg.decode(), "at_usec": time.monotonic_ns() // 1000}), flush=True)
`;

const has = (cmd: string, args: string[]) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
const skip = !has('python3', ['-c', 'import socket'])
  ? 'python3 is not installed: nothing here can receive unix datagrams (Node cannot)'
  : !has('systemd-notify', ['--version'])
    ? 'systemd-notify is not installed (Debian package systemd)'
    : false;

interface Message {
  fields: Record<string, string>;
  atUsec: bigint;
}

interface Receiver {
  path: string;
  messages: Message[];
  /** Resolves with the first message from index `from` on that has `key`. */
  next(key: string, from?: number): Promise<Message>;
}

async function startReceiver(t: { after(fn: () => unknown): void }): Promise<Receiver> {
  const path = join(makeTempDir(t), 'notify');
  const child: ChildProcess = spawn('python3', ['-c', RECEIVER, path], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill('SIGKILL'));
  const messages: Message[] = [];
  const waiters: (() => void)[] = [];
  let buffered = '';
  let bound: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    bound = resolve;
  });
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    buffered += d;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const parsed = JSON.parse(line) as { bound?: boolean; text?: string; at_usec?: number };
      if (parsed.bound) bound();
      if (parsed.text === undefined || parsed.text === 'BARRIER=1') continue;
      const fields = Object.fromEntries(
        parsed.text.split('\n').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      messages.push({ fields, atUsec: BigInt(parsed.at_usec as number) });
      for (const w of waiters.splice(0)) w();
    }
  });
  await Promise.race([ready, once(child, 'exit').then(() => assert.fail('the receiver did not start'))]);
  return {
    path,
    messages,
    async next(key, from = 0) {
      const deadline = Date.now() + 15_000;
      for (;;) {
        const found = messages.slice(from).find((m) => key in m.fields);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0)
          assert.fail(`no ${key}= message; got ${JSON.stringify(messages.map((m) => m.fields))}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
  };
}

test('serve notifies READY=1 once listening, RELOADING=1/READY=1 around SIGHUP and STOPPING=1 on SIGTERM', {
  skip,
}, async (t) => {
  const receiver = await startReceiver(t);
  const serve = await spawnServe(makeTempDir(t), [], { env: { NOTIFY_SOCKET: receiver.path } });
  t.after(() => serve.stop('SIGKILL'));

  const ready = await receiver.next('READY');
  assert.equal(ready.fields.READY, '1');
  // The port exists only once the listener is bound: READY=1 cannot have come before.
  assert.equal(ready.fields.STATUS, `listening on 127.0.0.1 port ${serve.port}`);
  assert.equal(receiver.messages.indexOf(ready), 0, 'READY=1 was not the first message');

  const before = receiver.messages.length;
  serve.child.kill('SIGHUP');
  const reloading = await receiver.next('RELOADING', before);
  assert.equal(reloading.fields.RELOADING, '1');
  // CLOCK_MONOTONIC, as systemd compares it: not after the receiver read the message, and recent.
  const sentAt = BigInt(reloading.fields.MONOTONIC_USEC as string);
  assert.ok(sentAt <= reloading.atUsec, `${sentAt} > ${reloading.atUsec}`);
  assert.ok(reloading.atUsec - sentAt < 10_000_000n, `${sentAt} is ${reloading.atUsec - sentAt} us old`);
  const readyAgain = await receiver.next('READY', receiver.messages.indexOf(reloading) + 1);
  assert.equal(readyAgain.fields.READY, '1');
  assert.ok(serve.logs.some((l) => l.msg === 'reloaded the TLS material' && l.reason === 'SIGHUP'));

  const beforeStop = receiver.messages.length;
  serve.child.kill('SIGTERM');
  assert.equal((await receiver.next('STOPPING', beforeStop)).fields.STOPPING, '1');
  assert.deepEqual(await serve.exited, { code: 0, signal: null });
  assert.ok(!serve.logs.some((l) => l.msg === 'cannot notify systemd'), JSON.stringify(serve.logs));
});

test('after a reload the status systemd shows says whether the file was refused or what needs a restart', {
  skip,
}, async (t) => {
  const receiver = await startReceiver(t);
  const config = join(makeTempDir(t), 'config.json');
  writeFileSync(config, '{}');
  const serve = await spawnServe(makeTempDir(t), ['--config', config], {
    env: { NOTIFY_SOCKET: receiver.path },
  });
  t.after(() => serve.stop('SIGKILL'));
  await receiver.next('READY');
  const statusAfterReload = async () => {
    const from = receiver.messages.length;
    serve.child.kill('SIGHUP');
    const reloading = await receiver.next('RELOADING', from);
    return (await receiver.next('READY', receiver.messages.indexOf(reloading) + 1)).fields.STATUS ?? '';
  };
  const listening = `listening on 127.0.0.1 port ${serve.port}`;

  writeFileSync(config, '{ "server": ');
  assert.match(
    await statusAfterReload(),
    new RegExp(
      `^${listening}; configuration NOT reloaded, the previous one stays in force: .*line 1, column 13`,
    ),
  );
  writeFileSync(config, JSON.stringify({ server: { maxConnectionsPerAddress: 7 } }));
  assert.equal(
    await statusAfterReload(),
    `${listening}; configuration reloaded; restart to apply: server.maxConnectionsPerAddress`,
  );
  assert.equal(serve.child.exitCode, null);
});

test('without NOTIFY_SOCKET nothing is sent; a sender that cannot run is warned about once', async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger({ level: 'debug', format: 'json', stream });
  const missing = '/nonexistent/systemd-notify';
  await createSdNotifier({ env: {}, logger, command: missing }).notify({ READY: '1' });
  assert.equal(lines.length, 0);

  const notifier = createSdNotifier({
    env: { NOTIFY_SOCKET: '/nonexistent/notify' },
    logger,
    command: missing,
  });
  void notifier.notify({ READY: '1' });
  await notifier.notify({ STOPPING: '1' });
  await notifier.idle();
  assert.equal(lines.length, 1);
  const warning = lines[0] ?? {};
  assert.equal(warning.msg, 'cannot notify systemd');
  assert.match(String(warning.err), /ENOENT/);
});
