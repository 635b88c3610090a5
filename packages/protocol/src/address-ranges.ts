import { BlockList, isIP, isIPv4 } from 'node:net';

/** An address range as a deployment writes it: `10.1.2.0/24`, `fd00::/8`, or one address. */
export interface AddressRange {
  address: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/** Parses `address[/prefix]`; undefined when it is neither an IPv4 nor an IPv6 range. */
export function parseAddressRange(text: string): AddressRange | undefined {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (!/^\d{1,3}$/.test(prefixText ?? String(max)) || prefix > max) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A comma-separated list of ranges; throws naming the first entry that is not one. */
export function parseAddressRanges(text: string): AddressRange[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const range = parseAddressRange(entry);
      if (!range) throw new Error(`${entry} is not an IP address or CIDR range`);
      return range;
    });
}

export function blockListOf(ranges: readonly AddressRange[]): BlockList {
  const list = new BlockList();
  for (const range of ranges) list.addSubnet(range.address, range.prefix, range.family);
  return list;
}

/**
 * Addresses that are not on the public internet: the server's own host and networks, and what
 * stands behind them. A request made on a user's behalf must not reach these unless the deployment
 * allows it, or a user could probe (and talk to) what only the server can reach.
 */
const nonPublic = blockListOf(
  [
    '0.0.0.0/8', // "this network", the unspecified address
    '10.0.0.0/8', // RFC 1918
    '100.64.0.0/10', // carrier-grade NAT
    '127.0.0.0/8', // loopback
    '169.254.0.0/16', // link-local, cloud metadata (169.254.169.254)
    '172.16.0.0/12', // RFC 1918
    '192.0.0.0/24', // IETF protocol assignments
    '192.0.2.0/24', // documentation
    '192.168.0.0/16', // RFC 1918
    '198.18.0.0/15', // benchmarking
    '198.51.100.0/24', // documentation
    '203.0.113.0/24', // documentation
    '224.0.0.0/4', // multicast
    '240.0.0.0/4', // reserved, broadcast
    '::/96', // unspecified, loopback, and the deprecated IPv4-compatible form
    '64:ff9b:1::/48', // local-use NAT64
    '100::/64', // discard
    '2001::/32', // Teredo (an IPv4 address hides in it)
    '2001:db8::/32', // documentation
    'fc00::/7', // unique local, AWS's metadata (fd00:ec2::254)
    'fe80::/10', // link-local
    'fec0::/10', // site-local (deprecated)
    'ff00::/8', // multicast
  ].map((text) => parseAddressRange(text)!),
);

/**
 * Whether a request on a user's behalf may connect to `address`: a public address, or one the
 * deployment allows. An IPv6 address that carries an IPv4 one (IPv4-mapped, NAT64, 6to4) is judged
 * by that IPv4 address too, so `::ffff:127.0.0.1` is loopback.
 */
export function isAddressAllowed(address: string, allowed: BlockList): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const version = isIP(bare);
  if (version === 0) return false;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  if (allowed.check(bare, family)) return true;
  const embedded = version === 6 ? embeddedIpv4(bare) : undefined;
  if (embedded !== undefined) return isAddressAllowed(embedded, allowed);
  return !nonPublic.check(bare, family);
}

/** The IPv4 address an IPv6 one stands for: IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`. */
function embeddedIpv4(address: string): string | undefined {
  const bytes = ipv6Bytes(address);
  if (!bytes) return undefined;
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  const ipv4 = (at: number) => bytes.slice(at, at + 4).join('.');
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return ipv4(12);
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12))
    return ipv4(12);
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return ipv4(2);
  return undefined;
}

/** The 16 bytes of an IPv6 address (any notation, a trailing dotted quad too); undefined when it is not one. */
export function ipv6Bytes(address: string): number[] | undefined {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    if (!isIPv4(dotted[1]!)) return undefined;
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (half: string | undefined) => (half ? half.split(':') : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array<string>(fill).fill('0'), ...tail];
  if (all.length !== 8) return undefined;
  return all.flatMap((group) => {
    const value = Number.parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}
