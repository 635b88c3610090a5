import { createServer, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { blockListOf, isAddressAllowed, parseAddressRanges } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundGuard, isOutboundAddressError } from '../src/outbound/outbound-guard.ts';

describe('the addresses requests on a user’s behalf may reach', () => {
  const none = blockListOf([]);
  it('refuses every non-public address, in each of its spellings, and allows public ones', () => {
    const refused = [
      '127.0.0.1',
      '127.255.0.9',
      '0.0.0.0',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '100.64.0.1',
      '169.254.169.254',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '[::1]',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:169.254.169.254',
      '64:ff9b::10.0.0.1',
      '2002:7f00:1::1',
      'fd00:ec2::254',
      'fc00::1',
      'fe80::1%eth0',
      'ff02::1',
      'not-an-address',
    ];
    for (const address of refused)
      expect([address, isAddressAllowed(address, none)]).toEqual([address, false]);
    const allowed = [
      '93.184.216.34',
      '1.1.1.1',
      '2606:4700:4700::1111',
      '::ffff:93.184.216.34',
      '64:ff9b::1.1.1.1',
    ];
    for (const address of allowed)
      expect([address, isAddressAllowed(address, none)]).toEqual([address, true]);
  });

  it('allows exactly the ranges a deployment names, in any spelling of the address', () => {
    const allow = blockListOf(parseAddressRanges('127.0.0.0/8, fd00::/8'));
    expect(isAddressAllowed('127.0.0.1', allow)).toBe(true);
    expect(isAddressAllowed('::ffff:127.0.0.1', allow)).toBe(true);
    expect(isAddressAllowed('fd00:ec2::254', allow)).toBe(true);
    expect(isAddressAllowed('10.0.0.1', allow)).toBe(false);
    expect(isAddressAllowed('::1', allow)).toBe(false);
    expect(() => parseAddressRanges('10.0.0.0/33')).toThrow('10.0.0.0/33 is not an IP address or CIDR range');
    expect(() => parseAddressRanges('example.com')).toThrow('example.com is not');
  });
});

describe('the outbound guard', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.end('reached'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  /** A name server that answers a public address for the first lookup and loopback after (DNS rebinding). */
  function rebinding(): LookupFunction {
    let asked = 0;
    return (_hostname, options, callback) => {
      const address = asked++ === 0 ? '93.184.216.34' : '127.0.0.1';
      if (options.all)
        (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address, family: 4 },
        ]);
      else callback(null, address, 4);
    };
  }

  it('checks the address it connects to: a name resolving to loopback (on a second lookup too) is refused without connecting', async () => {
    const lookup = rebinding();
    // The first answer (public) is what a check done before the request would have seen.
    lookup('rebind.test', {}, () => {});
    const guard = createOutboundGuard({ allow: [], lookup });
    const before = connections;
    const error = await guard.fetch(`http://rebind.test:${port}/`).catch((e: unknown) => e);
    expect(isOutboundAddressError(error)).toBe(true);
    expect(connections).toBe(before);
    await guard.close();

    const allowing = createOutboundGuard({ allow: parseAddressRanges('127.0.0.1') });
    const reached = await allowing.fetch(`http://localhost:${port}/`);
    expect(await reached.text()).toBe('reached');
    expect(connections).toBe(before + 1);
    await allowing.close();
  });

  it('follows no redirect to a refused address', async () => {
    const redirecting = createServer((_req, res) =>
      res.writeHead(302, { location: `http://127.0.0.1:${port}/` }).end(),
    );
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.2', resolve));
    const { port: from } = redirecting.address() as AddressInfo;
    const guard = createOutboundGuard({ allow: parseAddressRanges('127.0.0.2') });
    const before = connections;
    const error = await guard.fetch(`http://127.0.0.2:${from}/`).catch((e: unknown) => e);
    expect(isOutboundAddressError(error)).toBe(true);
    expect(connections).toBe(before);
    await guard.close();
    await new Promise((resolve) => redirecting.close(resolve));
  });
});
