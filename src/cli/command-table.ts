// Which module defines each command, in the order help lists them, and which of them a command line needs: a
// command loads its own definition, not the other 23 (each definition imports what its action formats with).
import type { Command } from 'commander';
import type { CliIo } from './io.js';

export type Runner = (action: () => Promise<number>) => void;
/** What each command module exports: adds its command (and its group, for threats and store) under `parent`. */
export type Register = (parent: Command, io: CliIo, run: Runner) => void;

/** The groups program.ts creates, each registering its subcommands under it (threats and store make their own). */
export const GROUPS = {
  sensor: 'issue, list, change, revoke and delete sensor keys',
  outputs: 'where records are forwarded: list, test, replay, forget, dead letters',
  feed: 'blocklist feeds that firewalls pull: add, list, show, rotate, remove',
  block: 'blocked addresses: add and remove by hand, list',
  allow: 'networks never blocked: add, list, remove',
} as const;

export interface CommandEntry {
  /** `sensor add` as ['sensor', 'add']. */
  path: readonly string[];
  /** Registered under this group of GROUPS, else under the program. */
  group?: keyof typeof GROUPS;
  /** The command's action reads the whole tree (completion renders it), so it never runs on a part. */
  wholeTree?: true;
  load: () => Promise<Register>;
}

/** Every command, in help order; test/unit/command-table.test.ts holds it equal to whole-program.ts. */
export const COMMANDS: readonly CommandEntry[] = [
  { path: ['serve'], load: async () => (await import('./serve.js')).registerServe },
  { path: ['check'], load: async () => (await import('./check.js')).registerCheck },
  { path: ['reload'], load: async () => (await import('./reload.js')).registerReload },
  { path: ['systemd-unit'], load: async () => (await import('./systemd-unit.js')).registerSystemdUnit },
  sensor('add', async () => (await import('./sensor/sensor-add.js')).registerSensorAdd),
  sensor('list', async () => (await import('./sensor/sensor-list.js')).registerSensorList),
  sensor('revoke', async () => (await import('./sensor/sensor-revoke.js')).registerSensorRevoke),
  sensor('rotate', async () => (await import('./sensor/sensor-rotate.js')).registerSensorRotate),
  sensor('show', async () => (await import('./sensor/sensor-show.js')).registerSensorShow),
  sensor('set', async () => (await import('./sensor/sensor-set.js')).registerSensorSet),
  sensor('delete', async () => (await import('./sensor/sensor-delete.js')).registerSensorDelete),
  {
    path: ['threats', 'tail'],
    load: async () => (await import('./threats/threats-tail.js')).registerThreatsTail,
  },
  {
    path: ['threats', 'stats'],
    load: async () => (await import('./threats/threats-stats.js')).registerThreatsStats,
  },
  {
    path: ['threats', 'search'],
    load: async () => (await import('./threats/threats-search.js')).registerThreatsSearch,
  },
  {
    path: ['source', 'show'],
    load: async () => (await import('./source/source-show.js')).registerSourceShow,
  },
  { path: ['send'], load: async () => (await import('./send.js')).registerSend },
  outputs('list', async () => (await import('./outputs/outputs-list.js')).registerOutputsList),
  outputs('test', async () => (await import('./outputs/outputs-test.js')).registerOutputsTest),
  outputs('replay', async () => (await import('./outputs/outputs-replay.js')).registerOutputsReplay),
  outputs('forget', async () => (await import('./outputs/outputs-forget.js')).registerOutputsForget),
  outputs(
    'dead-letter',
    async () => (await import('./outputs/outputs-dead-letter.js')).registerOutputsDeadLetter,
  ),
  feed('add', async () => (await import('./blocklist/feed-add.js')).registerFeedAdd),
  feed('list', async () => (await import('./blocklist/feed-list.js')).registerFeedList),
  feed('show', async () => (await import('./blocklist/feed-show.js')).registerFeedShow),
  feed('rotate', async () => (await import('./blocklist/feed-rotate.js')).registerFeedRotate),
  feed('remove', async () => (await import('./blocklist/feed-remove.js')).registerFeedRemove),
  block('add', async () => (await import('./blocklist/block-add.js')).registerBlockAdd),
  block('remove', async () => (await import('./blocklist/block-remove.js')).registerBlockRemove),
  block('list', async () => (await import('./blocklist/block-list.js')).registerBlockList),
  allow('add', async () => (await import('./blocklist/allow-add.js')).registerAllowAdd),
  allow('list', async () => (await import('./blocklist/allow-list.js')).registerAllowList),
  allow('remove', async () => (await import('./blocklist/allow-remove.js')).registerAllowRemove),
  { path: ['store', 'migrate'], load: async () => (await import('./store-migrate.js')).registerStoreMigrate },
  {
    path: ['completion'],
    wholeTree: true,
    load: async () => (await import('./completion.js')).registerCompletion,
  },
];

function sensor(name: string, load: CommandEntry['load']): CommandEntry {
  return { path: ['sensor', name], group: 'sensor', load };
}

function outputs(name: string, load: CommandEntry['load']): CommandEntry {
  return { path: ['outputs', name], group: 'outputs', load };
}

function feed(name: string, load: CommandEntry['load']): CommandEntry {
  return { path: ['feed', name], group: 'feed', load };
}

function block(name: string, load: CommandEntry['load']): CommandEntry {
  return { path: ['block', name], group: 'block', load };
}

function allow(name: string, load: CommandEntry['load']): CommandEntry {
  return { path: ['allow', name], group: 'allow', load };
}

/**
 * The commands `argv` can reach: the one it names (`sensor list ...`: that one), a whole group when the
 * subcommand is missing or unknown (`sensor --help` lists them all), else every command (commander then finds
 * the error, and suggests a name from all of them).
 */
export function commandsFor(argv: readonly string[]): readonly CommandEntry[] {
  const top = COMMANDS.filter((c) => c.path[0] === argv[0]);
  if (top.length === 0 || top.some((c) => c.wholeTree)) return COMMANDS;
  if (top.length === 1 && top[0]?.path.length === 1) return top;
  const sub = top.filter((c) => c.path[1] === argv[1]);
  return sub.length === 1 ? sub : top;
}
