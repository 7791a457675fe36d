/**
 * Whether a request's client has hung up (its response closed before it finished). The
 * AbortSignal that work for the request listens to is made only when some work asks for it: most
 * requests never need one.
 */
export class HangUp {
  private goneAlready = false;
  private controller: AbortController | undefined;
  private listeners: Set<() => void> | undefined;

  /** True once the client has hung up before its response was sent. */
  get gone(): boolean {
    return this.goneAlready;
  }

  /** Aborted when the client hangs up (at once if it has). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.goneAlready) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Calls `listener` once when the client hangs up; the function returned stops listening. */
  onGone(listener: () => void): () => void {
    (this.listeners ??= new Set()).add(listener);
    return () => this.listeners?.delete(listener);
  }

  /** The client hung up. */
  hungUp(): void {
    if (this.goneAlready) return;
    this.goneAlready = true;
    this.controller?.abort();
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }
}
