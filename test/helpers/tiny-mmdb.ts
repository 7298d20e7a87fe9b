// Writes a small MaxMind DB file (IPv4 tree, 24-bit records) mapping a few networks to a few fields: a database a
// test can make, replace and date, read by the same reader as GeoLite2 or DB-IP files.

type Value = string | number | Record<string, unknown>;

/** `networks`: "a.b.c.d/len" to the record's fields; `builtAt`: the metadata's build_epoch (s; null: none). */
export function tinyMmdb(
  networks: Record<string, Record<string, Value>>,
  options: { type?: string; builtAt?: number | null } = {},
): Buffer {
  interface Node {
    kids: [Node | number | null, Node | number | null];
    id: number;
  }
  const data: Buffer[] = [];
  let dataLength = 0;
  const root: Node = { kids: [null, null], id: 0 };
  for (const [cidr, fields] of Object.entries(networks)) {
    const [addr, len] = cidr.split('/') as [string, string];
    const bits = addr.split('.').reduce((n, p) => n * 256 + Number(p), 0);
    const offset = dataLength;
    const encoded = encode(fields);
    data.push(encoded);
    dataLength += encoded.length;
    let node = root;
    const prefix = Number(len);
    for (let i = 0; i < prefix; i++) {
      const bit = (Math.floor(bits / 2 ** (31 - i)) % 2) as 0 | 1;
      if (i === prefix - 1) node.kids[bit] = -1 - offset;
      else {
        let next = node.kids[bit];
        if (next === null || typeof next === 'number') {
          next = { kids: [null, null], id: 0 };
          node.kids[bit] = next;
        }
        node = next;
      }
    }
  }
  const nodes: Node[] = [];
  const number = (n: Node) => {
    n.id = nodes.length;
    nodes.push(n);
    for (const k of n.kids) if (k !== null && typeof k === 'object') number(k);
  };
  number(root);
  const count = nodes.length;
  const tree = Buffer.alloc(count * 6);
  nodes.forEach((n, i) => {
    n.kids.forEach((k, side) => {
      // A node's number, "no data" (count), or data at offset o (count + 16 + o).
      const v = k === null ? count : typeof k === 'number' ? count + 16 + (-1 - k) : k.id;
      tree.writeUIntBE(v, i * 6 + side * 3, 3);
    });
  });
  const metadata = encode({
    node_count: count,
    record_size: 24,
    ip_version: 4,
    database_type: options.type ?? 'Tiny-Test',
    languages: [],
    description: {},
    binary_format_major_version: 2,
    binary_format_minor_version: 0,
    ...(options.builtAt === null ? {} : { build_epoch: options.builtAt ?? Math.floor(Date.now() / 1000) }),
  });
  return Buffer.concat([
    tree,
    Buffer.alloc(16),
    ...data,
    Buffer.from([0xab, 0xcd, 0xef]),
    Buffer.from('MaxMind.com'),
    metadata,
  ]);
}

/** MMDB data encoding: maps, strings (up to 284 bytes), unsigned 32-bit integers, empty arrays. */
function encode(value: unknown): Buffer {
  if (typeof value === 'string') {
    const b = Buffer.from(value);
    if (b.length > 284) throw new Error('short strings only');
    const head = b.length < 29 ? [(2 << 5) | b.length] : [(2 << 5) | 29, b.length - 29];
    return Buffer.concat([Buffer.from(head), b]);
  }
  if (typeof value === 'number') {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(value);
    return Buffer.concat([Buffer.from([(6 << 5) | 4]), b]);
  }
  if (Array.isArray(value)) return Buffer.from([0, 11 - 7]);
  const entries = Object.entries(value as Record<string, unknown>);
  return Buffer.concat([
    Buffer.from([(7 << 5) | entries.length]),
    ...entries.flatMap(([k, v]) => [encode(k), encode(v)]),
  ]);
}
