// The whole command tree, built without running anything: what the man pages, docs/cli.md, the completion
// scripts and the help outline are rendered from. A command line builds only its part (program.ts).
import type { Command } from 'commander';
import { registerAllowAdd } from './blocklist/allow-add.js';
import { registerAllowList } from './blocklist/allow-list.js';
import { registerAllowRemove } from './blocklist/allow-remove.js';
import { registerBlockAdd } from './blocklist/block-add.js';
import { registerBlockList } from './blocklist/block-list.js';
import { registerBlockRemove } from './blocklist/block-remove.js';
import { registerFeedAdd } from './blocklist/feed-add.js';
import { registerFeedList } from './blocklist/feed-list.js';
import { registerFeedRemove } from './blocklist/feed-remove.js';
import { registerFeedRotate } from './blocklist/feed-rotate.js';
import { registerFeedShow } from './blocklist/feed-show.js';
import { registerCheck } from './check.js';
import { COMMANDS, type Register } from './command-table.js';
import { registerCompletion } from './completion.js';
import { type CliIo, processIo } from './io.js';
import { registerOutputsDeadLetter } from './outputs/outputs-dead-letter.js';
import { registerOutputsForget } from './outputs/outputs-forget.js';
import { registerOutputsList } from './outputs/outputs-list.js';
import { registerOutputsReplay } from './outputs/outputs-replay.js';
import { registerOutputsTest } from './outputs/outputs-test.js';
import { assembleProgram } from './program.js';
import { registerReload } from './reload.js';
import { registerSend } from './send.js';
import { registerSensorAdd } from './sensor/sensor-add.js';
import { registerSensorDelete } from './sensor/sensor-delete.js';
import { registerSensorList } from './sensor/sensor-list.js';
import { registerSensorRevoke } from './sensor/sensor-revoke.js';
import { registerSensorRotate } from './sensor/sensor-rotate.js';
import { registerSensorSet } from './sensor/sensor-set.js';
import { registerSensorShow } from './sensor/sensor-show.js';
import { registerServe } from './serve.js';
import { registerSourceShow } from './source/source-show.js';
import { registerStoreMigrate } from './store-migrate.js';
import { registerSystemdUnit } from './systemd-unit.js';
import { registerThreatsSearch } from './threats/threats-search.js';
import { registerThreatsStats } from './threats/threats-stats.js';
import { registerThreatsTail } from './threats/threats-tail.js';

/**
 * Each command's module, loaded up front (the builders here are synchronous), by its path in command-table.ts;
 * test/unit/command-table.test.ts checks each is what the table's loader returns.
 */
export const REGISTERS: Readonly<Record<string, Register>> = {
  serve: registerServe,
  check: registerCheck,
  reload: registerReload,
  'systemd-unit': registerSystemdUnit,
  'sensor add': registerSensorAdd,
  'sensor list': registerSensorList,
  'sensor revoke': registerSensorRevoke,
  'sensor rotate': registerSensorRotate,
  'sensor show': registerSensorShow,
  'sensor set': registerSensorSet,
  'sensor delete': registerSensorDelete,
  'threats tail': registerThreatsTail,
  'threats stats': registerThreatsStats,
  'threats search': registerThreatsSearch,
  'source show': registerSourceShow,
  send: registerSend,
  'outputs list': registerOutputsList,
  'outputs test': registerOutputsTest,
  'outputs replay': registerOutputsReplay,
  'outputs forget': registerOutputsForget,
  'outputs dead-letter': registerOutputsDeadLetter,
  'feed add': registerFeedAdd,
  'feed list': registerFeedList,
  'feed show': registerFeedShow,
  'feed rotate': registerFeedRotate,
  'feed remove': registerFeedRemove,
  'block add': registerBlockAdd,
  'block remove': registerBlockRemove,
  'block list': registerBlockList,
  'allow add': registerAllowAdd,
  'allow list': registerAllowList,
  'allow remove': registerAllowRemove,
  'store migrate': registerStoreMigrate,
  completion: registerCompletion,
};

/** The whole tree, as a command line parses its part of it, without parsing or running anything. */
export function buildProgram(io: CliIo = processIo()): Command {
  const commands = COMMANDS.map((entry) => {
    const register = REGISTERS[entry.path.join(' ')];
    if (!register) throw new Error(`no module registers ${entry.path.join(' ')}`);
    return [entry, register] as const;
  });
  return assembleProgram(io, () => {}, commands).program;
}
