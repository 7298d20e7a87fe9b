// The files backend's decisions: a snapshot, `<dataDir>/decisions.json` (written atomically: temporary file,
// fsync, rename, directory fsync), and a journal of the changes since, `decisions.journal` (one checked line per
// change, fsynced per apply), both changed under the registry's kind of lock (CLI and daemon both write). The
// journal is folded into a new snapshot once it outgrows it. A process's watchers share one reader that reads
// only what was appended since, and its own writes update that state as they are made, never read back.
import {
  closeSync,
  fchmodSync,
  fstatSync,
  openSync,
  readSync,
  renameSync,
  type Stats,
  statSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Owner } from '../../data-dir/file-owner.js';
import { adoptOwner, syncDir, writeAllDurably, writeFileAtomic } from '../../data-dir/file-owner.js';
import { type FilesWatch, watchFiles } from '../../watch-files.js';
import {
  applyEntry,
  DECISION_KINDS,
  type DecisionChange,
  type DecisionsState,
  type DecisionsStore,
  emptyDecisions,
  heldEntry,
  MAP_OF,
  stillHeld,
} from '../decisions.js';
import { changeLines, headerLine, readEntries, readHeader } from './decisions-journal.js';
import { lockRegistry } from './registry-lock.js';

export const DECISIONS_FILE = 'decisions.json';
export const DECISIONS_JOURNAL = 'decisions.journal';
/** Feeds' password hashes are in it: the service user's only, as sensors.json. */
const DECISIONS_MODE = 0o600;
/**
 * The journal is folded into the snapshot once it is larger than this and than twice the snapshot: a read costs
 * at most about three snapshots, and the folds' rewriting a few bytes per change.
 */
const COMPACT_MIN_BYTES = 1_048_576;
/** Reads of a snapshot and a journal of different generations (a compaction between the two) before giving up. */
const READ_ATTEMPTS = 5;

/** What a reader has read: the state, and where in which files it stands. */
interface Tail {
  state: DecisionsState;
  /** The snapshot's stat signature when read ('' when there was none). */
  snapshot: string;
  snapshotBytes: number;
  generation: number;
  /** The journal's inode (null: none), and the bytes of it read (complete lines). */
  journalIno: number | null;
  offset: number;
  /** Whether the journal is of an older generation than the snapshot: the next change folds it first. */
  stale: boolean;
}

interface Subscriber {
  onState: (state: DecisionsState) => void;
  onError: (error: Error) => void;
}

