// The command line: parses argv with commander, runs one command, and returns its exit code.
import { Command, CommanderError } from 'commander';
import { CATALOGUE, EXIT, ThreatcolError } from '../errors.js';
import { registerCheck } from './check.js';
import { type CliIo, processIo, write } from './io.js';
import { registerSend } from './send.js';
import { registerSensorAdd } from './sensor-add.js';
import { registerSensorList } from './sensor-list.js';
import { registerSensorRevoke } from './sensor-revoke.js';
import { registerSensorRotate } from './sensor-rotate.js';
import { registerSensorShow } from './sensor-show.js';
import { registerServe } from './serve.js';
import { registerSystemdUnit } from './systemd-unit.js';
import { registerThreatsStats } from './threats-stats.js';
import { registerThreatsTail } from './threats-tail.js';

export const VERSION = '0.1.0';

export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let pending: Promise<number> | null = null;
  const run = (action: () => Promise<number>) => {
    pending = action();
  };
  const program = new Command('threatcol')
    .description('Threat-report collector: firewalls and sensors POST detections over HTTPS.')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  registerServe(program, io, run);
  registerCheck(program, io, run);
  registerSystemdUnit(program, io, run);
  const sensor = program.command('sensor').description('issue, list and revoke sensor keys');
  registerSensorAdd(sensor, io, run);
  registerSensorList(sensor, io, run);
  registerSensorRevoke(sensor, io, run);
  registerSensorRotate(sensor, io, run);
  registerSensorShow(sensor, io, run);
  registerThreatsTail(program, io, run);
  registerThreatsStats(program, io, run);
  registerSend(program, io, run);
  for (const cmd of [program, sensor, ...program.commands, ...sensor.commands]) {
    cmd
      .exitOverride()
      .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  }

  try {
    await program.parseAsync(argv, { from: 'user' });
    if (pending === null) return EXIT.OK;
    return await pending;
  } catch (error) {
    return reportError(error, io);
  }
}

export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.OK;
    if (error.code === 'commander.help') return EXIT.OK;
    return EXIT.USAGE;
  }
  if (error instanceof ThreatcolError) {
    write(io.stderr, `threatcol: ${error.code}: ${error.message}`);
    return CATALOGUE[error.code].exit;
  }
  write(io.stderr, `threatcol: INTERNAL: ${(error as Error)?.stack ?? String(error)}`);
  return EXIT.SOFTWARE;
}
