import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * SSRF protection: in production a webhook may not reach the service's own network. Refused: loopback, private,
 * shared (CGNAT), link-local (cloud metadata at 169.254.169.254 among them), unspecified, multicast, reserved and
 * documentation ranges, in IPv4 and IPv6 (IPv4-mapped IPv6 addresses are checked as the IPv4 address they hold).
 */
const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 96], ['64:ff9b::', 96], ['100::', 64], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) refused.addSubnet(network, prefix, 'ipv6');

/** Whether an IP address (v4 or v6, without brackets) is one a production webhook may not reach. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address at all: never reached
  return refused.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as an address when it is one (`[::1]` → `::1`), else undefined. */
const literal = (hostname: string) => {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return isIP(bare) ? bare : undefined;
};

/** Why a webhook URL is refused (http(s) only; in production no private address unless allowed), or null. */
export async function urlProblem(url: string, options: { production: boolean; allowPrivate: boolean }): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http or https URL';
  if (!parsed.hostname) return 'must name a host';
  if (!options.production || options.allowPrivate) return null;
  const host = parsed.hostname.toLowerCase();
  const address = literal(host);
  if (address) return isPrivateAddress(address) ? `must not point at a loopback, private or link-local address (${address})` : null;
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not point at this machine (localhost)';
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    const inside = found.find((a) => isPrivateAddress(a.address));
    if (inside) return `must not point at a loopback, private or link-local address (${host} resolves to ${inside.address})`;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOTFOUND') return `names a host that does not resolve (${host})`;
    // Any other DNS failure is passing: the address is checked again, resolved, at each delivery.
  }
  return null;
}

type LookupCallback = (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;

/**
 * A `lookup` for http.request that resolves the host and refuses (unless `allowPrivate`) when any address it resolves
 * to is private; the connection then goes to an address that was checked, so a DNS answer cannot change in between.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    lookup(hostname, { all: true, verbatim: true, ...(options.family ? { family: options.family } : {}) }).then((found) => {
      const inside = allowPrivate ? undefined : found.find((a) => isPrivateAddress(a.address));
      if (inside) return callback(new Error(`refused: ${hostname} resolves to a loopback, private or link-local address (${inside.address})`), '');
      if (!found.length) return callback(new Error(`${hostname} does not resolve`), '');
      if (options.all) return callback(null, found);
      callback(null, found[0].address, found[0].family);
    }, (err: Error) => callback(err, ''));
  };
}

/** A refusal before connecting to an address literal (http.request resolves no name then, so no lookup runs). */
export function literalProblem(url: URL, allowPrivate: boolean): string | null {
  const address = literal(url.hostname);
  if (allowPrivate || !address || !isPrivateAddress(address)) return null;
  return `refused: ${address} is a loopback, private or link-local address`;
}
