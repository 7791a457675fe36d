import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Vigil } from '../container.js';
import { isVigilError } from '../errors.js';
import { isFinalSessionStatus, type CheckSessionResponse } from '../model/check-session.js';
import { DEFAULT_PROJECT } from '../model/managed-resource.js';
import { isUuid } from '../model/primitives.js';
import { ConstructValidationError } from '../services/apply-constructs.js';
import { ApplyError, type ApplyProgress } from '../services/apply.js';
import { destroyCommand } from './destroy.js';
import { formatPlan, paint } from './format-plan.js';
import { CONFIG_OPTIONS, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type Values } from './options.js';

export { EXIT_FAILURE, EXIT_OK, EXIT_USAGE } from './options.js';

/** What a config file (`vigil.config.mjs`) gives: the constructs, and whose they are. */
export interface CliConfig {
  /** The account the resources belong to (a host may fill in its own). */
  accountId?: string;
  /** The project the constructs form (default `default`); see ApplyOptions.project. */
  project?: string;
  /** The constructs `plan` and `apply` sync; null when there is no config file. */
  constructs?: readonly unknown[] | null;
}

/**
 * Everything `runCli` touches comes through here: it does no I/O of its own, so a host decides
 * where the store is, how the config file is found and loaded, and where the output goes.
 */
export interface CliOptions {
  /**
   * The Vigil the commands work on, built on first need (`--help` needs none). `trigger` starts it
   * to run the sessions it starts; build it with `engine: { kinds: ['session'] }` so that its engine
   * claims only sessions' runs (no scheduled runs, reminders or retention), and with the host's
   * store and secret key. The caller closes it after `runCli` answers.
   */
  vigil: () => Vigil | Promise<Vigil>;
  /** Loads the config file (`--config`, or the host's default when undefined). */
  loadConfig?: (path: string | undefined) => CliConfig | Promise<CliConfig>;
  stdout: (text: string) => void;
  stderr?: (text: string) => void;
  /** ANSI colours. Default false. */
  color?: boolean;
  /** stdout is a terminal: progress redraws one line instead of printing a line now and then. */
  interactive?: boolean;
  /** The command's name in help and messages. Default `vigil`. */
  program?: string;
}

/** Raised for a wrong command line; answered with EXIT_USAGE. */
class UsageError extends Error {}

/** A command of the line: its help summary, its options, and what it does (answering the exit code). */
export interface Command {
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run(ctx: Context, values: Values): Promise<number>;
}


const TRIGGER_TIMEOUT_S = 600;
const POLL_MS = 250;
const QUIET_PROGRESS_MS = 10_000;

export class Context {
  private built: Promise<Vigil> | null = null;

  constructor(readonly o: CliOptions) {}

  get program(): string {
    return this.o.program ?? 'vigil';
  }

  out(text: string): void {
    this.o.stdout(text);
  }

  err(text: string): void {
    (this.o.stderr ?? this.o.stdout)(text);
  }

  paint(code: string, text: string): string {
    return paint(this.o.color, code, text);
  }

  vigil(): Promise<Vigil> {
    return (this.built ??= Promise.resolve(this.o.vigil()));
  }

  async config(values: Values, needConstructs: boolean): Promise<{ accountId: string; project: string; constructs: readonly unknown[] }> {
    const config: CliConfig = this.o.loadConfig ? await this.o.loadConfig(values.config as string | undefined) : {};
    if (typeof config !== 'object' || config === null) throw new Error('the config file must export an object: { account, project, constructs }');
    const accountId = (values.account as string | undefined) ?? config.accountId;
    if (!accountId) throw new Error('no account: set `account` in the config file or pass --account <id>');
    const constructs = config.constructs ?? null;
    if (needConstructs && constructs === null) {
      throw new Error('no constructs: write vigil.config.mjs (export default { constructs: [...] }) or pass --config <file>');
    }
    if (constructs !== null && !Array.isArray(constructs)) throw new Error('`constructs` in the config file must be an array');
    return { accountId, project: (values.project as string | undefined) ?? config.project ?? DEFAULT_PROJECT, constructs: constructs ?? [] };
  }

