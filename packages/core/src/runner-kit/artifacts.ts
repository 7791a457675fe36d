import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';

/** Which run an artifact belongs to. */
export interface ArtifactKey {
  accountId: string;
  checkId: string;
  runId: string;
}

export interface ArtifactFile {
  name: string;
  contentType: string;
  data: Uint8Array;
}

/** Where screenshots go. A host may keep them anywhere (a bucket, its database); a run records the reference. */
export interface ArtifactStore {
  /** Stores the file and answers the reference that `read` takes. */
  save(key: ArtifactKey, file: ArtifactFile): Promise<string>;
  read(ref: string): Promise<Uint8Array>;
}

/** What a run's result records of an artifact. */
export interface ArtifactRecord {
  name: string;
  contentType: string;
  bytes: number;
  ref: string;
}

const segment = (s: string) => {
  const safe = s.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || safe === '.' || safe === '..' ? '_' : safe;
};

/** Keeps artifacts as files under `dir`: `<account>/<check>/<run>/<name>`. */
export function directoryArtifacts(dir: string): ArtifactStore {
  const root = resolve(dir);
  const pathOf = (ref: string) => {
    const full = resolve(root, ref);
    if (!full.startsWith(root + sep)) throw new Error(`Not an artifact reference: ${ref}`);
    return full;
  };
  return {
    async save(key, file) {
      const ref = [key.accountId, key.checkId, key.runId, file.name].map(segment).join('/');
      const full = pathOf(ref);
      await mkdir(dirname(full), { recursive: true });
      await writeFile(full, file.data);
      return ref;
    },
    async read(ref) {
      return readFile(pathOf(ref));
    },
  };
}

const MB = 1024 * 1024;
const MAX_FILES = 50;

/**
 * The artifacts of one run, up to a limit of bytes in all: a file that would pass it is refused
 * with an error the result records, and the run goes on.
 */
export class RunArtifacts {
  readonly records: ArtifactRecord[] = [];
  readonly errors: string[] = [];
  private bytes = 0;
  private pending: Promise<void>[] = [];

  constructor(
    private readonly store: ArtifactStore,
    private readonly key: ArtifactKey,
    private readonly maxBytes: number,
  ) {}

  add(file: ArtifactFile): void {
    const size = file.data.byteLength;
    if (this.records.length >= MAX_FILES) {
      this.errors.push(`${file.name} was not stored: a run keeps at most ${MAX_FILES} artifacts`);
      return;
    }
    const name = `${String(this.records.length + this.errors.length + 1).padStart(2, '0')}-${file.name}`;
    if (this.bytes + size > this.maxBytes) {
      this.errors.push(
        `${file.name} (${(size / MB).toFixed(1)} MB) was not stored: the run's artifacts would pass the limit of ${(this.maxBytes / MB).toFixed(0)} MB`,
      );
      return;
    }
    this.bytes += size;
    const record: ArtifactRecord = { name, contentType: file.contentType, bytes: size, ref: '' };
    this.records.push(record);
    this.pending.push(this.store.save(this.key, { ...file, name }).then(
      (ref) => {
        record.ref = ref;
      },
      (err: unknown) => {
        this.records.splice(this.records.indexOf(record), 1);
        this.errors.push(`${file.name} was not stored: ${err instanceof Error ? err.message : String(err)}`);
      },
    ));
  }

  /** Waits for every save to end. */
  async settle(): Promise<void> {
    await Promise.all(this.pending);
  }
}
