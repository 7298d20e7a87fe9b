// Renders the configuration schema as the commented example file and the configuration table of docs/configuration.md.
import { envNameFor, listConfigKeys } from './load-config.js';
import { configSchema } from './schema.js';

/** `config/threatcol.example.json`: every key with its default, nested as in the file, each with a comment. */
export function renderExampleConfig(): string {
  const header = [
    '// threatcol configuration: copy to /etc/threatcol/config.json and keep only what you change.',
    '// Every key is shown with its default. Comments (// and /* */) are allowed. Unknown keys are errors.',
    '// Precedence: command-line flags > THREATCOL_* environment variables > this file > defaults.',
  ];
  return `${[...header, ...renderObject(configSchema.properties, [], '')].join('\n')}\n`;
}

/**
 * The Debian package's conffile, `/etc/threatcol/config.json`: the same keys, defaults and comments as the example,
 * every line commented out, so the defaults stay in force (and can change with an upgrade) until the admin sets a
 * key. Uncommenting a key and the lines of the objects around it gives valid JSON: trailing commas are allowed.
 */
export function renderConffile(): string {
  const header = [
    '// threatcol configuration: the Debian package installs this file and keeps your changes on upgrades.',
    '// Every key is listed with its default, commented out (//"key"). To set one, remove the // before it and',
    '// before the lines of the objects around it (//"server": { ... //}). Comments and trailing commas are allowed; unknown keys',
    '// are errors (`threatcol check` says which). Precedence: command-line flags > THREATCOL_* environment',
    '// variables > this file > defaults. After a change: systemctl restart threatcol (TLS and sensors: reload).',
  ];
  const body = renderObject(configSchema.properties, [], '').join('\n').split('\n');
  // A setting is `//"key": value` (no space, like sshd_config's `#Port 22`), a description `// text`.
  const inner = body
    .slice(1, -1)
    .map((line) => (line.trimStart().startsWith('//') ? line : line.replace(/^( *)/, '$1//')));
  return `${[...header, '{', ...inner, '}'].join('\n')}\n`;
}

interface SchemaNode {
  type?: unknown;
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
}

function renderObject(properties: Record<string, unknown>, path: string[], indent: string): string[] {
  const names = Object.keys(properties).filter((name) => name !== '$schema');
  const lines = [`${indent}{`];
  names.forEach((name, i) => {
    const node = properties[name] as SchemaNode;
    const comma = i === names.length - 1 ? '' : ',';
    const inner = `${indent}  `;
    if (node.type === 'object' && node.properties) {
      lines.push(`${inner}// ${node.description ?? name}`);
      const body = renderObject(node.properties, [...path, name], inner);
      lines.push(
        `${inner}"${name}": ${(body[0] as string).trimStart()}`,
        ...body.slice(1, -1),
        `${body.at(-1)}${comma}`,
      );
    } else {
      const value = JSON.stringify(node.default, null, 2).replaceAll('\n', `\n${inner}`);
      lines.push(`${inner}// ${node.description ?? ''} (${envNameFor([...path, name])})`);
      lines.push(`${inner}"${name}": ${value}${comma}`);
    }
  });
  lines.push(`${indent}}`);
  return lines;
}

/** The configuration table of docs/configuration.md: key, default, environment variable, meaning. */
export function renderConfigTable(): string {
  const rows = listConfigKeys().map((leaf) => {
    const def = leaf.schema.default;
    const shown = def === null ? '`null`' : `\`${JSON.stringify(def)}\``;
    return `| \`${leaf.path.join('.')}\` | ${shown} | \`${envNameFor(leaf.path)}\` | ${leaf.schema.description ?? ''} |`;
  });
  return ['| key | default | environment variable | meaning |', '|---|---|---|---|', ...rows].join('\n');
}