export function createFileDecisions(options: {
  dataDir: string;
  /** The data directory's owner, creating the directory on first use (only changes need it). */
  owner: () => Owner;
  pollIntervalMs: number;
}): DecisionsStore {
  const snapshotPath = join(options.dataDir, DECISIONS_FILE);
  const journalPath = join(options.dataDir, DECISIONS_JOURNAL);
  /** The watchers' shared reader (null: nobody watches, or the last read failed). */
  let tail: Tail | null = null;
  const subscribers = new Set<Subscriber>();
  let filesWatch: FilesWatch | null = null;

  const notify = () => {
    for (const s of subscribers) if (tail) s.onState(tail.state);
  };
  /** Brings the shared reader up to date; whether anything changed. */
  const refresh = (): boolean => {
    if (tail === null) {
      tail = readAll(snapshotPath, journalPath);
      return true;
    }
    return catchUp(tail, snapshotPath, journalPath);
  };
  const check = () => {
    try {
      if (refresh()) notify();
    } catch (error) {
      // Read again whole at the next change or poll.
      tail = null;
      filesWatch?.forget();
      for (const s of subscribers) s.onError(error as Error);
    }
  };

  return {
    read: async () => readAll(snapshotPath, journalPath).state,

    async apply(changes) {
      if (changes.length === 0) return [];
      const skipped: DecisionChange[] = [];
      const owner = options.owner();
      const release = await lockRegistry(snapshotPath);
      try {
        // Under the lock nobody appends: what the reader has not read yet is read now, so the state it keeps
        // is the journal's up to its end, and this write's changes go on top of it without reading them back.
        let current: Tail | null = null;
        if (subscribers.size > 0) {
          try {
            refresh();
            current = tail;
          } catch {
            tail = null;
          }
        }
        // Without a watcher (a CLI command), read whole: whether the journal is the snapshot's is in both.
        current ??= readAll(snapshotPath, journalPath);
        if (current.journalIno === null || current.stale) {
          // A data directory of before the journal, or a new one: the journal starts on a new snapshot. So does
          // one whose fold was cut between its two renames (a crash, a thread ended at stop): its old journal
          // beside the new snapshot is skipped by every fresh read, and changes appended to it would be lost at
          // the next restart. The fold holds what that journal had (readAll).
          current = compact(current, owner);
        }
        // A change made on what its writer saw goes only while the entry is still that (read under the lock).
        let kept = changes;
        if (changes.some((change) => change.ifStill !== undefined)) {
          const { state } = current;
          kept = changes.filter((change) => {
            if (
              change.ifStill === undefined ||
              stillHeld(heldEntry(state, change.kind, change.key), change.ifStill)
            )
              return true;
            skipped.push(change);
            return false;
          });
        }
        // Nothing left to write: the watchers are still told below of what the lock's read caught up on.
        if (kept.length > 0) appendChanges(journalPath, kept);
        // `current` is the journal's state up to before this write (the shared reader's, or the one just folded),
        // so the write goes on top of it: folded below, it must hold this write too.
        for (const change of kept) applyEntry(current.state, change.kind, change.key, change.value);
        const size = statSync(journalPath).size;
        current.offset = size;
        if (size > COMPACT_MIN_BYTES && size > 2 * current.snapshotBytes) compact(current, owner);
      } finally {
        await release();
      }
      if (subscribers.size > 0 && tail !== null) notify();
      return skipped;
    },

    // One collector per data directory: the engine's lease is always its own.
    lease: async () => true,

    watch(onState, onError) {
      const subscriber: Subscriber = { onState, onError };
      try {
        // Others see a change read now as well; the new watcher gets the whole state at once.
        if (refresh()) notify();
        onState((tail as unknown as Tail).state);
      } catch (error) {
        tail = null;
        onError(error as Error);
      }
      subscribers.add(subscriber);
      filesWatch ??= watchFiles({
        paths: [snapshotPath, journalPath],
        onChange: check,
        pollIntervalMs: options.pollIntervalMs,
      });
      return {
        stop: () => {
          subscribers.delete(subscriber);
          if (subscribers.size > 0) return;
          filesWatch?.stop();
          filesWatch = null;
          tail = null;
        },
      };
    },
  };

  /**
   * Writes `from`'s state as the next generation's snapshot, then an empty journal of that generation (a
   * reader meeting the new snapshot beside the old journal reads the old one on top: the snapshot holds it, and
   * read again its lines end where the snapshot stands).
   */
  function compact(from: Tail, owner: Owner): Tail {
    const generation = from.generation + 1;
    writeFileAtomic(snapshotPath, renderSnapshot(from.state, generation), DECISIONS_MODE, owner);
    replaceJournal(
      journalPath,
      `${snapshotPath}.tmp-${process.pid}-j${Math.random().toString(36).slice(2)}`,
      generation,
      owner,
    );
    const snapshot = statSync(snapshotPath);
    const journal = statSync(journalPath);
    from.generation = generation;
    from.snapshot = signatureOf(snapshot);
    from.snapshotBytes = snapshot.size;
    from.journalIno = journal.ino;
    from.offset = journal.size;
    from.stale = false;
    return from;
  }
}

