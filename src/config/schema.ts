// The configuration schema: every key, its type, bounds and default (the single source of defaults).
import { type BlocklistConfig, blocklistSchema } from './blocklist-schema.js';
import { type OutputConfig, outputsSchema } from './outputs-schema.js';

/** Resolved configuration, after defaults, file, environment and flags are merged. */
export interface Config {
  dataDir: string | null;
  server: {
    host: string;
    port: number;
    maxConnections: number;
    maxConnectionsPerAddress: number;
    handshakeTimeoutMs: number;
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    bodyStallTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxBodyBytes: number;
    maxRecordBytes: number;
    maxRecordsPerRequest: number;
    maxInflightBodyBytes: number;
    workers: number | 'auto';
  };
  tls: {
    cert: string | null;
    key: string | null;
    minVersion: 'TLSv1.2' | 'TLSv1.3';
    maxVersion: 'TLSv1.2' | 'TLSv1.3';
    selfSignedKeyType: 'ecdsa' | 'rsa';
    pollIntervalMs: number;
    ticketKeyRotationHours: number;
  };
  store: {
    segmentMaxBytes: number;
    queueMaxRecords: number;
    queueMaxBytes: number;
    statsIntervalMs: number;
    retention: {
      days: number | null;
      maxBytes: number | null;
    };
    minFreeBytes: number;
    backend: 'files' | 'nats';
  };
  nats: {
    servers: string[];
    user: string | null;
    password: string | null;
    token: string | null;
    credentialsFile: string | null;
    tls: {
      ca: string | null;
      required: boolean | null;
    };
    stream: string;
    registryBucket: string;
    statsBucket: string;
    outputsBucket: string;
    replicas: number;
    publishTimeoutMs: number;
  };
  dedupe: {
    windowSeconds: number;
  };
  rateLimit: {
    recordsPerSecond: number;
    burst: number;
    bytesPerSecond: number;
  };
  firewall: {
    defaultTimezone: string;
    defaultCriticality: number;
    criticalityByCategory: Record<string, number>;
  };
  log: {
    level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    format: 'auto' | 'json' | 'pretty';
    rejectIntervalMs: number;
    summaryIntervalMs: number;
  };
  registry: {
    pollIntervalMs: number;
  };
  sensors: {
    expectEvery: string;
  };
  admin: {
    listen: string;
    token: string | null;
  };
  /** By output name; the keys are in outputs-schema.ts. */
  outputs: Record<string, OutputConfig>;
  syslog: {
    listen: string;
    tcpListen: string;
    relpListen: string;
    maxMessageBytes: number;
    oversize: 'truncate' | 'drop';
    maxUnsyncedMessages: number;
    maxHeldBytes: number;
    stallTimeoutMs: number;
    keepOther: boolean;
  };
  /** Rules, allow list and feeds' storage; the keys are in blocklist-schema.ts. */
  blocklist: BlocklistConfig;
  enrich: {
    enabled: boolean;
    countryDb: string;
    asnDb: string;
    maxAgeDays: number;
  };
}

const ms = (def: number, min = 1) => ({ type: 'integer', minimum: min, maximum: 86_400_000, default: def });
const section = (properties: Record<string, unknown>, description: string) => ({
  type: 'object',
  description,
  additionalProperties: false,
  default: {},
  properties,
});

