// `systemctl reload` re-reads the whole configuration: the parts registered as live are applied, the keys that
// changed but only take effect at start are named, and a file that cannot be loaded changes nothing.
import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load-config.js';
import type { Config } from '../config/schema.js';

/**
 * Applies one part of a new configuration to the running process. `keys` are the dotted keys (or prefixes:
 * `rateLimit` takes every `rateLimit.*`) it takes live; it runs when one of them changed. A throw refuses
 * that part: its keys are then reported as needing a restart.
 */
export interface LivePart {
  keys: readonly string[];
  apply(previous: Config, next: Config): void;
}

export type ReloadOutcome =
  | { ok: true; applied: string[]; restartNeeded: string[] }
  | { ok: false; reason: string };

export interface ConfigReloader {
  /**
   * The configuration in force: the one the process started with, and the live parts as last applied. A part
   * refused keeps its old value here (the next reload tries it again); a key that takes a restart keeps the
   * value it started with.
   */
  readonly current: LoadedConfig;
  /** Registers a live part: the hook for anything that can change without a restart (an `outputs` forwarder). */
  onReload(part: LivePart): void;
  /** Reads the configuration again and applies what can change live. Never throws. */
  reload(): ReloadOutcome;
}

export interface ConfigReloaderOptions {
  /** The configuration the process started with. */
  loaded: LoadedConfig;
  /** Reads it again, as at start (same file, environment and flags); throws CONFIG_INVALID and the like. */
  read: () => LoadedConfig;
  logger: Logger;
  /** false in a `--workers` worker: the primary says what was applied and what needs a restart, once. */
  announce?: boolean;
}

export function createConfigReloader(options: ConfigReloaderOptions): ConfigReloader {
  const { logger } = options;
  const started = options.loaded;
  let current = options.loaded;
  const parts: LivePart[] = [];
  const quiet = options.announce === false;

  function reload(): ReloadOutcome {
    let next: LoadedConfig;
    try {
      next = options.read();
    } catch (error) {
      const reason = (error as Error).message;
      logger.error(
        { err: reason, config: current.configPath },
        'configuration not reloaded: the running configuration stays in force',
      );
      return { ok: false, reason };
    }
    const changed = changedKeys(current, next);
    const applied: string[] = [];
    const refused: string[] = [];
    let config = current.config;
    for (const part of parts) {
      const mine = changed.filter((key) => part.keys.some((k) => covers(k, key)));
      if (mine.length === 0) continue;
      try {
        part.apply(current.config, next.config);
        applied.push(...mine);
        config = withKeys(config, next.config, part.keys);
      } catch (error) {
        logger.error({ err: (error as Error).message, keys: mine }, 'a changed setting could not be applied');
        refused.push(...mine);
      }
    }
    // Against the configuration the process started with: a key changed and changed back needs nothing.
    const live = (key: string) => parts.some((p) => p.keys.some((k) => covers(k, key)));
    const restartNeeded = [
      ...new Set([...changedKeys(started, next).filter((key) => !live(key)), ...refused]),
    ].sort();
    // Only what was applied: a refused part is still pending, and the next reload tries it again.
    current = { ...next, dataDir: current.dataDir, config };
    // Looked up at each call: pino swaps a level's method when the level changes (log.level just did).
    logger[quiet ? 'debug' : 'info'](
      { config: next.configPath, applied },
      applied.length > 0 ? 'configuration reloaded' : 'configuration reloaded: nothing to apply live',
    );
    if (restartNeeded.length > 0) {
      logger[quiet ? 'debug' : 'warn'](
        { keys: restartNeeded },
        `changed settings that take effect only after a restart (systemctl restart threatcol): ${restartNeeded.join(', ')}`,
      );
    }
    return { ok: true, applied, restartNeeded };
  }

  return {
    get current() {
      return current;
    },
    onReload: (part) => void parts.push(part),
    reload,
  };
}

/** `config` with the values `keys` (dotted, as a live part names them) have in `from`; `config` is left as it is. */
function withKeys(config: Config, from: Config, keys: readonly string[]): Config {
  const out = structuredClone(config) as unknown as Record<string, unknown>;
  for (const key of keys) {
    const path = key.split('.');
    const last = path.pop() as string;
    let into = out;
    let source: unknown = from;
    for (const step of path) {
      if (!isPlainObject(into[step])) into[step] = {};
      into = into[step] as Record<string, unknown>;
      source = isPlainObject(source) ? source[step] : undefined;
    }
    const value = isPlainObject(source) ? source[last] : undefined;
    if (value === undefined) delete into[last];
    else into[last] = structuredClone(value);
  }
  return out as unknown as Config;
}

/** `rateLimit` covers `rateLimit.burst`; `tls.cert` covers only itself. */
function covers(prefix: string, key: string): boolean {
  return key === prefix || key.startsWith(`${prefix}.`);
}

/** The dotted keys whose values differ (arrays compared whole), plus `dataDir` when it moved. */
export function changedKeys(a: LoadedConfig, b: LoadedConfig): string[] {
  const out = new Set<string>();
  const walk = (x: unknown, y: unknown, path: string) => {
    const bothObjects = isPlainObject(x) && isPlainObject(y);
    if (!bothObjects) {
      if (JSON.stringify(x) !== JSON.stringify(y)) out.add(path);
      return;
    }
    for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
      walk(x[k], y[k], path === '' ? k : `${path}.${k}`);
    }
  };
  walk(a.config, b.config, '');
  if (a.dataDir !== b.dataDir) out.add('dataDir');
  return [...out].sort();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
