// Writes src/generated/: the code rendered from other code (the configuration's compiled validator, the
// completion scripts, the help outline), which the build (packaging/build-dist.mjs) runs before compiling, so
// that nothing generated is committed or edited by hand. Run as `node --import tsx packaging/generate/write-generated.ts`.
//
// A file is replaced by rename, and only when its text changed: a CLI or test loading one meanwhile sees the
// old text or the new, and an unchanged tree keeps its files as they were. Files no generator writes any more
// go; the README stays. The command tree the completion scripts and the outline are rendered from loads none of
// the generated modules (program.ts imports the outline only to print the help), so a tree without them builds.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMPLETION_SCRIPTS_FILE, renderCompletionScripts } from './completion-scripts.js';
import { renderConfigValidator } from './config-validator.js';
import { HELP_OUTLINE_FILE, renderHelpOutline } from './help-outline.js';

export const GENERATED_DIR = 'src/generated';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const KEEP = new Set(['README.md']);

function writeIfChanged(path: string, text: string): void {
  let old: string | null = null;
  try {
    old = readFileSync(path, 'utf8');
  } catch {}
  if (old === text) return;
  const temp = join(ROOT, GENERATED_DIR, `.${basename(path)}.${process.pid}.tmp`);
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/** Every generated file's text, by its path from the checkout's root. */
export function renderGenerated(): Map<string, string> {
  return new Map([
    ...renderConfigValidator(),
    [COMPLETION_SCRIPTS_FILE, renderCompletionScripts()],
    [HELP_OUTLINE_FILE, renderHelpOutline()],
  ]);
}

/** The files of src/generated/ other than the README, as paths from the checkout's root. */
export function generatedFiles(): string[] {
  return readdirSync(join(ROOT, GENERATED_DIR))
    .filter((name) => !KEEP.has(name) && !name.startsWith('.'))
    .map((name) => `${GENERATED_DIR}/${name}`);
}

/** Writes the files whose text changed and deletes those no generator writes any more. */
export function writeGenerated(): void {
  mkdirSync(join(ROOT, GENERATED_DIR), { recursive: true });
  const files = renderGenerated();
  for (const [file, text] of files) writeIfChanged(join(ROOT, file), text);
  // A name starting with '.' (left out by generatedFiles) is another build's file being written.
  for (const file of generatedFiles()) if (!files.has(file)) rmSync(join(ROOT, file));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) writeGenerated();