  /** Waits on the Vigil's clock (a fake clock in tests moves it). */
  async sleep(ms: number): Promise<void> {
    const vigil = await this.vigil();
    await new Promise<void>((resolve) => vigil.deps.clock.setTimer(new Date(vigil.deps.clock.now().getTime() + ms), resolve));
  }
}

function applyCommand(dryRunAlways: boolean): Command {
  return {
    summary: dryRunAlways
      ? 'Show what apply would change; writes nothing'
      : 'Create, update and (with --prune) delete resources so they match the constructs',
    options: {
      ...CONFIG_OPTIONS,
      prune: { type: 'boolean' },
      verbose: { type: 'boolean' },
      ...(dryRunAlways ? {} : { 'dry-run': { type: 'boolean' } }),
    },
    async run(ctx, values) {
      const { accountId, project, constructs } = await ctx.config(values, true);
      const vigil = await ctx.vigil();
      const json = values.json === true;
      const dryRun = dryRunAlways || values['dry-run'] === true;
      const started = new Map<string, number>();
      const onProgress = (p: ApplyProgress) => {
        if (json) return;
        const key = `${p.entry.kind}:${p.entry.logicalId}:${p.entry.action}`;
        const now = vigil.deps.clock.now().getTime();
        if (p.phase === 'start') {
          started.set(key, now);
          const verb = { create: 'creating', update: 'updating', delete: 'deleting', unchanged: 'checking' }[p.entry.action];
          ctx.out(`[${p.done + 1}/${p.total}] ${verb} ${p.entry.kind} "${p.entry.logicalId}" … `);
        } else {
          ctx.out(`${ctx.paint('32', 'done')} (${seconds(now - (started.get(key) ?? now))})\n`);
        }
      };
      try {
        const plan = await vigil.apply(accountId, constructs, { prune: values.prune === true, dryRun, project, onProgress });
        ctx.out(json ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan, { color: ctx.o.color, verbose: values.verbose === true }));
        return EXIT_OK;
      } catch (err) {
        if (err instanceof ApplyError || (isVigilError(err) && err.name === 'ApplyError')) {
          ctx.out(`${ctx.paint('31', 'failed')}\n`);
          const completed = (err as ApplyError).completed;
          if (completed.length > 0) {
            ctx.err(`Done before the failure: ${completed.map((e) => `${e.action} ${e.kind} "${e.logicalId}"`).join(', ')}. Apply again to carry out the rest.\n`);
          }
        }
        throw err;
      }
    },
  };
}

const migrateCommand: Command = {
  summary: "Create or upgrade the store's tables",
  options: { help: CONFIG_OPTIONS.help },
  async run(ctx) {
    const vigil = await ctx.vigil();
    const clock = vigil.deps.clock;
    const t0 = clock.now().getTime();
    ctx.out(`Migrating the ${vigil.storage.name} store … `);
    await vigil.storage.migrate();
    ctx.out(`${ctx.paint('32', 'done')} (${seconds(clock.now().getTime() - t0)}); its tables are up to date.\n`);
    return EXIT_OK;
  },
};

