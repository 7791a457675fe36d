import { networkInterfaces } from 'node:os';

let cached: { at: number; addresses: readonly string[] } | null = null;

/**
 * The addresses of this machine's network interfaces (read at most once a minute, so an address
 * that changes is seen soon): a check aimed at one of them reaches the host itself.
 */
export function thisMachineAddresses(now = Date.now()): readonly string[] {
  if (!cached || now - cached.at > 60_000) {
    const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));
    cached = { at: now, addresses };
  }
  return cached.addresses;
}
