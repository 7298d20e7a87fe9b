// The `outputs` section (DESIGN 13): keys every output has, and one fragment of keys per receiver type, so an
// unknown key of a type is an error naming the output and the key.
import { ELASTICSEARCH_KEYS, ELASTICSEARCH_REQUIRED } from './output-keys/elasticsearch-keys.js';
import { EMAIL_BATCHING, EMAIL_KEYS, EMAIL_REQUIRED } from './output-keys/email-keys.js';
import { SPLUNK_HEC_KEYS, SPLUNK_HEC_REQUIRED } from './output-keys/splunk-hec-keys.js';
import { SYSLOG_KEYS, SYSLOG_REQUIRED } from './output-keys/syslog-keys.js';

export type OutputType = 'syslog' | 'splunk_hec' | 'elasticsearch' | 'webhook' | 'email';

/** One configured output after defaults (applyOutputDefaults); per-type keys beyond these are in `[key]`. */
export interface OutputConfig {
  type: OutputType;
  enabled: boolean;
  url: string | null;
  format: string | null;
  filter: {
    minCriticality: number;
    sensors: string[] | null;
    endpoints: ('firewall' | 'generic' | 'syslog' | 'collector')[] | null;
  };
  batch: { maxRecords: number; maxBytes: number; maxWaitMs: number };
  /** Secrets: a file (read at each start of the output) or an environment variable name, never the value. */
  tokenFile: string | null;
  tokenEnv: string | null;
  passwordFile: string | null;
  passwordEnv: string | null;
  secretFile: string | null;
  secretEnv: string | null;
  ca: string | null;
  timeoutMs: number;
  /** Longest wait between two attempts of a failing output (capped exponential backoff from 1 s). */
  retryMaxMs: number;
  /** Retention may delete what this output has not passed once it is this far behind: "7d" (age) or bytes. */
  maxLag: string | number | null;
  /** Where a new output starts: "now" (records stored from its first start on) or "oldest" (everything kept). */
  startAt: 'now' | 'oldest';
  /** The most its dead-letter files may hold together; the oldest dead letters are dropped beyond it. */
  deadLetterMaxBytes: number;
  [typeKey: string]: unknown;
}

export const OUTPUT_NAME_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

/** The largest `batch.maxRecords`: what grouped alerts size their memory of ids not yet acknowledged by. */
export const BATCH_MAX_RECORDS = 100_000;

/** Defaults of the common keys: applied by applyOutputDefaults and shown in the schema (one source). */
export const OUTPUT_DEFAULTS = {
  enabled: true,
  url: null,
  format: null,
  filter: { minCriticality: 0, sensors: null, endpoints: null },
  batch: { maxRecords: 500, maxBytes: 1_048_576, maxWaitMs: 1000 },
  tokenFile: null,
  tokenEnv: null,
  passwordFile: null,
  passwordEnv: null,
  secretFile: null,
  secretEnv: null,
  ca: null,
  timeoutMs: 30_000,
  retryMaxMs: 300_000,
  maxLag: null,
  startAt: 'now',
  deadLetterMaxBytes: 268_435_456,
} as const;

const nullableString = { type: ['string', 'null'], minLength: 1 };
const envName = { type: ['string', 'null'], pattern: '^[A-Za-z_][A-Za-z0-9_]*$' };

