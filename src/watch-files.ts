// Noticing file changes without trusting inotify alone: fs.watch on the directories (a rename over a file ends a
// watch on the file itself) plus a poll, and a stat signature so only real changes count. One helper for the
// TLS files, the sensor registry and the record segments; its plain watch of one directory (watchDir) also serves
// a reader that watches only while it waits (the files output feed): fs.watch is called here alone.
import { statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface DirWatch {
  stop(): void;
}

/**
 * One plain fs.watch of `dir` (no poll: the caller has its own timer), `onEvent` at each event; null when it cannot
 * be watched (absent, no inotify). An error ends the watch: `onEnded` says so, and the caller may watch again.
 */
export function watchDir(
  dir: string,
  onEvent: (name: string | null) => void,
  onEnded: () => void,
): DirWatch | null {
  try {
    const watcher = watch(dir, { persistent: false }, (_event, file) => onEvent(file?.toString() ?? null));
    watcher.on('error', () => {
      watcher.close();
      onEnded();
    });
    return { stop: () => watcher.close() };
  } catch {
    return null;
  }
}

/**
 * Calls `onEvent` on every fs event in `dirs` (for the names given, or any name when the set is null) and on
 * every poll tick. A directory that cannot be watched yet (absent, no inotify) is retried at each tick.
 */
export function watchDirs(
  dirs: ReadonlyMap<string, ReadonlySet<string> | null>,
  onEvent: () => void,
  options: {
    pollIntervalMs: number;
    useFsWatch?: boolean;
    /** true: the poll keeps the process alive (a CLI that follows records does nothing else). */
    keepAlive?: boolean;
  },
): DirWatch {
  const watchers = new Map<string, DirWatch>();
  const startWatching = () => {
    if (options.useFsWatch === false) return;
    for (const [dir, names] of dirs) {
      if (watchers.has(dir)) continue;
      const watcher = watchDir(
        dir,
        (name) => {
          // `..data`-style names: atomic symlink swaps of a whole directory (Kubernetes secrets).
          if (names === null || name === null || names.has(name) || name.startsWith('..')) onEvent();
        },
        () => watchers.delete(dir),
      );
      // null: polling covers it; watching is tried again at the next tick.
      if (watcher) watchers.set(dir, watcher);
    }
  };
  startWatching();
  const timer = setInterval(() => {
    startWatching();
    onEvent();
  }, options.pollIntervalMs);
  if (!options.keepAlive) timer.unref();
  return {
    stop() {
      clearInterval(timer);
      for (const watcher of watchers.values()) watcher.stop();
      watchers.clear();
    },
  };
}

/** inode, size and mtime of each path (or its error code): changes when a file is rewritten or replaced. */
export function fileSignature(paths: readonly string[]): string {
  return paths
    .map((path) => {
      try {
        const st = statSync(path);
        return `${st.ino}:${st.size}:${st.mtimeMs}`;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code ?? 'error';
      }
    })
    .join('|');
}

export interface FilesWatch {
  /** Compares now (and calls onChange if the files changed). */
  check(): void;
  /** Takes the files as they are now as seen, without calling onChange. */
  accept(): void;
  /** Forgets what was seen: the next check calls onChange whatever the files are. */
  forget(): void;
  stop(): void;
}

export interface WatchFilesOptions {
  paths: readonly string[];
  onChange: () => void;
  pollIntervalMs: number;
  /** Wait until the files have been quiet this long (writers replace two files one after the other). */
  debounceMs?: number;
  /** true: call onChange once at the start with the files as they are. */
  initial?: boolean;
  /** false: poll only, as where inotify is unavailable (tests exercise the fallback with it). */
  useFsWatch?: boolean;
}

/** Calls `onChange` when the stat signature of `paths` changes, noticed by fs.watch or by the poll. */
export function watchFiles(options: WatchFilesOptions): FilesWatch {
  const debounceMs = options.debounceMs ?? 0;
  let seen = options.initial ? '' : fileSignature(options.paths);
  let timer: NodeJS.Timeout | null = null;
  const compare = () => {
    const now = fileSignature(options.paths);
    if (now === seen) return;
    seen = now;
    options.onChange();
  };
  const changed = () => {
    if (debounceMs === 0) return compare();
    if (fileSignature(options.paths) === seen) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      compare();
    }, debounceMs);
    timer.unref();
  };
  const dirs = new Map<string, Set<string>>();
  for (const path of options.paths) {
    const set = dirs.get(dirname(path)) ?? new Set<string>();
    set.add(basename(path));
    dirs.set(dirname(path), set);
  }
  if (options.initial) compare();
  const watch = watchDirs(dirs, changed, {
    pollIntervalMs: options.pollIntervalMs,
    ...(options.useFsWatch === undefined ? {} : { useFsWatch: options.useFsWatch }),
  });
  return {
    check: compare,
    accept() {
      seen = fileSignature(options.paths);
    },
    forget() {
      seen = '';
    },
    stop() {
      watch.stop();
      if (timer) clearTimeout(timer);
    },
  };
}
