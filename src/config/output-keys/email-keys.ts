// The keys of an `email` output beyond the ones every output has (config/outputs-schema.ts): the SMTP password
// is `passwordFile`/`passwordEnv`, the CA `ca`, the waits `timeoutMs`; and the batching an email output has
// unless its `batch` says otherwise.

/** An email output's batch defaults: a flood is one digest per interval, not one mail per 500 records. */
export const EMAIL_BATCHING = { maxRecords: 10_000, maxWaitMs: 10_000 } as const;

export const EMAIL_KEYS = {
  host: { type: 'string', minLength: 1, description: 'required: SMTP server (a relay or submission server)' },
  port: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 65535,
    default: null,
    description: 'SMTP port; null: 465 for tls, 587 for starttls',
  },
  security: {
    enum: ['starttls', 'tls'],
    default: 'starttls',
    description: 'starttls: upgrade required (never plain text); tls: TLS from the first byte',
  },
  username: {
    type: ['string', 'null'],
    default: null,
    description: 'SMTP AUTH user (with passwordFile or passwordEnv); null: no AUTH',
  },
  from: { type: 'string', minLength: 3, description: 'required: sender address of the alert mails' },
  to: {
    type: 'array',
    items: { type: 'string', minLength: 3 },
    minItems: 1,
    description: 'required: recipients of the alert mails',
  },
  subjectPrefix: { type: 'string', default: '[threatcol]', description: 'start of every subject' },
  minIntervalMs: {
    type: 'integer',
    minimum: 1000,
    maximum: 86_400_000,
    default: 300_000,
    description: `at most one mail per this interval; the next carries every record since (batch default: maxRecords ${EMAIL_BATCHING.maxRecords}, maxWaitMs ${EMAIL_BATCHING.maxWaitMs})`,
  },
} as const;

export const EMAIL_REQUIRED = ['host', 'from', 'to'];
