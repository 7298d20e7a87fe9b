// `threatcol feed rotate NAME`: a new password for a feed (printed once); the old one stops working at once.
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write, writeJson } from '../io.js';
import { checkFeedName, feedNotFound, feedUrl } from './decisions-cli.js';

interface RotateOptions extends CommonOptions {
  json?: boolean;
}

export function registerFeedRotate(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent
      .command('rotate <name>')
      .description('give a feed a new password (printed once); the old one stops working')
      .option('--json', 'print {"name", "url", "username", "password"} as JSON'),
  ).action((name: string, options: RotateOptions) => run(() => rotateFeed(name, options, io)));
}

async function rotateFeed(name: string, options: RotateOptions, io: CliIo): Promise<number> {
  checkFeedName(name);
  const { generateKey, hashKey } = await import('../../keys.js');
  const loaded = await loadFromOptions(options, io);
  const password = generateKey();
  await withStore(loaded, io, async (store) => {
    const feed = (await store.decisions.read()).feeds.get(name);
    if (!feed) throw feedNotFound(name);
    const value = { ...feed, passwordHash: hashKey(password), rotatedAt: new Date().toISOString() };
    await store.decisions.apply([{ kind: 'feed', key: name, value }]);
  });
  const url = feedUrl(loaded.config, name);
  if (options.json) writeJson(io.stdout, { name, url, username: name, password });
  else
    write(
      io.stdout,
      `Feed "${name}": new password (shown only now): ${password}\n  URL: ${url}\n  User name: ${name}`,
    );
  return 0;
}
