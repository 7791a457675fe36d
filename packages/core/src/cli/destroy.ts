import { formatPlan } from './format-plan.js';
import { CONFIG_OPTIONS, EXIT_OK, EXIT_USAGE } from './options.js';
import type { Command } from './run-cli.js';

/**
 * `destroy`: deletes every resource the project made (an apply of no constructs with prune). Without
 * `--yes` it shows them and deletes nothing, and exits 2 when there is something to delete, so a
 * pipeline that forgot the flag does not pass for one that deleted.
 */
export const destroyCommand: Command = {
  summary: 'Delete every resource the project made (with --yes; without it, show them)',
  options: { ...CONFIG_OPTIONS, yes: { type: 'boolean', short: 'y' }, verbose: { type: 'boolean' } },
  async run(ctx, values) {
    const { accountId, project } = await ctx.config(values, false);
    const vigil = await ctx.vigil();
    const dryRun = values.yes !== true;
    const plan = await vigil.apply(accountId, [], { prune: true, dryRun, project });
    ctx.out(values.json === true ? `${JSON.stringify(plan, null, 2)}\n` : formatPlan(plan, { color: ctx.o.color, verbose: values.verbose === true }));
    const deletes = plan.summary.delete;
    if (dryRun && deletes > 0) {
      ctx.err(`Nothing was deleted: run "${ctx.program} destroy --yes" to delete ${deletes === 1 ? 'this resource' : `these ${deletes} resources`}.\n`);
      return EXIT_USAGE;
    }
    return EXIT_OK;
  },
};
