/**
 * The host's target policy applied to a URL an account wrote (a webhook's, a chat webhook's):
 * the delivery looks the name up itself, checks every address, and connects to an address it
 * checked, so a name cannot answer differently between the check and the connection.
 */
import { Agent, buildConnector } from 'undici';
import { lookupChecked, targetRefusalMessage, type LookupAllFunction, type TargetPolicy, type TargetRefusal } from '@vigil/core';

/** The code of a connection the target policy refused (the HTTP runner's too). */
export const TARGET_POLICY_CODE = 'ETARGETPOLICY';

/** The error of a refused connection: it names the host and the address, never the URL. */
function refused(refusal: TargetRefusal, host: string): Error & { code: string } {
  return Object.assign(new Error(targetRefusalMessage(refusal, host)), { code: TARGET_POLICY_CODE });
}

/**
 * An undici dispatcher whose every connection goes to the first address of its host once every
 * address passed the policy (an IP address in the URL is checked as written). The request keeps
 * its URL: the Host header and the TLS server name stay the name the account wrote.
 */
export function guardedAgent(policy: TargetPolicy, timeoutMs: number, lookupAll?: LookupAllFunction): Agent {
  const connect = buildConnector({ timeout: timeoutMs });
  const guarded: buildConnector.connector = (options, callback) => {
    lookupChecked(policy, options.hostname, 0, lookupAll).then(
      ({ refusal, addresses }) => {
        if (refusal) return callback(refused(refusal, options.hostname), null);
        connect({ ...options, hostname: addresses[0].address }, callback);
      },
      (err: Error) => callback(err, null),
    );
  };
  return new Agent({ connect: guarded });
}
