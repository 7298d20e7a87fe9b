// Loads the configuration: defaults < file < THREATCOL_* environment < flags, validated with every problem listed.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import { type ErrorDetail, isPermissionError, permissionDenied, ThreatcolError } from '../errors.js';
import validateConfigSchema from '../generated/config-validator.js';
import { parseAdminListen } from './admin-address.js';
import { blocklistChecks, RULE_KEY_NAMES, ruleWithDefaults } from './blocklist-schema.js';
import { DEFAULT_CONFIG_PATH, envNameFor, type Leaf, listConfigKeys } from './config-keys.js';
import { parseExpectEvery } from './expect-every.js';
import { stripJsonComments } from './jsonc.js';
import { didYouMean } from './nearest-key.js';
import { applyOutputDefaults, GROUPED_TYPES, outputKeysFor } from './outputs-schema.js';
import type { Config } from './schema.js';

export { DEFAULT_CONFIG_PATH, envNameFor, listConfigKeys } from './config-keys.js';

/** Environment variables that belong to the client side (`threatcol send`) or select the file itself. */
const RESERVED_ENV = new Set(['THREATCOL_CONFIG', 'THREATCOL_URL', 'THREATCOL_SENSOR', 'THREATCOL_KEY']);

export interface LoadConfigOptions {
  /** `--config FILE`; when absent, THREATCOL_CONFIG, then /etc/threatcol/config.json if it exists. */
  configPath?: string | undefined;
  /** Flag values by dotted key (`server.port`); undefined values are ignored. */
  overrides?: Record<string, unknown>;
  env: Record<string, string | undefined>;
  /** Where to look when neither --config nor THREATCOL_CONFIG names a file. */
  defaultConfigPath?: string;
}

export interface LoadedConfig {
  config: Config;
  dataDir: string;
  configPath: string | null;
}

// Compiled from the schema at build time (npm run docs): loading ajv and compiling cost every command ~70 ms.
const validateConfig = validateConfigSchema as ((data: unknown) => data is Config) & {
  errors?: ErrorObject[] | null;
};

export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const env = options.env;
  const problems: ErrorDetail[] = [];
  const explicit = options.configPath ?? env.THREATCOL_CONFIG;
  const candidate = explicit ?? options.defaultConfigPath ?? DEFAULT_CONFIG_PATH;
  let configPath: string | null = null;
  let raw: Record<string, unknown> = {};
  if (explicit !== undefined || existsSync(candidate)) {
    configPath = resolve(candidate);
    raw = readConfigFile(configPath);
  }

  const leaves = listConfigKeys();
  const known = new Map(leaves.map((leaf) => [envNameFor(leaf.path), leaf]));
  /** Keys a THREATCOL_* variable set (dotted path -> `NAME="value"`): their errors name the variable, not the file. */
  const fromEnv = new Map<string, string>();
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith('THREATCOL_') || value === undefined || RESERVED_ENV.has(name)) continue;
    const leaf = known.get(name);
    if (!leaf) {
      const hint = didYouMean(name, [...known.keys(), ...RESERVED_ENV]);
      problems.push({
        path: name,
        message: `unknown environment variable${hint || ' (see the configuration table)'}`,
      });
      continue;
    }
    const types = [leaf.schema.type ?? []].flat();
    if (types.includes('object')) {
      try {
        JSON.parse(value);
      } catch (error) {
        problems.push({
          path: name,
          message: `takes a JSON object, e.g. ${name}='{"virus": 4}': ${(error as Error).message}`,
        });
        continue;
      }
    }
    setPath(raw, leaf.path, parseEnvValue(value, leaf.schema));
    // A secret's value is not echoed into a terminal or the journal, nor an object or a list (outputs, NATS
    // server URLs may hold credentials).
    const hidden =
      /token|password|secret/i.test(leaf.path[leaf.path.length - 1] ?? '') ||
      types.includes('object') ||
      types.includes('array');
    fromEnv.set(leaf.path.join('.'), hidden ? name : `${name}=${JSON.stringify(value)}`);
  }
  for (const [dotted, value] of Object.entries(options.overrides ?? {})) {
    if (value === undefined) continue;
    setPath(raw, dotted.split('.'), value);
    fromEnv.delete(dotted);
  }

  if (!validateConfig(raw)) {
    for (const error of validateConfig.errors ?? []) {
      // An output's type chooses its keys by if/then: the failed `then` is reported by its own errors.
      if (error.keyword === 'if' || error.keyword === 'propertyNames') continue;
      problems.push(describeAjvError(error, raw));
    }
  } else {
    problems.push(...crossChecks(raw));
  }
  if (problems.length > 0) {
    // Every problem a variable caused names it and its value (a variable's own name is its path already).
    const source = (path: string): string | undefined =>
      [...fromEnv].find(([key]) => path === key || path.startsWith(`${key}.`))?.[1];
    const fromFile = problems.some((p) => source(p.path) === undefined && !p.path.startsWith('THREATCOL_'));
    const where = configPath && fromFile ? ` (${configPath})` : '';
    const list = problems
      .map((p) => {
        const variable = source(p.path);
        return `${p.path || '(root)'}${variable ? ` (from ${variable})` : ''}: ${p.message}`;
      })
      .join('; ');
    throw new ThreatcolError('CONFIG_INVALID', `the configuration is invalid${where}: ${list}`, {
      details: problems,
    });
  }
  const config = raw as unknown as Config;
  for (const [name, output] of Object.entries(config.outputs)) {
    config.outputs[name] = applyOutputDefaults(output as unknown as Record<string, unknown>);
  }
  for (const [name, rule] of Object.entries(config.blocklist.rules)) {
    config.blocklist.rules[name] = ruleWithDefaults(rule);
  }
  const dataDir = resolveDataDir(config.dataDir, env, process.getuid?.() ?? -1);
  return { config, dataDir, configPath };
}

