import type { CheckGroup, RunJob, RunSnippet } from '@vigil/core';
import { checkGroupFixture } from '@vigil/core/testing';
import { apiJob, type ApiJobOptions } from './support.js';

// What the tests of setup and teardown scripts share: a job whose group carries the scripts.

/** A group with the given setup/teardown fields, as the engine hands it to a run. */
export function group(fields: Partial<Pick<CheckGroup, 'localSetupScript' | 'localTearDownScript' | 'setupSnippetId' | 'tearDownSnippetId'>>): CheckGroup {
  return { ...checkGroupFixture({ name: 'Scripted group', ...fields }), id: 7, accountId: 'account-1' };
}

/** The account's snippets, as the engine's lookup answers them. */
export function snippets(...list: RunSnippet[]): RunJob['snippets'] {
  return { get: async (id) => list.find((s) => s.id === id) ?? null };
}

export interface Scripted extends ApiJobOptions {
  setup?: string;
  teardown?: string;
  fields?: Parameters<typeof group>[0];
}

export function scriptedJob({ setup, teardown, fields = {}, ...options }: Scripted): RunJob {
  const job = apiJob(options);
  return { ...job, group: group({ localSetupScript: setup ?? null, localTearDownScript: teardown ?? null, ...fields }), ...options.job };
}

type Logs = { phase: string; level: string; text: string; source: string }[];
export const logsOf = (details: Record<string, unknown> | null | undefined) => (details?.logs ?? []) as Logs;
