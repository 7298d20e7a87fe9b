// Watches the certificate and key files (fs.watch on their directories, polling as the fallback) and calls back,
// debounced, when either changed: renewal tools write the two files one after the other, often by rename.
import { type FSWatcher, statSync, watch } from 'node:fs';
import { basename, dirname } from 'node:path';

export interface TlsWatchOptions {
  certPath: string;
  keyPath: string;
  /** Called once the files have been quiet for `debounceMs` after a change. */
  onChange: () => void;
  pollIntervalMs: number;
  debounceMs?: number;
  /** false: poll only, as where inotify is unavailable (tests use it to exercise the fallback). */
  useFsWatch?: boolean;
}

export interface TlsWatch {
  /** Takes the files as they are now as the loaded state (after a reload by other means, e.g. SIGHUP). */
  accept(): void;
  stop(): void;
}

export function watchTlsFiles(options: TlsWatchOptions): TlsWatch {
  const debounceMs = options.debounceMs ?? 500;
  let loaded = signature();
  let timer: NodeJS.Timeout | null = null;

  function signature(): string {
    return [options.certPath, options.keyPath]
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

  function changed(): void {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      const now = signature();
      if (now === loaded) return;
      loaded = now;
      options.onChange();
    }, debounceMs);
    timer.unref();
  }

  const poll = setInterval(() => {
    if (signature() !== loaded) changed();
  }, options.pollIntervalMs);
  poll.unref();

  // Watch the directories, not the files: a rename over the file (certbot, atomic writers) ends a file watch.
  const watchers: FSWatcher[] = [];
  const names = new Map<string, Set<string>>();
  for (const path of [options.certPath, options.keyPath]) {
    const dir = dirname(path);
    const set = names.get(dir) ?? new Set<string>();
    set.add(basename(path));
    names.set(dir, set);
  }
  for (const [dir, files] of options.useFsWatch === false ? [] : names) {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, file) => {
        if (file === null || files.has(file.toString()) || file.toString().startsWith('..')) changed();
      });
      watcher.on('error', () => watcher.close());
      watchers.push(watcher);
    } catch {
      // Polling above is the fallback where inotify is unavailable or the directory cannot be watched.
    }
  }

  return {
    accept() {
      loaded = signature();
    },
    stop() {
      clearInterval(poll);
      if (timer) clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}
