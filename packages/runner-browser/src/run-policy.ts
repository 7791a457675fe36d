import type { RunJob, TargetPolicy, RefusedTarget } from '@vigil/core';

/** The policy a run is held to: the job's and the runner's, an address either refuses refused. Null when neither refuses anything. */
export function runPolicy(job: RunJob, own: TargetPolicy | null): TargetPolicy | null {
  const policies = [job.targetPolicy, own].filter((p): p is TargetPolicy => p?.refuseInternalAddresses === true);
  if (policies.length <= 1 || policies[0] === policies[1]) return policies[0] ?? null;
  return {
    refuseInternalAddresses: true,
    allow: policies[0]!.allow.filter((cidr) => policies[1]!.allow.includes(cidr)),
    checkAddress: (address) => policies[0]!.checkAddress(address) ?? policies[1]!.checkAddress(address),
    checkHost: (host) => policies[0]!.checkHost(host) ?? policies[1]!.checkHost(host),
  };
}

const SCRIPT_REFUSAL_REASON = 'under a target policy a browser check reaches the network through its pages only (page.goto, fetch inside page.evaluate), whose every address is checked';

/** A connection the script's own process tried (and its fence refused), as the run records it. */
export function scriptRefusal(host: string, port: number): RefusedTarget {
  const what = port > 0 ? `${host}:${port}` : host;
  return { source: 'script', host, port, address: host, reason: SCRIPT_REFUSAL_REASON, message: `The target policy refused the script's own connection to ${what}: ${SCRIPT_REFUSAL_REASON}` };
}
