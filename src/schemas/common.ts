// Building blocks shared by the record schemas: bounded text, addresses, ports and extra fields.

export const TEXT_MAX = 1024;
export const LONG_TEXT_MAX = 4096;
export const MAX_EXTRA_FIELDS = 64;
/** Field names are bounded too: a 4 MB key name would otherwise be stored whole (security finding 3). */
export const MAX_FIELD_NAME = 128;

export const text = { type: 'string', maxLength: TEXT_MAX } as const;
export const nonEmptyText = { type: 'string', minLength: 1, maxLength: TEXT_MAX } as const;
export const ip = { type: 'string', maxLength: 64, format: 'ip' } as const;

/** 0-65535 as a JSON integer or as a string of digits (firewall templates often quote every variable). */
export const port = {
  type: ['integer', 'string'],
  minimum: 0,
  maximum: 65535,
  pattern: '^(0|[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])$',
} as const;

/** Unknown fields are kept, but only as scalars, at most 64 of them, names at most 128, strings at most 1 KiB. */
export function extraFields(known: number) {
  return {
    maxProperties: known + MAX_EXTRA_FIELDS,
    propertyNames: { maxLength: MAX_FIELD_NAME },
    additionalProperties: { type: ['string', 'number', 'boolean', 'null'], maxLength: TEXT_MAX },
  } as const;
}

/** Converts a validated port or level (integer, or digit string) to a number. */
export function toInteger(value: number | string): number {
  return typeof value === 'number' ? value : Number(value);
}
