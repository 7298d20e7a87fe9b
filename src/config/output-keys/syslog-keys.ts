// The keys of a `syslog` output beyond the ones every output has (config/outputs-schema.ts): `ca`, `format`
// and `timeoutMs` are the common keys (the format's values are checked here).

/** Facilities in code order: the index times 8 is the facility part of PRI. */
export const SYSLOG_FACILITIES = [
  'kern',
  'user',
  'mail',
  'daemon',
  'auth',
  'syslog',
  'lpr',
  'news',
  'uucp',
  'cron',
  'authpriv',
  'ftp',
  'ntp',
  'audit',
  'alert',
  'clock',
  'local0',
  'local1',
  'local2',
  'local3',
  'local4',
  'local5',
  'local6',
  'local7',
] as const;

/**
 * The SD-ID under which the record id travels. 32473 is the Private Enterprise Number RFC 5612 reserves for
 * documentation; a site with its own number may set another. The id cannot be the MSGID: a UUID has 36
 * characters and MSGID allows 32.
 */
export const DEFAULT_SD_ID = 'threatcol@32473';

export const SYSLOG_KEYS = {
  host: { type: 'string', minLength: 1, description: 'required: syslog receiver host name or address' },
  port: {
    type: ['integer', 'null'],
    minimum: 1,
    maximum: 65535,
    default: null,
    description: 'receiver port; null: 6514 for tls (RFC 5425), 514 for tcp',
  },
  transport: {
    enum: ['tls', 'tcp'],
    default: 'tls',
    description:
      'tls: RFC 5425, the certificate verified (against ca); tcp: plain, only for a trusted network',
  },
  format: {
    enum: ['json', 'cef', null],
    default: 'json',
    description: 'message body: the stored record as JSON (null: json), or an ArcSight CEF line',
  },
  facility: {
    enum: [...SYSLOG_FACILITIES],
    default: 'local0',
    description: 'syslog facility of the messages',
  },
  hostname: {
    type: ['string', 'null'],
    default: null,
    description: 'HOSTNAME field of the messages; null: this host name',
  },
  sdId: {
    type: 'string',
    pattern: '^[^ =\\]"]{1,32}$',
    default: DEFAULT_SD_ID,
    description: 'structured-data ID carrying the record id (NAME@PEN)',
  },
} as const;

export const SYSLOG_REQUIRED = ['host'];
