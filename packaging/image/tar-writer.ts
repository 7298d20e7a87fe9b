// A deterministic tar writer (POSIX ustar, a pax header for a longer name): the entries in the order given, numeric
// owners, no user or group names, one time stamp for all. Enough for an image layer and an OCI layout archive.

export interface TarEntry {
  /** Relative, no leading `/` or `./`; a directory's without its trailing slash. */
  path: string;
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  uid: number;
  gid: number;
  /** A file's content. */
  data?: Buffer;
  /** A symlink's target. */
  target?: string;
}

const BLOCK = 512;
const encoder = new TextEncoder();

/** The tar stream of `entries` (each header, its data padded to 512 bytes, then two zero blocks) as chunks. */
export function tarChunks(entries: readonly TarEntry[], mtime: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.type === 'directory' ? `${entry.path}/` : entry.path;
    const data = entry.type === 'file' ? (entry.data ?? Buffer.alloc(0)) : Buffer.alloc(0);
    const target = entry.target ?? '';
    const split = splitName(name);
    const pax: string[] = [];
    if (!split) pax.push(paxRecord('path', name));
    if (Buffer.byteLength(target) > 100) pax.push(paxRecord('linkpath', target));
    if (pax.length > 0) {
      const body = Buffer.from(pax.join(''));
      chunks.push(
        header({
          name: 'PaxHeader',
          prefix: '',
          type: 'x',
          mode: 0o644,
          uid: 0,
          gid: 0,
          size: body.length,
          mtime,
        }),
        ...padded(body),
      );
    }
    const fallback = split ?? { prefix: '', name: name.slice(-100) };
    chunks.push(
      header({
        ...fallback,
        type: entry.type === 'file' ? '0' : entry.type === 'directory' ? '5' : '2',
        mode: entry.mode,
        uid: entry.uid,
        gid: entry.gid,
        size: data.length,
        mtime,
        linkname: target.length <= 100 ? target : target.slice(0, 100),
      }),
      ...padded(data),
    );
  }
  chunks.push(Buffer.alloc(2 * BLOCK));
  return chunks;
}

/** ustar's name (100 bytes) and prefix (155 bytes) split at a slash, or null when it does not fit. */
function splitName(name: string): { prefix: string; name: string } | null {
  if (Buffer.byteLength(name) <= 100) return { prefix: '', name };
  const trimmed = name.endsWith('/') ? name.slice(0, -1) : name;
  for (let i = trimmed.indexOf('/'); i !== -1; i = trimmed.indexOf('/', i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest !== '')
      return { prefix, name: rest };
  }
  return null;
}

/** `"<length> key=value\n"`, where the length counts itself. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest) + 1;
  while (String(length).length + Buffer.byteLength(rest) !== length) length += 1;
  return `${length}${rest}`;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? (data.length === 0 ? [] : [data]) : [data, Buffer.alloc(BLOCK - rest)];
}

interface Header {
  name: string;
  prefix: string;
  type: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  linkname?: string;
}

function header(h: Header): Buffer {
  const block = Buffer.alloc(BLOCK);
  const text = (value: string, offset: number, length: number) => {
    const bytes = encoder.encode(value);
    if (bytes.length > length) throw new Error(`tar: "${value}" is longer than ${length} bytes`);
    block.set(bytes, offset);
  };
  const octal = (value: number, offset: number, length: number) =>
    text(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length);
  text(h.name, 0, 100);
  octal(h.mode, 100, 8);
  octal(h.uid, 108, 8);
  octal(h.gid, 116, 8);
  octal(h.size, 124, 12);
  octal(h.mtime, 136, 12);
  block.fill(' ', 148, 156);
  text(h.type, 156, 1);
  text(h.linkname ?? '', 157, 100);
  text('ustar\0', 257, 6);
  text('00', 263, 2);
  text(h.prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  text(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8);
  return block;
}
