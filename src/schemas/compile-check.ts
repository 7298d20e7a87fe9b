// A record schema compiled into a plain yes/no checker for the happy path: the answer ajv gives, on the keywords
// the record schemas use, with one pass over a record's keys, no error objects, and string lengths counted in
// code points only when the UTF-16 length alone cannot settle the bound. ajv's own code walks the keys twice,
// builds Object.keys for maxProperties and counts code points of every key and string (0.64 µs of a generic
// record, measured); a body that fails goes to ajv for its details. A keyword this file does not know stops the
// compile, so a schema change cannot be silently ignored; test/unit/validate-records.test.ts holds the answers
// equal to ajv's.

/** Accepts or refuses one value. */
export type Check = (value: unknown) => boolean;

/** The checks behind the schemas' `format` keywords, by name. */
export type Formats = Record<string, (text: string) => boolean>;

interface FieldSchema {
  type: string | readonly string[];
  minLength?: number;
  maxLength?: number;
  format?: string;
  minimum?: number;
  maximum?: number;
  pattern?: string;
}

interface ObjectSchema {
  type: 'object';
  required?: readonly string[];
  properties?: Record<string, FieldSchema>;
  maxProperties?: number;
  propertyNames?: { maxLength: number };
  additionalProperties?: FieldSchema;
}

const FIELD_KEYWORDS = new Set(['type', 'minLength', 'maxLength', 'format', 'minimum', 'maximum', 'pattern']);
const OBJECT_KEYWORDS = new Set([
  'type',
  'required',
  'properties',
  'maxProperties',
  'propertyNames',
  'additionalProperties',
]);

function refuseUnknown(schema: object, known: Set<string>, where: string): void {
  for (const keyword of Object.keys(schema)) {
    if (!known.has(keyword))
      throw new Error(`compileCheck: keyword "${keyword}" at ${where} is not supported`);
  }
}

/** A record schema (an object of known fields and bounded extras) as a checker. */
export function compileCheck(schema: ObjectSchema, formats: Formats): Check {
  refuseUnknown(schema, OBJECT_KEYWORDS, 'the top');
  if (schema.type !== 'object') throw new Error('compileCheck: a record schema describes an object');
  if (schema.propertyNames) refuseUnknown(schema.propertyNames, new Set(['maxLength']), 'propertyNames');
  const fields = new Map<string, { check: Check; required: boolean }>();
  const required = new Set(schema.required ?? []);
  for (const [name, field] of Object.entries(schema.properties ?? {})) {
    fields.set(name, { check: compileField(field, formats, name), required: required.has(name) });
  }
  for (const name of required) {
    if (!fields.has(name)) throw new Error(`compileCheck: required "${name}" has no schema`);
  }
  const requiredCount = required.size;
  const maxKeys = schema.maxProperties ?? Number.POSITIVE_INFINITY;
  const maxName = schema.propertyNames?.maxLength ?? Number.POSITIVE_INFINITY;
  const extra =
    schema.additionalProperties === undefined
      ? null
      : compileField(schema.additionalProperties, formats, 'additionalProperties');
  return (data) => {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return false;
    const record = data as Record<string, unknown>;
    let keys = 0;
    let requiredSeen = 0;
    // for-in: a JSON.parse object has only own enumerable keys, as ajv's Object.keys and for-in see them.
    for (const key in record) {
      keys++;
      if (key.length > maxName && codePoints(key) > maxName) return false;
      const field = fields.get(key);
      const value = record[key];
      if (field !== undefined) {
        // ajv treats a field whose value is undefined as absent (JSON never makes one).
        if (value === undefined) continue;
        if (!field.check(value)) return false;
        if (field.required) requiredSeen++;
      } else if (extra !== null && !extra(value)) {
        return false;
      }
    }
    return keys <= maxKeys && requiredSeen === requiredCount;
  };
}

/** One field's schema (type, bounds, pattern, format) as a checker. */
function compileField(schema: FieldSchema, formats: Formats, where: string): Check {
  refuseUnknown(schema, FIELD_KEYWORDS, where);
  const types = new Set(Array.isArray(schema.type) ? schema.type : [schema.type as string]);
  for (const t of types) {
    if (!['string', 'integer', 'number', 'boolean', 'null'].includes(t)) {
      throw new Error(`compileCheck: type "${t}" at ${where} is not supported`);
    }
  }
  const string = types.has('string');
  const integer = types.has('integer');
  const number = types.has('number');
  const boolean = types.has('boolean');
  const nil = types.has('null');
  const { minLength, maxLength, minimum, maximum } = schema;
  // ajv compiles patterns with the unicode flag.
  const pattern = schema.pattern === undefined ? null : new RegExp(schema.pattern, 'u');
  let format: ((text: string) => boolean) | null = null;
  if (schema.format !== undefined) {
    format = formats[schema.format] ?? null;
    if (format === null) throw new Error(`compileCheck: format "${schema.format}" at ${where} is unknown`);
  }
  return (value) => {
    if (typeof value === 'string') {
      if (!string) return false;
      const n = value.length;
      // Code points never outnumber UTF-16 units, and are at least half of them.
      if (maxLength !== undefined && n > maxLength && codePoints(value) > maxLength) return false;
      if (minLength !== undefined && n < 2 * minLength && codePoints(value) < minLength) return false;
      if (pattern !== null && !pattern.test(value)) return false;
      return format === null || format(value);
    }
    if (typeof value === 'number') {
      // ajv's integer: a number with no fraction (Infinity counts, NaN does not).
      if (!number && !(integer && !(value % 1) && !Number.isNaN(value))) return false;
      if (maximum !== undefined && (value > maximum || Number.isNaN(value))) return false;
      return minimum === undefined || !(value < minimum || Number.isNaN(value));
    }
    if (typeof value === 'boolean') return boolean;
    return value === null && nil;
  };
}

/** The length of `text` in code points, a surrogate pair counting once (as ajv's ucs2length counts). */
export function codePoints(text: string): number {
  const n = text.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    count++;
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) i++;
  }
  return count;
}
