// The configuration keys of a `syslog` output (beside the keys every output has), for the outputs schema.
import { DEFAULT_SD_ID, SYSLOG_FACILITIES } from './syslog-message.js';

const ms = (def: number) => ({ type: 'integer', minimum: 1, maximum: 86_400_000, default: def });

/** The keys of `outputs.NAME` when `type` is `syslog`; `ca` is a path the caller reads into SyslogOptions.ca. */
export const syslogOutputSchema = {
  required: ['host'],
  properties: {
    host: { type: 'string', minLength: 1, description: 'syslog receiver host name or address' },
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
      description: 'tls: RFC 5425, the certificate verified; tcp: plain, only for a trusted network',
    },
    format: {
      enum: ['json', 'cef'],
      default: 'json',
      description: 'message body: the stored record as JSON, or an ArcSight CEF line',
    },
    facility: {
      enum: [...SYSLOG_FACILITIES],
      default: 'local0',
      description: 'syslog facility of the messages',
    },
    ca: {
      type: ['string', 'null'],
      default: null,
      description: 'PEM CA file to verify the receiver with; null: the system CAs',
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
    connectTimeoutMs: {
      ...ms(10_000),
      description: 'a connection (and TLS handshake) must be up within this',
    },
    writeTimeoutMs: { ...ms(30_000), description: 'a batch must be taken by the connection within this' },
  },
} as const;
