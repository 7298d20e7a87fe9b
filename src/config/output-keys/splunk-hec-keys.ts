// The keys of a `splunk_hec` output beyond the ones every output has (config/outputs-schema.ts): the HEC URL is
// `url`, the token `tokenFile`/`tokenEnv`, the CA `ca`, the waits `timeoutMs`.

const ms = (def: number) => ({ type: 'integer', minimum: 1, maximum: 86_400_000, default: def });

export const SPLUNK_HEC_KEYS = {
  url: {
    type: 'string',
    pattern: '^https?://',
    description: 'required: the HEC base URL (https://splunk.example:8088); the token: tokenFile or tokenEnv',
  },
  index: { type: ['string', 'null'], default: null, description: "Splunk index; null: the token's default" },
  sourcetype: {
    type: 'string',
    minLength: 1,
    default: 'threatcol:threat',
    description: 'sourcetype of the events',
  },
  source: { type: 'string', minLength: 1, default: 'threatcol', description: 'source of the events' },
  host: { type: ['string', 'null'], default: null, description: "the events' host; null: HEC's default" },
  ackPollIntervalMs: {
    ...ms(10_000),
    description: 'with indexer acknowledgement: how often to ask whether a batch is indexed',
  },
  ackTimeoutMs: {
    ...ms(300_000),
    description: 'with indexer acknowledgement: a batch not indexed within this is sent again',
  },
} as const;

export const SPLUNK_HEC_REQUIRED = ['url'];
