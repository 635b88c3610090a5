import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { type AddressRange, blockListOf, isAddressAllowed } from '@paddock/protocol';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';

/** A request on a user's behalf was about to reach an address the deployment does not allow. */
export class OutboundAddressError extends Error {
  readonly code = 'EADDRNOTALLOWED';
  readonly host: string;
  constructor(host: string) {
    super(`${host}: address not allowed (not public; PADDOCK_OUTBOUND_ALLOW can allow it)`);
    this.name = 'OutboundAddressError';
    this.host = host;
  }
}

/**
 * The one way the server makes HTTP requests on a user's behalf (the MCP probe, the MCP relay; later
 * webhooks): a `fetch` that connects only to public addresses, or to ranges the deployment allows.
 * The check sits in the connection itself (name resolution, and the address a socket opened to), so
 * what is checked is what is connected to: a name that resolves once to a public address and then to
 * a private one (DNS rebinding), a redirect, or an IP literal cannot slip past it.
 */
export interface OutboundGuard {
  fetch(input: string | URL, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

export interface OutboundGuardOptions {
  /** Non-public ranges requests may reach all the same (a local MCP server). */
  allow: readonly AddressRange[];
  /** Name resolution; the system's (`dns.lookup`) unless given. */
  lookup?: LookupFunction;
  connectTimeoutMs?: number;
}

export function createOutboundGuard(options: OutboundGuardOptions): OutboundGuard {
  const allowed = blockListOf(options.allow);
  const resolve = options.lookup ?? (dnsLookup as LookupFunction);
  const guardedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, resolved) => {
      if (error) return callback(error, '', 4);
      const addresses = (Array.isArray(resolved) ? resolved : []) as LookupAddress[];
      const permitted = addresses.filter((a) => isAddressAllowed(a.address, allowed));
      if (permitted.length === 0) return callback(new OutboundAddressError(hostname), '', 4);
      if (lookupOptions.all) return (callback as (e: null, a: LookupAddress[]) => void)(null, permitted);
      callback(null, permitted[0]!.address, permitted[0]!.family);
    });
  };
  const connector = buildConnector({ lookup: guardedLookup, timeout: options.connectTimeoutMs });
  const agent = new Agent({
    connect(connectOptions, callback) {
      // An IP literal is connected to without name resolution: check it here, before connecting.
      const host = connectOptions.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host) !== 0 && !isAddressAllowed(host, allowed))
        return callback(new OutboundAddressError(host), null);
      connector(connectOptions, (error, socket) => {
        if (error) return callback(error, null);
        // The address the socket reached is the last word (whatever resolved it).
        const remote = (socket as Socket).remoteAddress;
        if (remote === undefined || !isAddressAllowed(remote, allowed)) {
          socket.destroy();
          return callback(new OutboundAddressError(host), null);
        }
        callback(null, socket);
      });
    },
  });
  return {
    fetch: (input, init) =>
      undiciFetch(input, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: agent,
      }) as Promise<unknown> as Promise<Response>,
    close: () => agent.close(),
  };
}

/** Whether an error (or one of its causes) is the guard's refusal. */
export function isOutboundAddressError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; depth++) {
    if (e instanceof OutboundAddressError) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
