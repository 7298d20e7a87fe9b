// Starts the real collector in this process (real HTTPS, real files) with a captured log, for fast black-box tests.
import { Writable } from 'node:stream';
import type { Agent } from 'undici';
import { type LoadedConfig, loadConfig } from '../../src/config/load-config.js';
import { type Daemon, startDaemon } from '../../src/daemon/start-daemon.js';
import { ensureDataDir } from '../../src/data-dir/ensure-data-dir.js';
import { createLogger } from '../../src/log.js';
import type { FileOps } from '../../src/store/file-ops.js';
import { createFileRegistry } from '../../src/store/files/file-registry.js';
import { trustingAgent } from './client.js';
import { makeTempDir } from './temp-dir.js';

export interface TestServer {
  url: string;
  /** http://127.0.0.1:<port> of the admin listener (port 0 unless the test asked for another). */
  adminUrl: string | null;
  dataDir: string;
  daemon: Daemon;
  loaded: LoadedConfig;
  agent: Agent;
  logs: Record<string, unknown>[];
  logText: () => string;
  addSensor(name: string, options?: { timezone?: string }): Promise<string>;
  revokeSensor(name: string): Promise<void>;
  stop(): Promise<number>;
}

export async function startTestServer(
  t: { after(fn: () => unknown): void },
  options: {
    overrides?: Record<string, unknown>;
    dataDir?: string;
    fileOps?: FileOps;
    now?: () => number;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? makeTempDir(t);
  const loaded = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: {
      dataDir,
      'server.host': '127.0.0.1',
      'server.port': 0,
      // Many collectors run at once in the suite: each gets its own admin port, never the default 9441.
      'admin.listen': '127.0.0.1:0',
      'log.level': 'debug',
      'registry.pollIntervalMs': 100,
      ...options.overrides,
    },
  });
  let logText = '';
  const logs: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const text = chunk.toString();
      logText += text;
      for (const line of text.split('\n')) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const logger = createLogger({ level: loaded.config.log.level, format: 'json', stream });
  const daemon = await startDaemon({
    loaded,
    logger,
    ...(options.fileOps ? { fileOps: options.fileOps } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const agent = trustingAgent(dataDir);
  const registry = createFileRegistry({ dataDir, owner: ensureDataDir(dataDir) });
  let stopped: Promise<number> | null = null;
  const server: TestServer = {
    url: `https://127.0.0.1:${daemon.address.port}`,
    adminUrl: daemon.adminAddress ? `http://127.0.0.1:${daemon.adminAddress.port}` : null,
    dataDir,
    daemon,
    loaded,
    agent,
    logs,
    logText: () => logText,
    async addSensor(name, opts = {}) {
      const { key } = await registry.add({ name, timezone: opts.timezone ?? null });
      daemon.reload();
      return key;
    },
    async revokeSensor(name) {
      await registry.revoke(name);
      daemon.reload();
    },
    stop() {
      if (!stopped) {
        daemon.stop();
        stopped = daemon.done.then(async (code) => {
          await agent.close();
          return code;
        });
      }
      return stopped;
    },
  };
  t.after(() => server.stop());
  return server;
}