const signatureOf = (st: { ino: number; size: number; mtimeMs: number }) =>
  `${st.ino}:${st.size}:${st.mtimeMs}`;

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** A file's bytes from `from` with its stat, read off one descriptor (null: it does not exist). */
function readFrom(
  path: string,
  from = 0,
): { data: Buffer; ino: number; size: number; mtimeMs: number } | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    const st = fstatSync(fd);
    const data = Buffer.allocUnsafe(Math.max(0, st.size - from));
    let read = 0;
    while (read < data.length) {
      const n = readSync(fd, data, read, data.length - read, from + read);
      if (n === 0) break;
      read += n;
    }
    return { data: data.subarray(0, read), ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/** The snapshot's entries of the right shape, then the journal's changes on top (none when neither exists). */
function readAll(snapshotPath: string, journalPath: string): Tail {
  for (let attempt = 1; ; attempt++) {
    const state = emptyDecisions();
    const snapshot = readFrom(snapshotPath);
    let generation = 0;
    if (snapshot !== null) {
      const doc = JSON.parse(snapshot.data.toString('utf8')) as {
        generation?: unknown;
        entries?: Record<string, Record<string, unknown>>;
      };
      if (Number.isSafeInteger(doc.generation)) generation = doc.generation as number;
      for (const kind of DECISION_KINDS) {
        const entries = doc.entries?.[kind];
        if (entries === null || typeof entries !== 'object') continue;
        for (const [key, value] of Object.entries(entries)) applyEntry(state, kind, key, value);
      }
    }
    const tail: Tail = {
      state,
      snapshot: snapshot ? signatureOf(snapshot) : '',
      snapshotBytes: snapshot?.size ?? 0,
      generation,
      journalIno: null,
      offset: 0,
      stale: false,
    };
    const journal = readFrom(journalPath);
    if (journal === null) return tail;
    const header = readHeader(journal.data);
    // A journal newer than the snapshot read: a compaction came between the two reads.
    if (header !== null && header.generation > generation && attempt < READ_ATTEMPTS) continue;
    tail.journalIno = journal.ino;
    // An older journal beside the snapshot: a fold read between its two renames, or one cut there (a crash).
    // Its lines are read on top all the same: the snapshot was made from them, in order, and each sets or removes
    // one entry, so read again they end where the snapshot stands; and what a collector appended to it after such
    // a cut, before apply() folded a stale journal first, is read too instead of being lost.
    tail.stale = header !== null && header.generation < generation;
    tail.offset = readEntries(journal.data, header?.end ?? 0, (e) =>
      applyEntry(state, e.kind, e.key, e.value),
    ).end;
    return tail;
  }
}

/** Reads what was appended since `tail` (or everything again, when a file was replaced); whether it changed. */
function catchUp(tail: Tail, snapshotPath: string, journalPath: string): boolean {
  const snapshot = statOrNull(snapshotPath);
  const journal = statOrNull(journalPath);
  if (
    (snapshot ? signatureOf(snapshot) : '') !== tail.snapshot ||
    (journal?.ino ?? null) !== tail.journalIno ||
    (journal !== null && journal.size < tail.offset)
  ) {
    Object.assign(tail, readAll(snapshotPath, journalPath));
    return true;
  }
  if (journal === null || journal.size === tail.offset) return false;
  const appended = readFrom(journalPath, tail.offset);
  if (appended === null || appended.ino !== tail.journalIno) {
    Object.assign(tail, readAll(snapshotPath, journalPath));
    return true;
  }
  const { end } = readEntries(appended.data, 0, (e) => applyEntry(tail.state, e.kind, e.key, e.value));
  tail.offset += end;
  return end > 0;
}

/**
 * Appends the changes' lines and fsyncs them. A last line without its newline is one a writer killed or a
 * power cut left torn: it gets its newline first, so it stays a bad line of its own and the new ones read.
 */
function appendChanges(path: string, changes: readonly DecisionChange[]): void {
  const fd = openSync(path, 'r+');
  try {
    const size = fstatSync(fd).size;
    let text = changeLines(changes);
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) text = `\n${text}`;
    }
    writeAllDurably(fd, text, size);
  } finally {
    closeSync(fd);
  }
}

/**
 * A new journal holding only its header, renamed over the old one. Its temporary file (`tmp`) is named as
 * writeFileAtomic names the snapshot's, so the next lock holder removes it if this process dies first.
 */
function replaceJournal(path: string, tmp: string, generation: number, owner: Owner): void {
  const fd = openSync(tmp, 'wx', DECISIONS_MODE);
  try {
    fchmodSync(fd, DECISIONS_MODE);
    writeAllDurably(fd, headerLine(generation));
  } finally {
    closeSync(fd);
  }
  adoptOwner(tmp, owner);
  renameSync(tmp, path);
  syncDir(dirname(path));
}

/**
 * `{"version":1,"generation":N,"entries":{KIND:{KEY:VALUE,...},...}}` and a newline, written out entry by entry
 * from the state's maps: not an object of every entry made first (an attack's thousands of blocks are folded
 * into it at every compaction), nor one per entry.
 */
function renderSnapshot(state: DecisionsState, generation: number): string {
  const kinds: string[] = [];
  for (const kind of DECISION_KINDS) {
    const entries: string[] = [];
    for (const [key, value] of state[MAP_OF[kind]] as Map<string, unknown>)
      if (value !== undefined) entries.push(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
    kinds.push(`${JSON.stringify(kind)}:{${entries.join(',')}}`);
  }
  return `{"version":1,"generation":${JSON.stringify(generation)},"entries":{${kinds.join(',')}}}\n`;
}
