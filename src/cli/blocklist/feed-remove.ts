// `threatcol feed remove NAME`: the feed's URL answers 401 from now on (as an unknown feed does).
import type { Command } from 'commander';
import { withStore } from '../cli-store.js';
import { addCommonOptions, type CommonOptions, loadFromOptions } from '../common-options.js';
import { type CliIo, write } from '../io.js';
import { checkFeedName, feedNotFound } from './decisions-cli.js';

export function registerFeedRemove(
  parent: Command,
  io: CliIo,
  run: (action: () => Promise<number>) => void,
): void {
  addCommonOptions(
    parent.command('remove <name>').description('remove a feed (its URL answers 401 from now on)'),
  ).action((name: string, options: CommonOptions) => run(() => removeFeed(name, options, io)));
}

async function removeFeed(name: string, options: CommonOptions, io: CliIo): Promise<number> {
  checkFeedName(name);
  const loaded = await loadFromOptions(options, io);
  await withStore(loaded, io, async (store) => {
    if (!(await store.decisions.read()).feeds.has(name)) throw feedNotFound(name);
    await store.decisions.apply([
      { kind: 'feed', key: name, value: null },
      { kind: 'fetch', key: name, value: null },
    ]);
  });
  write(io.stdout, `Feed "${name}" removed.`);
  return 0;
}
