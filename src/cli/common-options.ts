// Options every command shares (--config, --data-dir) and loading the configuration from them.
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load-config.js';
import { ThreatcolError } from '../errors.js';
import type { CliIo } from './io.js';

export interface CommonOptions {
  config?: string;
  dataDir?: string;
}

export function addCommonOptions(command: Command): Command {
  return command
    .option('--config <file>', 'configuration file (default: /etc/threatcol/config.json if present)')
    .option(
      '--data-dir <dir>',
      'data directory (default: $STATE_DIRECTORY, /var/lib/threatcol or ~/.local/state/threatcol)',
    );
}

/** Async because the loader is imported here, by the commands that read a configuration. */
export async function loadFromOptions(
  options: CommonOptions,
  io: CliIo,
  overrides: Record<string, unknown> = {},
): Promise<LoadedConfig> {
  return (await configReader(options, io, overrides))();
}

/** Reads the configuration as `loadFromOptions` does, again at each call (a reload: synchronous). */
export async function configReader(
  options: CommonOptions,
  io: CliIo,
  overrides: Record<string, unknown> = {},
): Promise<() => LoadedConfig> {
  const { loadConfig } = await import('../config/load-config.js');
  return () =>
    loadConfig({
      configPath: options.config,
      env: io.env,
      overrides: { dataDir: options.dataDir, ...overrides },
    });
}

/** `--host`/`--port` as config overrides; a port that is not an integer 0-65535 is a USAGE error, as in every flag. */
export function listenOverrides(options: { host?: string; port?: string }): Record<string, unknown> {
  const port = options.port;
  if (port !== undefined && !(/^\d+$/.test(port.trim()) && Number(port) <= 65535)) {
    throw new ThreatcolError('USAGE', `--port must be an integer from 0 to 65535, not "${port}"`);
  }
  return {
    'server.host': options.host,
    'server.port': port === undefined ? undefined : Number(port),
  };
}

/** A parent command (`threats`, `store`), created by whichever of its subcommands registers first. */
export function parentCommand(program: Command, name: string, description: string): Command {
  return program.commands.find((c) => c.name() === name) ?? program.command(name).description(description);
}

export const threatsCommand = (program: Command): Command =>
  parentCommand(program, 'threats', 'watch the stored threat records');
