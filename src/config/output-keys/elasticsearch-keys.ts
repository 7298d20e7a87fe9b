// The keys of an `elasticsearch` output beyond the ones every output has (config/outputs-schema.ts): the URL is
// `url`, the basic-auth password `passwordFile`/`passwordEnv`, an API key `tokenFile`/`tokenEnv`, the CA `ca`.

export const ELASTICSEARCH_KEYS = {
  url: {
    type: 'string',
    pattern: '^https?://',
    description: 'required: Elasticsearch or OpenSearch base URL; an API key: tokenFile or tokenEnv',
  },
  index: {
    type: 'string',
    minLength: 1,
    default: 'threatcol',
    description: 'index, alias or data stream the records are created in',
  },
  username: {
    type: ['string', 'null'],
    default: null,
    description: 'basic authentication user (with passwordFile or passwordEnv)',
  },
  timestampField: {
    type: ['string', 'null'],
    minLength: 1,
    default: '@timestamp',
    description: "field set to the record's received_at (data streams need @timestamp); null: none",
  },
} as const;

export const ELASTICSEARCH_REQUIRED = ['url'];
