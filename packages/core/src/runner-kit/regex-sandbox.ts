import vm from 'node:vm';

export type RegexExtraction = { ok: true; value: string | null } | { ok: false; problem: string };

const EXTRACT = `(function (pattern, text) {
  const m = new RegExp(pattern).exec(text);
  return m === null ? null : m[1] !== undefined ? m[1] : m[0];
})`;

/**
 * Runs a check's regex with a time limit. The regex comes from a check and the text from a
 * remote server, and this is the host application's process: a pattern that backtracks for
 * minutes (`(a+)+$`) must cost one failed assertion, not a frozen event loop.
 */
export class RegexSandbox {
  private readonly context = vm.createContext({ extract: null as unknown, pattern: '', text: '' });
  private readonly call = new vm.Script('extract(pattern, text)');

  constructor(private readonly timeoutMs: number) {
    this.context.extract = new vm.Script(EXTRACT).runInContext(this.context);
  }

  /** The first capture group of the first match, or the whole match; null when nothing matched. */
  extract(pattern: string, text: string): RegexExtraction {
    this.context.pattern = pattern;
    this.context.text = text;
    try {
      const value = this.call.runInContext(this.context, { timeout: this.timeoutMs }) as string | null;
      return { ok: true, value };
    } catch (err) {
      const e = err as { code?: string; name?: string; message?: string };
      if (e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        return { ok: false, problem: `regex /${pattern}/ ran longer than ${this.timeoutMs} ms on the response; simplify it` };
      }
      return { ok: false, problem: `regex /${pattern}/ cannot be used: ${e.message ?? String(err)}` };
    } finally {
      this.context.text = '';
    }
  }
}