/** DESIGN 4: $STATE_DIRECTORY (systemd), else /var/lib/threatcol for root, else ~/.local/state/threatcol. */
export function resolveDataDir(
  configured: string | null,
  env: Record<string, string | undefined>,
  uid: number,
  homeDir?: string,
): string {
  if (configured) return resolve(configured);
  const state = env.STATE_DIRECTORY?.split(':')[0];
  if (state) return resolve(state);
  if (uid === 0) return '/var/lib/threatcol';
  return join(homeDir ?? env.HOME ?? homedir(), '.local', 'state', 'threatcol');
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    // Root's file (root:threatcol 0640) read by another user: the documented hint, not "the config is invalid".
    if (isPermissionError(error)) throw permissionDenied(error, path, 'read');
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new ThreatcolError('CONFIG_INVALID', `cannot read the configuration file ${path}: ${reason}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripJsonComments(text));
  } catch (error) {
    throw new ThreatcolError(
      'CONFIG_INVALID',
      `the configuration file ${path} is not valid JSON: ${withLineAndColumn((error as Error).message, text)}`,
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ThreatcolError('CONFIG_INVALID', `the configuration file ${path} must hold a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * V8 says "at position 312" (a character offset), which an editor cannot jump to: line and column instead
 * (comments were blanked in place, so the offset is the file's own). "Unexpected end" points past the end.
 */
export function withLineAndColumn(message: string, text: string): string {
  const at = / in JSON at position (\d+)/.exec(message);
  const offset = at ? Number(at[1]) : /end of JSON input/.test(message) ? text.length : null;
  if (offset === null) return message;
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  const column = offset - before.lastIndexOf('\n');
  const where = `line ${line}, column ${column}`;
  return at ? message.replace(at[0], ` at ${where}`) : `${message} at ${where}`;
}

function parseEnvValue(value: string, schema: Leaf['schema']): unknown {
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  // Before the integer parse: an empty value sets a nullable integer (store.retention.maxBytes) to null.
  if (types.includes('null') && value === '') return null;
  // A list (nats.servers) comes comma-separated: THREATCOL_NATS_SERVERS=nats://a:4222,nats://b:4222.
  if (types.includes('array')) {
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }
  if (types.includes('integer')) return /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
  if (types.includes('boolean') && /^(true|false)$/i.test(value.trim()))
    return value.trim().toLowerCase() === 'true';
  if (types.includes('object')) {
    try {
      return JSON.parse(value);
    } catch {
      return value;
    }
  }
  return value;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

function describeAjvError(error: ErrorObject, raw: Record<string, unknown>): ErrorDetail {
  const path = error.instancePath.slice(1).replaceAll('/', '.');
  if (error.propertyName !== undefined) {
    return {
      path: `${path}.${error.propertyName}`,
      message: 'names may hold only A-Z a-z 0-9 _ - (1 to 64)',
    };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    const full = path ? `${path}.${extra}` : extra;
    const output = /^outputs\/([^/]+)(\/.*)?$/.exec(error.instancePath.slice(1));
    if (output) return describeOutputKey(output[1] as string, output[2] ?? '', extra, raw);
    const rule = /^blocklist\/rules\/([^/]+)$/.exec(error.instancePath.slice(1));
    if (rule) {
      return {
        path: full,
        message: `unknown key of the blocklist rule "${rule[1]}"${didYouMean(extra, RULE_KEY_NAMES)}`,
      };
    }
    const keys = listConfigKeys().map((leaf) => leaf.path.join('.'));
    const sections = [...new Set(listConfigKeys().map((leaf) => leaf.path.slice(0, -1).join('.')))];
    return { path: full, message: `unknown key${didYouMean(full, [...keys, ...sections].filter(Boolean))}` };
  }
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues;
    return { path, message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}` };
  }
  return { path, message: error.message ?? 'is invalid' };
}

/** An unknown key of an output: named with its output, hinted from the keys its type takes. */
function describeOutputKey(
  name: string,
  within: string,
  extra: string,
  raw: Record<string, unknown>,
): ErrorDetail {
  const output = (raw.outputs as Record<string, { type?: unknown }> | undefined)?.[name];
  const type = typeof output?.type === 'string' ? output.type : '';
  const prefix = `outputs.${name}${within.replaceAll('/', '.')}`;
  const nested: Record<string, string[]> = {
    '': outputKeysFor(type),
    '/filter': ['minCriticality', 'sensors', 'endpoints'],
    '/batch': ['maxRecords', 'maxBytes', 'maxWaitMs'],
  };
  const candidates = nested[within] ?? [];
  if (within === '' && extra === 'group' && type !== '')
    return {
      path: `${prefix}.${extra}`,
      message: `group is for the alert outputs (${GROUPED_TYPES.join(', ')}) only: a ${type} output forwards every record`,
    };
  return {
    path: `${prefix}.${extra}`,
    message: `unknown key of the ${type} output "${name}"${didYouMean(extra, candidates)}`,
  };
}

/** Request bodies in memory: one sensor may hold 1/BODY_SHARES of them (server.maxInflightBodyBytes). */
export const BODY_SHARES = 4;

function crossChecks(config: Config): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  if ((config.tls.cert === null) !== (config.tls.key === null)) {
    problems.push({ path: 'tls', message: 'set both tls.cert and tls.key, or neither (self-signed)' });
  }
  if (!isValidTimezone(config.firewall.defaultTimezone)) {
    problems.push({ path: 'firewall.defaultTimezone', message: 'is not an IANA time zone' });
  }
  if (config.tls.minVersion === 'TLSv1.3' && config.tls.maxVersion === 'TLSv1.2') {
    problems.push({ path: 'tls.maxVersion', message: 'must not be below tls.minVersion' });
  }
  // One sensor may hold a quarter of the bodies in memory: that quarter must hold one body of the largest size,
  // else such a body is refused with 503 on an idle collector, and its sender retries it for ever.
  if (config.server.maxInflightBodyBytes < BODY_SHARES * config.server.maxBodyBytes) {
    problems.push({
      path: 'server.maxInflightBodyBytes',
      message: `must be at least ${BODY_SHARES} × server.maxBodyBytes (${BODY_SHARES * config.server.maxBodyBytes}): one sensor may hold a quarter of it, which must hold one body of the largest size`,
    });
  }
  problems.push(...adminChecks(config.admin));
  problems.push(...syslogChecks(config.syslog));
  if (parseExpectEvery(config.sensors.expectEvery) === null) {
    problems.push({
      path: 'sensors.expectEvery',
      message: `"${config.sensors.expectEvery}" is neither "off" nor a duration of at least 1s (e.g. 15m, 1h, 1d)`,
    });
  }
  problems.push(...blocklistChecks(config.blocklist));
  for (const key of Object.keys(config.firewall.criticalityByCategory)) {
    if (key !== key.toLowerCase()) {
      problems.push({
        path: `firewall.criticalityByCategory.${key}`,
        message: 'categories must be lower case',
      });
    }
  }
  return problems;
}

/** The syslog listeners' addresses are host:port like admin.listen's. */
function syslogChecks(syslog: Config['syslog']): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  for (const key of ['listen', 'tcpListen', 'relpListen'] as const) {
    try {
      parseAdminListen(syslog[key]);
    } catch (error) {
      problems.push({ path: `syslog.${key}`, message: (error as Error).message });
    }
  }
  return problems;
}

/** DESIGN 11: the admin listener is loopback only unless a token guards it. */
function adminChecks(admin: Config['admin']): ErrorDetail[] {
  try {
    const address = parseAdminListen(admin.listen);
    if (address && !address.loopback && admin.token === null) {
      return [
        {
          path: 'admin.listen',
          message: `${admin.listen} is not a loopback address: set admin.token (THREATCOL_ADMIN_TOKEN) so every admin route needs it, or listen on 127.0.0.1`,
        },
      ];
    }
  } catch (error) {
    return [{ path: 'admin.listen', message: (error as Error).message }];
  }
  return [];
}

export function isValidTimezone(zone: string): boolean {
  // The default: the first Intl.DateTimeFormat loads the zone data, a noticeable share of a command's start-up.
  if (zone === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}