const triggerCommand: Command = {
  summary: 'Run checks now (by tags or id), wait for them, exit 1 if any fails',
  options: {
    ...CONFIG_OPTIONS,
    tags: { type: 'string', short: 't', multiple: true },
    check: { type: 'string', multiple: true },
    timeout: { type: 'string' },
  },
  async run(ctx, values) {
    const matchTags = ((values.tags as string[] | undefined) ?? []).map((list) => {
      const tags = list.split(',').map((t) => t.trim()).filter((t) => t.length > 0 && t !== '!');
      if (tags.length === 0) throw new UsageError(`--tags "${list}" names no tag`);
      return tags;
    });
    const timeoutText = (values.timeout as string | undefined) ?? String(TRIGGER_TIMEOUT_S);
    const timeoutS = Number(timeoutText);
    if (!/^\d+$/.test(timeoutText) || timeoutS < 1 || timeoutS > 86_400) throw new UsageError(`--timeout must be a whole number of seconds from 1 to 86400, not "${timeoutText}"`);
    const { accountId, project } = await ctx.config(values, false);
    const vigil = await ctx.vigil();
    const checkIds: string[] = [];
    const managed = (values.check as string[] | undefined)?.some((c) => !isUuid(c))
      ? await vigil.storage.managedResources.list(accountId, project)
      : [];
    for (const given of (values.check as string[] | undefined) ?? []) {
      if (isUuid(given)) {
        checkIds.push(given);
        continue;
      }
      const row = managed.find((r) => r.kind === 'Check' && r.logicalId === given);
      if (!row) throw new Error(`no check has the logical id "${given}" in project "${project}" (or give the check's id)`);
      checkIds.push(row.resourceId);
    }
    const target = {
      ...(checkIds.length > 0 ? { checkId: checkIds } : {}),
      ...(matchTags.length > 0 ? { matchTags } : {}),
    };
    // The sessions run in this process (unless a server's engine claims them first): the engine starts.
    if (vigil.engine.state === 'stopped') await vigil.start();
    const clock = vigil.deps.clock;
    const t0 = clock.now().getTime();
    let sessions: CheckSessionResponse[];
    try {
      sessions = (await vigil.checkSessions.trigger(accountId, Object.keys(target).length > 0 ? { target } : {})).sessions;
    } catch (err) {
      if (isVigilError(err) && err.code === 'NOT_FOUND') throw new Error(`no activated check matches ${describeTarget(values)}`);
      throw err;
    }
    const json = values.json === true;
    const say = (text: string) => {
      if (!json) ctx.out(text);
    };
    say(`Started ${sessions.length} check session${sessions.length === 1 ? '' : 's'} (${describeTarget(values)}):\n`);
    for (const s of sessions) say(`  ${s.name} (${s.checkType}) in ${s.runLocations.join(', ')}\n`);

    const finished = new Map<string, CheckSessionResponse>();
    const deadline = t0 + timeoutS * 1000;
    let lastNote = t0;
    let timedOut = false;
    while (finished.size < sessions.length) {
      for (const s of sessions) {
        if (finished.has(s.checkSessionId)) continue;
        const now = await vigil.checkSessions.get(accountId, s.checkSessionId);
        if (!isFinalSessionStatus(now.status)) continue;
        finished.set(s.checkSessionId, now);
        if (ctx.o.interactive && !json) ctx.out('\r\u001b[2K');
        say(sessionLine(ctx, now));
      }
      if (finished.size === sessions.length) break;
      const now = clock.now().getTime();
      if (now >= deadline) {
        timedOut = true;
        break;
      }
      const elapsed = seconds(now - t0);
      if (ctx.o.interactive) say(`\r\u001b[2K${finished.size} of ${sessions.length} finished (${elapsed}) …`);
      else if (now - lastNote >= QUIET_PROGRESS_MS) {
        lastNote = now;
        say(`  … ${finished.size} of ${sessions.length} finished after ${elapsed}\n`);
      }
      await ctx.sleep(POLL_MS);
    }
    if (ctx.o.interactive && !json) ctx.out('\r\u001b[2K');
    const unfinished = sessions.filter((s) => !finished.has(s.checkSessionId));
    if (timedOut) {
      for (const s of unfinished) finished.set(s.checkSessionId, await vigil.checkSessions.cancel(accountId, s.checkSessionId, {}));
      say(`${ctx.paint('31', 'Timed out')} after ${timeoutS} s; cancelled ${unfinished.map((s) => s.name).join(', ')}.\n`);
    }
    const all = sessions.map((s) => finished.get(s.checkSessionId)!);
    const failed = all.filter((s) => !passed(s.status));
    if (json) ctx.out(`${JSON.stringify({ passed: failed.length === 0, sessions: all }, null, 2)}\n`);
    const counts = countBy(all.map((s) => s.status));
    say(`${all.length} session${all.length === 1 ? '' : 's'}: ${Object.entries(counts).map(([status, n]) => `${n} ${status.toLowerCase()}`).join(', ')} (${seconds(clock.now().getTime() - t0)}).\n`);
    return failed.length === 0 ? EXIT_OK : EXIT_FAILURE;
  },
};