/** JSON schema of the configuration file. `description` feeds the configuration table (docs/configuration.md). */
export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    $schema: { type: 'string' },
    dataDir: {
      type: ['string', 'null'],
      minLength: 1,
      default: null,
      description:
        'data directory; null: $STATE_DIRECTORY, else /var/lib/threatcol (root) or ~/.local/state/threatcol',
    },
    server: section(
      {
        host: { type: 'string', default: '::', description: 'listen address; "::" is dual-stack IPv6+IPv4' },
        port: {
          type: 'integer',
          minimum: 0,
          maximum: 65535,
          default: 443,
          description: 'listen port (0 = any)',
        },
        maxConnections: {
          type: 'integer',
          minimum: 1,
          default: 4096,
          description: 'open connections, in all',
        },
        maxConnectionsPerAddress: {
          type: 'integer',
          minimum: 1,
          default: 256,
          description: 'open connections from one client address',
        },
        handshakeTimeoutMs: { ...ms(10_000), description: 'TLS handshake must finish within this' },
        headersTimeoutMs: { ...ms(10_000), description: 'request headers must arrive within this' },
        requestTimeoutMs: { ...ms(20_000), description: 'the whole request must arrive within this' },
        bodyStallTimeoutMs: {
          ...ms(5000, 100),
          description: 'a request body that receives nothing for this long is ended with 408',
        },
        keepAliveTimeoutMs: {
          ...ms(60_000),
          description: 'idle keep-alive connections are closed after this',
        },
        maxBodyBytes: {
          type: 'integer',
          minimum: 1024,
          maximum: 1_073_741_824,
          default: 4_194_304,
          description: 'largest request body, after gzip decompression',
        },
        maxRecordBytes: {
          type: 'integer',
          minimum: 2048,
          maximum: 1_048_576,
          default: 16_384,
          description:
            'largest record, as its JSON text in the body; a larger one is refused (400 VALIDATION_FAILED)',
        },
        maxRecordsPerRequest: {
          type: 'integer',
          minimum: 1,
          maximum: 1000,
          default: 1000,
          description: 'largest JSON array of records in one request',
        },
        maxInflightBodyBytes: {
          type: 'integer',
          minimum: 65_536,
          default: 268_435_456,
          description:
            'request bodies held in memory by all requests together (one sensor at most a quarter; at least 4 × server.maxBodyBytes); past it, 503 at once',
        },
        workers: {
          type: ['integer', 'string'],
          minimum: 1,
          maximum: 1024,
          pattern: '^auto$',
          default: 1,
          description:
            'processes that serve requests (node:cluster); 1 = one process, "auto" = one per available CPU',
        },
      },
      'HTTPS listener',
    ),
    tls: section(
      {
        cert: {
          type: ['string', 'null'],
          default: null,
          description: 'PEM certificate chain; null: self-signed',
        },
        key: { type: ['string', 'null'], default: null, description: 'PEM private key; null: self-signed' },
        minVersion: {
          enum: ['TLSv1.2', 'TLSv1.3'],
          default: 'TLSv1.2',
          description: 'lowest TLS version accepted',
        },
        maxVersion: {
          enum: ['TLSv1.2', 'TLSv1.3'],
          default: 'TLSv1.3',
          description: 'highest TLS version offered',
        },
        selfSignedKeyType: {
          enum: ['ecdsa', 'rsa'],
          default: 'ecdsa',
          description: 'key type of the generated certificate (rsa for very old senders)',
        },
        pollIntervalMs: {
          ...ms(10_000, 50),
          description:
            'how often the daemon checks the certificate and key files for changes (besides watching them)',
        },
        ticketKeyRotationHours: {
          type: 'number',
          minimum: 0.001,
          maximum: 8760,
          default: 12,
          description:
            'TLS session-ticket keys are replaced this often (a leaked key decrypts recorded TLS 1.2 sessions that used it)',
        },
      },
      'TLS material and policy',
    ),
    store: section(
      {
        segmentMaxBytes: {
          type: 'integer',
          minimum: 4096,
          default: 67_108_864,
          description: 'a record segment is rotated past this size (and at each UTC day)',
        },
        queueMaxRecords: {
          type: 'integer',
          minimum: 1,
          default: 100_000,
          description: 'records waiting for disk; past it requests get 503 at once',
        },
        queueMaxBytes: {
          type: 'integer',
          minimum: 65_536,
          default: 268_435_456,
          description: 'size of the records waiting for disk; past it requests get 503 at once',
        },
        statsIntervalMs: { ...ms(5000, 100), description: 'how often sensor-stats.json is written' },
        retention: section(
          {
            days: {
              type: ['integer', 'null'],
              minimum: 1,
              default: 90,
              description:
                'segments whose records are all older than this many days are deleted; null: no age bound',
            },
            maxBytes: {
              type: ['integer', 'null'],
              minimum: 4096,
              default: null,
              description:
                'the oldest segments are deleted while all segments together exceed this; null: no size bound',
            },
          },
          'retention of record segments (checked at start and hourly)',
        ),
        minFreeBytes: {
          type: 'integer',
          minimum: 0,
          default: 268_435_456,
          description:
            "below this much free space on the data directory's filesystem, requests get 503 instead of being written (0 = no floor)",
        },
        backend: {
          enum: ['files', 'nats'],
          default: 'files',
          description:
            'where records, sensors and stats live: files in the data directory, or a NATS JetStream cluster shared by several collectors (nats.*)',
        },
      },
      'record store',
    ),
    nats: section(
      {
        servers: {
          type: 'array',
          items: { type: 'string', minLength: 1 },
          minItems: 1,
          default: ['nats://127.0.0.1:4222'],
          description: 'NATS servers to connect to (nats://host:port; environment: comma-separated)',
        },
        user: { type: ['string', 'null'], default: null, description: 'NATS user (with nats.password)' },
        password: { type: ['string', 'null'], default: null, description: 'NATS password' },
        token: {
          type: ['string', 'null'],
          default: null,
          description: 'NATS token (instead of user/password)',
        },
        credentialsFile: {
          type: ['string', 'null'],
          default: null,
          description: 'NATS credentials file (.creds: JWT and NKey seed)',
        },
        tls: section(
          {
            ca: {
              type: ['string', 'null'],
              default: null,
              description:
                "PEM CA bundle to verify the NATS servers with (setting it requires TLS); null: the system CAs (Node's and /etc/ssl/certs), used whenever TLS is required",
            },
            required: {
              type: ['boolean', 'null'],
              default: null,
              description:
                'refuse a NATS server that offers no TLS, before any credential is sent; null: required when credentials are set and a server is not loopback. A tls:// server URL or nats.tls.ca requires it whatever this says',
            },
          },
          'TLS to the NATS servers',
        ),
        stream: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{1,64}$',
          default: 'THREATCOL',
          description: 'JetStream stream holding the records',
        },
        registryBucket: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{1,64}$',
          default: 'threatcol_sensors',
          description: 'JetStream key-value bucket holding the sensor registry',
        },
        statsBucket: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{1,64}$',
          default: 'threatcol_stats',
          description: 'JetStream key-value bucket holding per-sensor, per-collector stats',
        },
        outputsBucket: {
          type: 'string',
          pattern: '^[A-Za-z0-9_-]{1,64}$',
          default: 'threatcol_outputs',
          description:
            "JetStream key-value bucket holding each output's last acknowledged record and skipped count",
        },
        replicas: {
          type: 'integer',
          minimum: 1,
          maximum: 5,
          default: 1,
          description: 'replicas of the stream and buckets (3 in a three-node cluster)',
        },
        publishTimeoutMs: {
          ...ms(5000, 100),
          description: 'a request whose records are not acknowledged by NATS within this gets 503',
        },
      },
      'NATS JetStream backend (store.backend "nats")',
    ),
    dedupe: section(
      {
        windowSeconds: {
          type: 'integer',
          minimum: 0,
          maximum: 86_400,
          default: 120,
          description:
            'a retried delivery within this many seconds is not stored again (/firewall by content, /generic by Idempotency-Key); 0 = off',
        },
      },
      'deduplication of retried deliveries',
    ),
    rateLimit: section(
      {
        recordsPerSecond: {
          type: 'integer',
          minimum: 0,
          default: 5000,
          description: 'records per second per sensor (0 = unlimited)',
        },
        burst: {
          type: 'integer',
          minimum: 1000,
          default: 10_000,
          description: 'records a sensor may send at once above its rate (>= maxRecordsPerRequest)',
        },
        bytesPerSecond: {
          type: 'integer',
          minimum: 0,
          default: 8_388_608,
          description:
            'request body bytes (after gzip) per second per sensor, failed requests included (0 = unlimited); bursts up to server.maxBodyBytes or one second of it, whichever is larger',
        },
      },
      'per-sensor rate limit',
    ),
    firewall: section(
      {
        defaultTimezone: {
          type: 'string',
          minLength: 1,
          default: 'UTC',
          description: 'IANA zone for time_received when the sensor has none',
        },
        defaultCriticality: {
          type: 'integer',
          minimum: 0,
          maximum: 4,
          default: 2,
          description: 'criticality when neither severity nor category gives one',
        },
        criticalityByCategory: {
          type: 'object',
          default: {},
          additionalProperties: { type: 'integer', minimum: 0, maximum: 4 },
          description: 'thr_category (lower case) to criticality, used when no severity is sent',
        },
      },
      'firewall endpoint',
    ),
    log: section(
      {
        level: {
          enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
          default: 'info',
          description: 'log level',
        },
        format: {
          enum: ['auto', 'json', 'pretty'],
          default: 'auto',
          description:
            "auto: pretty on a terminal, readable lines in the journal, JSON otherwise; json: JSON everywhere (in the journal with each line's priority)",
        },
        rejectIntervalMs: {
          ...ms(10_000, 0),
          description:
            'at most one warn line per sensor (or client address, IPv6 /64) and error code in this interval, and 50 in all',
        },
        summaryIntervalMs: {
          ...ms(60_000, 100),
          description: 'interval of the accepted/rejected summary line',
        },
      },
      'logging',
    ),
    registry: section(
      {
        pollIntervalMs: {
          ...ms(500, 50),
          description: 'how often the daemon checks the sensor registry for changes (besides watching it)',
        },
      },
      'sensor registry',
    ),
    sensors: section(
      {
        expectEvery: {
          type: 'string',
          pattern: '^(?:off|(?:[0-9]{1,9}(?:ms|s|m|h|d|w))+)$',
          default: 'off',
          description:
            'a sensor that sends nothing accepted for this long (e.g. "1h") is reported silent; "off": not watched. Per sensor: sensor set --expect-every',
        },
      },
      'silent sensors (docs/operations.md)',
    ),
    admin: section(
      {
        listen: {
          type: 'string',
          default: '127.0.0.1:9441',
          description:
            'admin listener (plain HTTP: dashboard, /metrics, /healthz, /readyz) as host:port; "" turns it off; port 0 picks a free one',
        },
        token: {
          type: ['string', 'null'],
          minLength: 16,
          default: null,
          description:
            'when set, every admin route needs "Authorization: Bearer <token>"; required for a non-loopback admin.listen',
        },
      },
      'admin listener (DESIGN 11)',
    ),
    outputs: outputsSchema,
    syslog: section(
      {
        listen: {
          type: 'string',
          default: '',
          description:
            'syslog over TLS (RFC 5425) as host:port, e.g. [::]:6514 (IPv4 and IPv6; 0.0.0.0:6514 is IPv4 only); "" (the default) turns it off; docs/syslog.md',
        },
        tcpListen: {
          type: 'string',
          default: '',
          description:
            'syslog over plain TCP as host:port (conventionally 514), only when set; a warning at start',
        },
        relpListen: {
          type: 'string',
          default: '',
          description:
            'RELP over TLS (rsyslog omrelp) as host:port, e.g. [::]:2514; each message acknowledged once durable; "" (the default) turns it off',
        },
        maxMessageBytes: {
          type: 'integer',
          minimum: 480,
          maximum: 16_777_216,
          default: 65_536,
          description:
            'longest syslog message kept; a longer one is truncated or dropped (oversize) and counted',
        },
        oversize: {
          enum: ['truncate', 'drop'],
          default: 'truncate',
          description: 'a message over maxMessageBytes: stored cut to it with "truncated": true, or dropped',
        },
        maxUnsyncedMessages: {
          type: 'integer',
          minimum: 1,
          maximum: 1_000_000,
          default: 1000,
          description: 'a connection with this many messages not yet durable is not read until they are',
        },
        maxHeldBytes: {
          type: 'integer',
          minimum: 1_048_576,
          maximum: 17_179_869_184,
          default: 67_108_864,
          description:
            'bytes of unfinished messages all syslog connections may hold together (at least twice maxMessageBytes); past it the connection whose message began longest ago is closed',
        },
        stallTimeoutMs: {
          ...ms(60_000, 100),
          description:
            'a connection holding a message unfinished this long (from its first byte), or a RELP sender leaving its answers unread this long, is closed',
        },
        keepOther: {
          type: 'boolean',
          default: false,
          description: 'store messages that are not threats too, flagged "other": true (else only counted)',
        },
      },
      'syslog input (DESIGN 14)',
    ),
    blocklist: blocklistSchema,
    enrich: section(
      {
        enabled: {
          type: 'boolean',
          default: true,
          description:
            "add the country and AS of a record's public addresses (src_country, src_asn, src_as_org, dst_*)",
        },
        countryDb: {
          type: 'string',
          default: '',
          description:
            'an MMDB country database (GeoLite2-Country, DB-IP, IPinfo Lite...), read again when replaced; "": the shipped one',
        },
        asnDb: {
          type: 'string',
          default: '',
          description:
            'an MMDB AS database (GeoLite2-ASN, DB-IP ASN...), read again when replaced; "": the shipped one',
        },
        maxAgeDays: {
          type: 'integer',
          minimum: 1,
          maximum: 3650,
          default: 180,
          description: '`threatcol check` warns about a database built longer ago than this',
        },
      },
      'country and AS of addresses (docs/operations.md)',
    ),
  },
} as const;
