import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { RunArtifacts, type ArtifactRecord, type ArtifactStore, type RunJob } from '@vigil/core';
import type { ReportAttachment } from './report.js';

const MB = 1024 * 1024;
/** The most artifacts one run keeps (core's RunArtifacts refuses more); the rest are counted, not read. */
export const MAX_ARTIFACTS = 50;
/** The most artifact errors a result lists; the rest are counted in one line. */
const MAX_ARTIFACT_ERRORS = 20;

/** Why a file a test attached is not read. */
class Refused extends Error {
  constructor(
    message: string,
    /** Set when the file is past the limit: its size, when known. */
    readonly tooLarge?: number | null,
  ) {
    super(message);
  }
}

/**
 * The bytes of a file a test attached, if it is a regular file in the run's output folder, at most
 * `cap` bytes. Its real path (links resolved) must stay inside `realOutputDir`; it is opened without
 * blocking (a FIFO or a device is refused, never waited on) and read no further than the cap.
 */
export async function readAttachment(path: string, realOutputDir: string, cap: number): Promise<Buffer> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    throw new Refused('it does not exist');
  }
  const inside = relative(realOutputDir, real);
  if (inside === '' || isAbsolute(inside) || inside === '..' || inside.startsWith(`..${sep}`)) throw new Refused("it is outside the run's output folder");
  const info = await lstat(real);
  if (!info.isFile()) throw new Refused('it is not a regular file');
  if (info.nlink > 1) throw new Refused('it is a link to another file');
  if (info.size > cap) throw new Refused('it is past the limit', info.size);
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    // What was opened is what was checked (no swap between the check and the open).
    const opened = await handle.stat();
    if (!opened.isFile() || opened.ino !== info.ino || opened.dev !== info.dev) throw new Refused('it changed while it was read');
    const buffer = Buffer.alloc(Math.min(cap, opened.size) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > cap) throw new Refused('it is past the limit', null);
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

export interface StoredArtifacts {
  errors: string[];
  kept: boolean;
}

/**
 * Stores the screenshots and traces of the report (the files Playwright wrote in the run's output
 * folder, nothing else), each into its test's `artifacts`, at most `maxBytes` in all and
 * `MAX_ARTIFACTS` files. It ends when `signal` aborts, whatever the store is doing.
 */
export async function storeArtifacts(options: {
  store: ArtifactStore;
  job: RunJob;
  checkId: string;
  attachments: ReportAttachment[];
  outputDir: string;
  maxBytes: number;
  signal: AbortSignal;
}): Promise<StoredArtifacts> {
  const { job, attachments, maxBytes, signal } = options;
  const store = new RunArtifacts(options.store, { accountId: job.accountId, checkId: options.checkId, runId: job.runId }, maxBytes);
  const owned = new Map<ArtifactRecord, ArtifactRecord[]>();
  const errors: string[] = [];
  let bytes = 0;
  let left = 0;
  let realOutputDir: string;
  try {
    realOutputDir = await realpath(options.outputDir);
  } catch {
    return { errors: ['No artifact was stored: the run\'s output folder is gone'], kept: true };
  }
  for (const [i, a] of attachments.entries()) {
    if (signal.aborted || store.records.length >= MAX_ARTIFACTS) {
      left = attachments.length - i;
      break;
    }
    const ext = a.contentType === 'image/png' ? 'png' : a.contentType === 'application/zip' ? 'zip' : 'bin';
    const name = `test-${i + 1}-${a.name}.${ext}`;
    try {
      const data = await readAttachment(a.path, realOutputDir, maxBytes - bytes);
      const before = store.records.length;
      store.add({ name, contentType: a.contentType, data });
      if (store.records.length > before) {
        bytes += data.byteLength;
        owned.set(store.records[store.records.length - 1]!, a.test.artifacts);
      }
    } catch (err) {
      if (err instanceof Refused && err.tooLarge !== undefined) {
        const size = err.tooLarge === null ? '' : `(${(err.tooLarge / MB).toFixed(1)} MB) `;
        errors.push(`${name} ${size}was not stored: it is past the limit of ${(maxBytes / MB).toFixed(0)} MB`);
      } else {
        errors.push(`${name} was not stored: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  // The store's saves end with the run: an abort leaves them, it does not wait for them.
  let onAbort = () => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = () => resolve();
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  await Promise.race([store.settle(), aborted]);
  signal.removeEventListener('abort', onAbort);
  if (signal.aborted) errors.push('The run was stopped while its artifacts were stored: some may be missing');
  for (const [record, list] of owned) if (store.records.includes(record) && record.ref !== '') list.push(record);
  const all = [...errors, ...store.errors];
  if (left > 0) all.push(`${left} more attachment${left === 1 ? ' was' : 's were'} not stored: a run keeps at most ${MAX_ARTIFACTS} artifacts`);
  const shown = all.slice(0, MAX_ARTIFACT_ERRORS);
  if (all.length > shown.length) shown.push(`and ${all.length - shown.length} more errors of artifacts`);
  return { errors: shown, kept: true };
}
