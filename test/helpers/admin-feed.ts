// The admin listener in this process on a real files store whose reads pass through counting FileOps (held at
// will), and dashboard feeds opened over real HTTP: for tests of what a feed reads and when.
import { once } from 'node:events';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import type { Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { createAdminServer } from '../../src/admin/admin-server.js';
import { createLiveFeed } from '../../src/admin/live-feed.js';
import { loadConfig } from '../../src/config/load-config.js';
import { type FileOps, nodeFileOps } from '../../src/store/file-ops.js';
import { openStore } from '../../src/store/open-store.js';

/** Reads through FileOps, counted; while `held`, every read waits until `release()`. */
export function heldReads() {
  let open = () => {};
  let gate = Promise.resolve();
  const s = {
    bytes: 0,
    openFds: 0,
    maxOpenFds: 0,
    blocked: 0,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release: () => open(),
  };
  const ops: FileOps = {
    ...nodeFileOps,
    open: async (path, flags, mode) => {
      const fd = await nodeFileOps.open(path, flags, mode);
      s.openFds++;
      s.maxOpenFds = Math.max(s.maxOpenFds, s.openFds);
      return fd;
    },
    read: async (fd, buffer, offset, length, position) => {
      s.blocked++;
      await gate;
      s.blocked--;
      const n = await nodeFileOps.read(fd, buffer, offset, length, position);
      s.bytes += n;
      return n;
    },
    close: async (fd) => {
      await nodeFileOps.close(fd);
      s.openFds--;
    },
  };
  return { s, ops };
}

export async function startAdmin(t: TestContext, dataDir: string, ops: FileOps) {
  const { config } = loadConfig({
    env: {},
    defaultConfigPath: '/nonexistent/threatcol.json',
    overrides: { dataDir },
  });
  const logger = pino({ level: 'silent' });
  // The feeds read through the counted store; the dashboard's own follower through another, uncounted.
  const counted = await openStore(config, { dataDir, logger, fileOps: ops });
  const plain = await openStore(config, { dataDir, logger });
  const admin = createAdminServer({
    address: { host: '127.0.0.1', port: 0, loopback: true },
    token: null,
    logger,
    notReadyReasons: async () => [],
    outputs: async () => [],
    warnings: async () => [],
    renderMetrics: async () => ({ contentType: 'text/plain', body: '' }),
    store: counted,
    feed: createLiveFeed({ reader: plain.reader, logger }),
    defaultTimezone: 'UTC',
  });
  const serverSockets: Socket[] = [];
  admin.server.on('connection', (socket: Socket) => serverSockets.push(socket));
  const address = await admin.listen();
  t.after(async () => {
    await admin.close();
    await counted.close();
    await plain.close();
  });
  return { base: `http://127.0.0.1:${address.port}`, serverSockets };
}

export interface Feed {
  req: ClientRequest;
  res: IncomingMessage;
  text(): string;
  waitFor(part: string): Promise<void>;
}

export async function openFeed(url: string): Promise<Feed> {
  const req = request(url, { agent: false });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let text = '';
  const waiters: Array<() => void> = [];
  res.setEncoding('utf8').on('data', (d: string) => {
    text += d;
    for (const w of waiters.splice(0)) w();
  });
  res.on('error', () => {});
  req.on('error', () => {});
  return {
    req,
    res,
    text: () => text,
    async waitFor(part) {
      const limit = Date.now() + 20_000;
      while (!text.includes(part)) {
        if (Date.now() > limit) throw new Error(`no ${JSON.stringify(part)} within 20 s in: ${text}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 1000).unref();
        });
      }
    },
  };
}