/** Keys every output type takes; `description` feeds the output-keys table of docs/configuration.md. */
const COMMON_KEYS = {
  type: {
    enum: ['syslog', 'splunk_hec', 'elasticsearch', 'webhook', 'email'],
    description: 'the receiver: syslog, splunk_hec, elasticsearch, webhook or email (required)',
  },
  enabled: { type: 'boolean', description: 'false: not forwarded; retention keeps nothing for it' },
  url: { ...nullableString, description: "the receiver's URL (http:// warns at start unless loopback)" },
  format: {
    ...nullableString,
    description: 'message format, per type (webhook: json or slack; syslog: json or cef)',
  },
  filter: {
    type: 'object',
    additionalProperties: false,
    description:
      'which records: {minCriticality 0-4, sensors [names], endpoints ["firewall", "generic", "syslog", "collector"]}; the others are passed',
    properties: {
      minCriticality: { type: 'integer', minimum: 0, maximum: 4 },
      sensors: { type: ['array', 'null'], items: { type: 'string', minLength: 1 } },
      endpoints: {
        type: ['array', 'null'],
        items: { enum: ['firewall', 'generic', 'syslog', 'collector'] },
      },
    },
  },
  batch: {
    type: 'object',
    additionalProperties: false,
    description:
      'a batch is sent at maxRecords records or maxBytes (stored line bytes), or maxWaitMs after its first record',
    properties: {
      maxRecords: { type: 'integer', minimum: 1, maximum: BATCH_MAX_RECORDS },
      maxBytes: { type: 'integer', minimum: 1024, maximum: 268_435_456 },
      maxWaitMs: { type: 'integer', minimum: 0, maximum: 3_600_000 },
    },
  },
  tokenFile: {
    ...nullableString,
    description:
      'file holding the token: webhook Authorization: Bearer, splunk_hec the HEC token, elasticsearch the API key',
  },
  tokenEnv: { ...envName, description: 'environment variable holding the token (instead of tokenFile)' },
  passwordFile: {
    ...nullableString,
    description: 'file holding the password: elasticsearch basic auth, email SMTP AUTH',
  },
  passwordEnv: { ...envName, description: 'environment variable holding the password' },
  secretFile: {
    ...nullableString,
    description: 'file holding the signing secret (webhook: X-Threatcol-Signature)',
  },
  secretEnv: { ...envName, description: 'environment variable holding the signing secret' },
  ca: { ...nullableString, description: 'PEM CA bundle to verify the receiver with; null: the system CAs' },
  timeoutMs: {
    type: 'integer',
    minimum: 100,
    maximum: 600_000,
    description:
      'bounds each wait of a delivery attempt: the connection (at most 10 s of it), the answer, the write, each SMTP step',
  },
  retryMaxMs: {
    type: 'integer',
    minimum: 1000,
    maximum: 3_600_000,
    description: 'longest wait between attempts of a failing output (backoff doubles from 1 s, with jitter)',
  },
  maxLag: {
    type: ['string', 'integer', 'null'],
    pattern: '^\\d{1,6}[smhd]$',
    minimum: 4096,
    description:
      'retention may delete records this output has not forwarded once it is this far behind: an age ("7d") or bytes; null: never',
  },
  startAt: {
    enum: ['now', 'oldest'],
    description: 'where a new output starts: records stored from now on, or the oldest still kept',
  },
  deadLetterMaxBytes: {
    type: 'integer',
    minimum: 65_536,
    maximum: 1_099_511_627_776,
    description:
      'the most its dead letters may take on disk; beyond it the oldest are dropped (an eighth at a time) and counted in the log',
  },
} as const;

// Per-type keys. Each receiver's keys are its own fragment (config/output-keys/); a key every output has is
// defined once, among the common keys, and a fragment only narrows it (webhook and syslog `format`, a `url`
// that is required).
// `format` values are checked here too, so a typo in it is a configuration error, not a runtime surprise.

/** `group` of the alert outputs (webhook, email): the defaults of its keys beside `by` and `window`. */
export const GROUP_DEFAULTS = { maxGroups: 1000, samples: 5 } as const;

/**
 * The fields of a stored record (records/stored-record.ts, docs/records.md) a group's `by` may name: a name no
 * record has (a typo, `src_addr`) would put every record in one group of nulls, so the configuration refuses it.
 */
export const GROUPABLE_FIELDS = [
  'id',
  'received_at',
  'sensor',
  'endpoint',
  'format',
  'criticality',
  'severity',
  'criticality_source',
  'src_ip',
  'dst_ip',
  'src_port',
  'dst_port',
  'protocol',
  'threat',
  'threat_id',
  'detected_at',
  'src_country',
  'src_asn',
  'src_as_org',
  'dst_country',
  'dst_asn',
  'dst_as_org',
  'remote_addr',
  'repaired',
  'truncated',
  'other',
  'dedupe_key',
] as const;

/** The output types whose messages people read, and so may be grouped (the SIEM outputs never are). */
export const GROUPED_TYPES: readonly OutputType[] = ['webhook', 'email'];

const GROUP_KEY = {
  group: {
    type: ['object', 'null'],
    additionalProperties: false,
    required: ['by', 'window'],
    default: null,
    description: `alerts grouped: {by [record fields], window ("10m"), maxGroups ${GROUP_DEFAULTS.maxGroups}, samples ${GROUP_DEFAULTS.samples}}: a group's first record at once, the rest of each window one summary; null: every record`,
    properties: {
      by: {
        type: 'array',
        minItems: 1,
        maxItems: 8,
        items: { enum: GROUPABLE_FIELDS },
      },
      // At least one unit: a window of 0 would be a second's, its summaries saying "in 0 min".
      window: { type: 'string', pattern: '^[1-9]\\d{0,4}[smh]$' },
      maxGroups: { type: 'integer', minimum: 1, maximum: 10_000 },
      samples: { type: 'integer', minimum: 0, maximum: 50 },
    },
  },
} as const;

const WEBHOOK_KEYS = {
  url: { type: 'string', pattern: '^https?://', description: 'required: where each batch is POSTed' },
  format: {
    enum: ['json', 'slack', null],
    description: 'json (default): {"records": [...]}; slack: {"text": "..."} for Slack, Mattermost, Teams',
  },
  slackMaxRecords: {
    type: 'integer',
    minimum: 0,
    maximum: 100,
    default: 10,
    description: 'format slack: records quoted in the message (the rest are counted)',
  },
  ...GROUP_KEY,
} as const;

