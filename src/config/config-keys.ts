// The configurable keys (the schema's leaves), their environment variable names and the default file: apart from
// load-config.ts so that the manual and the completion read them without loading ajv.
import { configSchema } from './schema.js';

export const DEFAULT_CONFIG_PATH = '/etc/threatcol/config.json';

export interface Leaf {
  path: string[];
  schema: {
    type?: string | readonly string[];
    enum?: readonly string[];
    default?: unknown;
    description?: string;
  };
}

/** Every configurable key (leaves of the schema), in schema order. */
export function listConfigKeys(): Leaf[] {
  const leaves: Leaf[] = [];
  const walk = (props: Record<string, unknown>, prefix: string[]) => {
    for (const [name, raw] of Object.entries(props)) {
      if (name === '$schema') continue;
      const schema = raw as Leaf['schema'] & { properties?: Record<string, unknown> };
      if (schema.type === 'object' && schema.properties) walk(schema.properties, [...prefix, name]);
      else leaves.push({ path: [...prefix, name], schema });
    }
  };
  walk(configSchema.properties, []);
  return leaves;
}

/** `server.maxBodyBytes` -> `THREATCOL_SERVER_MAX_BODY_BYTES`. */
export function envNameFor(path: readonly string[]): string {
  return `THREATCOL_${path.map((p) => p.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()).join('_')}`;
}
