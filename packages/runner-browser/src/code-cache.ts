import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The V8 code cache of the script worker, shared by a pool's script processes: the first process
 * to connect makes it before it is given a script, and later ones read it. It lives in a folder
 * of the host's own (mkdtemp makes it private), since compiled code from anywhere else would run
 * in every script's process.
 */
export class CodeCache {
  private dir: Promise<string> | null = null;
  private stored = false;

  /** The file script processes read (it may not exist yet) and whether the next process should make it. */
  async next(): Promise<{ file: string; make: boolean }> {
    this.dir ??= mkdtemp(join(tmpdir(), 'vigil-code-cache-'));
    return { file: join(await this.dir, 'worker.bin'), make: !this.stored };
  }

  /** Keeps what a process made; written beside the file and renamed, so that no process reads half of it. */
  async store(data: Uint8Array): Promise<void> {
    if (this.stored || !this.dir) return;
    this.stored = true;
    const dir = await this.dir;
    const part = join(dir, `worker.${process.pid}.${Date.now()}.part`);
    try {
      await writeFile(part, data);
      await rename(part, join(dir, 'worker.bin'));
    } catch {
      this.stored = false;
      await rm(part, { force: true }).catch(() => {});
    }
  }

  /** V8 refused the cache (another Node binary, other flags): the next process makes a new one. */
  invalidate(): void {
    this.stored = false;
  }

  async dispose(): Promise<void> {
    const dir = this.dir;
    this.dir = null;
    this.stored = false;
    if (dir) await rm(await dir, { recursive: true, force: true }).catch(() => {});
  }
}
