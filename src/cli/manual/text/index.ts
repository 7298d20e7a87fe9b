// Each command's reference prose, by command path ('' is the program): the one place docs/cli.md and the man
// pages take it from. A test checks that every command has an entry and every entry a command.
import type { CommandManual } from '../command-manual.js';
import {
  allowAddManual,
  allowListManual,
  allowManual,
  allowRemoveManual,
  blockAddManual,
  blockListManual,
  blockManual,
  blockRemoveManual,
  feedAddManual,
  feedListManual,
  feedManual,
  feedRemoveManual,
  feedRotateManual,
  feedShowManual,
} from './blocklist.js';
import { checkManual } from './check.js';
import { completionManual } from './completion.js';
import { outputsManual } from './outputs/outputs.js';
import { outputsDeadLetterManual } from './outputs/outputs-dead-letter.js';
import { outputsForgetManual } from './outputs/outputs-forget.js';
import { outputsListManual } from './outputs/outputs-list.js';
import { outputsReplayManual } from './outputs/outputs-replay.js';
import { outputsTestManual } from './outputs/outputs-test.js';
import { overviewManual } from './overview.js';
import { reloadManual } from './reload.js';
import { sendManual } from './send.js';
import { sensorManual } from './sensor/sensor.js';
import { sensorAddManual } from './sensor/sensor-add.js';
import { sensorDeleteManual } from './sensor/sensor-delete.js';
import { sensorListManual } from './sensor/sensor-list.js';
import { sensorRevokeManual } from './sensor/sensor-revoke.js';
import { sensorRotateManual } from './sensor/sensor-rotate.js';
import { sensorSetManual } from './sensor/sensor-set.js';
import { sensorShowManual } from './sensor/sensor-show.js';
import { serveManual } from './serve.js';
import { sourceManual, sourceShowManual } from './source.js';
import { storeManual } from './store.js';
import { storeMigrateManual } from './store-migrate.js';
import { systemdUnitManual } from './systemd-unit.js';
import { threatsManual } from './threats.js';
import { threatsSearchManual } from './threats-search.js';
import { threatsStatsManual } from './threats-stats.js';
import { threatsTailManual } from './threats-tail.js';

export const MANUALS: Readonly<Record<string, CommandManual>> = {
  '': overviewManual,
  serve: serveManual,
  check: checkManual,
  reload: reloadManual,
  'systemd-unit': systemdUnitManual,
  sensor: sensorManual,
  'sensor add': sensorAddManual,
  'sensor list': sensorListManual,
  'sensor revoke': sensorRevokeManual,
  'sensor rotate': sensorRotateManual,
  'sensor show': sensorShowManual,
  'sensor set': sensorSetManual,
  'sensor delete': sensorDeleteManual,
  threats: threatsManual,
  'threats tail': threatsTailManual,
  'threats stats': threatsStatsManual,
  'threats search': threatsSearchManual,
  source: sourceManual,
  'source show': sourceShowManual,
  send: sendManual,
  outputs: outputsManual,
  'outputs list': outputsListManual,
  'outputs test': outputsTestManual,
  'outputs replay': outputsReplayManual,
  'outputs forget': outputsForgetManual,
  'outputs dead-letter': outputsDeadLetterManual,
  feed: feedManual,
  'feed add': feedAddManual,
  'feed list': feedListManual,
  'feed show': feedShowManual,
  'feed rotate': feedRotateManual,
  'feed remove': feedRemoveManual,
  block: blockManual,
  'block add': blockAddManual,
  'block remove': blockRemoveManual,
  'block list': blockListManual,
  allow: allowManual,
  'allow add': allowAddManual,
  'allow list': allowListManual,
  'allow remove': allowRemoveManual,
  store: storeManual,
  'store migrate': storeMigrateManual,
  completion: completionManual,
};