export const OUTPUT_TYPE_KEYS: Record<OutputType, Record<string, unknown>> = {
  webhook: WEBHOOK_KEYS,
  syslog: SYSLOG_KEYS,
  splunk_hec: SPLUNK_HEC_KEYS,
  elasticsearch: ELASTICSEARCH_KEYS,
  email: { ...EMAIL_KEYS, ...GROUP_KEY },
};

/** Keys an output of the type must have (besides `type`). */
const OUTPUT_TYPE_REQUIRED: Record<OutputType, string[]> = {
  webhook: ['url'],
  syslog: SYSLOG_REQUIRED,
  splunk_hec: SPLUNK_HEC_REQUIRED,
  elasticsearch: ELASTICSEARCH_REQUIRED,
  email: EMAIL_REQUIRED,
};

/** Every key an output of `type` takes (common first), for the nearest-key hint. */
export function outputKeysFor(type: string): string[] {
  const own = OUTPUT_TYPE_KEYS[type as OutputType] ?? {};
  return [...new Set([...Object.keys(COMMON_KEYS), ...Object.keys(own)])];
}

/** Rows of the output-keys table (docs/configuration.md): key, default, meaning; common keys, then per type. */
export function outputKeyRows(): { key: string; type: string; default: unknown; description: string }[] {
  const rows: { key: string; type: string; default: unknown; description: string }[] = [];
  const defaults = OUTPUT_DEFAULTS as Record<string, unknown>;
  for (const [key, schema] of Object.entries(COMMON_KEYS)) {
    rows.push({ key, type: '', default: defaults[key] ?? null, description: schema.description });
  }
  for (const [type, keys] of Object.entries(OUTPUT_TYPE_KEYS)) {
    for (const [key, raw] of Object.entries(keys)) {
      const schema = raw as { default?: unknown; description?: string };
      rows.push({
        key,
        type,
        default: schema.default ?? defaults[key] ?? null,
        description: schema.description ?? '',
      });
    }
  }
  return rows;
}

/** One output: `type` chooses the fragment; every other key must belong to it or to the common keys. */
const outputSchema = {
  type: 'object',
  required: ['type'],
  properties: { type: COMMON_KEYS.type },
  allOf: Object.entries(OUTPUT_TYPE_KEYS).map(([type, keys]) => ({
    if: { properties: { type: { const: type } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, never awaited.
    then: {
      properties: { ...COMMON_KEYS, ...keys },
      required: OUTPUT_TYPE_REQUIRED[type as OutputType],
      additionalProperties: false,
    },
  })),
};

export const outputsSchema = {
  type: 'object',
  default: {},
  propertyNames: { pattern: OUTPUT_NAME_PATTERN },
  additionalProperties: outputSchema,
  description:
    'where records are forwarded: NAME ([A-Za-z0-9_-]{1,64}) to an output {type, url, filter, batch, ...}; see docs/operations.md "Outputs"',
} as const;

/** Batch defaults that differ by type: an email output mails a digest, so it takes a flood in one batch. */
const TYPE_BATCH_DEFAULTS: Partial<Record<OutputType, Partial<OutputConfig['batch']>>> = {
  email: EMAIL_BATCHING,
};

/**
 * The output with every default filled in, the common ones and its type's (ajv does not apply defaults inside
 * if/then); the batch keys the operator set win over the type's batch defaults.
 */
export function applyOutputDefaults(raw: Record<string, unknown>): OutputConfig {
  const type = raw.type as OutputType;
  const filter = (raw.filter ?? {}) as Partial<OutputConfig['filter']>;
  const batch = (raw.batch ?? {}) as Partial<OutputConfig['batch']>;
  const typeDefaults: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(OUTPUT_TYPE_KEYS[type] ?? {})) {
    const value = (schema as { default?: unknown }).default;
    if (value !== undefined) typeDefaults[key] = value;
  }
  return {
    ...OUTPUT_DEFAULTS,
    ...typeDefaults,
    ...raw,
    filter: { ...OUTPUT_DEFAULTS.filter, ...filter },
    batch: { ...OUTPUT_DEFAULTS.batch, ...TYPE_BATCH_DEFAULTS[type], ...batch },
  } as OutputConfig;
}

const LAG_UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `maxLag` as a bound: an age in ms ("7d") or a size in bytes (an integer); null: unbounded. */
export function parseMaxLag(value: string | number | null): { ms: number } | { bytes: number } | null {
  if (value === null) return null;
  if (typeof value === 'number') return { bytes: value };
  const m = /^(\d+)([smhd])$/.exec(value);
  return m ? { ms: Number(m[1]) * (LAG_UNIT_MS[m[2] as string] as number) } : null;
}