const COMMANDS: Record<string, Command> = {
  plan: applyCommand(true),
  apply: applyCommand(false),
  migrate: migrateCommand,
  trigger: triggerCommand,
  destroy: destroyCommand,
};

/** A degraded run passed its assertions (only slower than wished); anything else final failed. */
const passed = (status: string) => status === 'PASSED' || status === 'DEGRADED';

function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function describeTarget(values: Values): string {
  const parts = [
    ...((values.tags as string[] | undefined) ?? []).map((t) => `tags ${t}`),
    ...((values.check as string[] | undefined) ?? []).map((c) => `check ${c}`),
  ];
  return parts.length > 0 ? parts.join(' or ') : 'every activated check';
}

function sessionLine(ctx: Context, s: CheckSessionResponse): string {
  const ok = passed(s.status);
  const mark = s.status === 'DEGRADED' ? ctx.paint('33', '!') : ok ? ctx.paint('32', '✓') : ctx.paint('31', '✗');
  const error = s.results.find((r) => r.resultType === 'FINAL' && r.errorMessage)?.errorMessage ?? null;
  const time = s.timeElapsed === null ? '' : ` in ${seconds(s.timeElapsed)}`;
  return `${mark} ${s.status.padEnd(9)} ${s.name} (${s.checkType}, ${s.runLocations.join(', ')})${time}${error ? `: ${error}` : ''}\n`;
}

function usage(program: string): string {
  return `Usage: ${program} <command> [options]

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(9)}${c.summary}`).join('\n')}

Options of plan and apply:
  -c, --config <file>    The config file with the constructs (default: vigil.config.mjs)
      --account <id>     The account (default: the config's, else the host's)
      --project <name>   Whose resources these are (default: the config's, else "default")
      --prune            Delete the resources this project made whose constructs are gone
      --dry-run          (apply) Show the plan and write nothing, as plan does
      --verbose          List unchanged resources too
      --json             Print the plan as JSON

Options of destroy (and --config, --account, --project, --json as above):
  -y, --yes              Delete every resource the project made; without it, only show them

Options of trigger:
  -t, --tags <a,b>       Checks with all of these tags (a group's tags count); repeat the
                         option for "or" (--tags api,eu --tags web); !tag excludes a tag
      --check <id>       A check by id, or by its logical id; repeatable
      --timeout <s>      Cancel what has not finished after this many seconds (default ${TRIGGER_TIMEOUT_S})
      --json             Print the finished sessions as JSON
  With neither --tags nor --check, every activated check runs.

Exit codes: 0 success; 1 a check failed, a construct is invalid, or an error; 2 usage error.
`;
}

/**
 * The `vigil` command line: `plan`, `apply`, `migrate` and `trigger`. Answers the exit code; it
 * writes only through `options.stdout` / `options.stderr` and reaches the store only through the
 * Vigil it is given, so a host wires it to its own store, config file and terminal.
 */
export async function runCli(argv: readonly string[], options: CliOptions): Promise<number> {
  const ctx = new Context(options);
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? ctx.err.bind(ctx) : ctx.out.bind(ctx))(usage(ctx.program));
    return name === undefined ? EXIT_USAGE : EXIT_OK;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) {
    ctx.err(`${ctx.program}: unknown command "${name}"\n\n${usage(ctx.program)}`);
    return EXIT_USAGE;
  }
  try {
    let values: Values;
    try {
      const parsed = parseArgs({ args: [...rest], options: command.options, strict: true, allowPositionals: false });
      values = parsed.values as Values;
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (values.help === true) {
      ctx.out(usage(ctx.program));
      return EXIT_OK;
    }
    return await command.run(ctx, values);
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.err(`${ctx.program} ${name}: ${err.message}\nRun "${ctx.program} --help" for the options.\n`);
      return EXIT_USAGE;
    }
    ctx.err(`${ctx.program} ${name}: ${describeError(err)}\n`);
    return EXIT_FAILURE;
  }
}

function describeError(err: unknown): string {
  if (err instanceof ConstructValidationError || (isVigilError(err) && err.name === 'ConstructValidationError')) return (err as Error).message;
  if (err instanceof Error) return err.message;
  return String(err);
}
