import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventData } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';
import { registryConfig, registryHost } from './registry-config.ts';

/** A host no policy here allows, never reached: the proxy refuses it by name. */
const outside = 'example.com';

type NetworkRequest = EventData['network.request'];

// Real sandboxes, the machine's own package registry and servers on loopback (issue 15). The
// policies are the same code on either store, and `npm install` is slow: SQLite only.
describe.each(testDatabases().slice(0, 1))(
  'network policies through the egress proxy on $name',
  (database) => {
    let server: TestServer;
    let allowed: Server;
    let allowedPort: number;
    let registry: string;

    beforeAll(async () => {
      allowed = createServer((_request, response) => response.end('hello from the allowed host\n'));
      await new Promise<void>((resolve) => allowed.listen(0, '127.0.0.2', resolve));
      allowedPort = (allowed.address() as AddressInfo).port;
      registry = registryHost();
      server = await startTestServer(database, {
        PADDOCK_CONFIG: await registryConfig('egress', ['127.0.0.2']),
      });
    });
    afterAll(async () => {
      await server?.close();
      allowed?.close();
    });

    /** Runs `command` in a new thread's sandbox as the agent's shell tool; its output and connections. */
    async function inSandbox(network: unknown, command: string, waitForHost?: string) {
      const { thread_id: threadId } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec(network === undefined ? {} : { network }), input: `::sh ${command}` },
        }),
        201,
      );
      await settled(server, threadId, 120_000);
      const requests = async () =>
        (await allEvents(server, threadId))
          .filter((e) => e.type === 'network.request')
          .map((e) => e.data as NetworkRequest);
      // A connection is reported when it closes, a moment after the command saw it end.
      if (waitForHost)
        await vi.waitFor(async () => expect((await requests()).map((r) => r.host)).toContain(waitForHost), {
          timeout: 10_000,
        });
      const events = await allEvents(server, threadId);
      const end = events.find((e) => e.type === 'tool_call.end');
      const output = String((end?.data as { output?: string } | undefined)?.output ?? '');
      return { output, requests: await requests(), events };
    }

    it('registries (the default): npm install works; a host outside is refused with a 403 and an event', {
      timeout: 120_000,
    }, async () => {
      const { output, requests, events } = await inSandbox(
        undefined,
        `npm install is-number --no-audit --no-fund --loglevel=error >/dev/null 2>&1; echo "npm=$?"; ` +
          `cat node_modules/is-number/package.json | grep '"name"'; ` +
          `curl -sS https://${outside}/ 2>&1; echo "curl=$?"`,
        outside,
      );
      expect(output).toContain('npm=0');
      expect(output).toContain('"name": "is-number"');
      expect(output).toMatch(/CONNECT tunnel failed, response 403/);
      expect(output).not.toContain('curl=0');
      const reached = requests.find((r) => r.host === registry && r.allowed);
      expect(reached).toMatchObject({ port: 443, method: 'CONNECT' });
      expect(reached!.bytes_in).toBeGreaterThan(1000);
      expect(requests.find((r) => r.host === outside)).toMatchObject({
        port: 443,
        allowed: false,
        reason: "not in the agent's network policy (registries)",
        bytes_out: 0,
        bytes_in: 0,
      });
      // Connections belong to no turn.
      expect(events.filter((e) => e.type === 'network.request').every((e) => e.turn_id === null)).toBe(true);
    });

    it('registries: an MCP server started with `npx -y` is installed from the registry and called', async () => {
      const { thread_id: threadId } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: {
            agent: agentSpec({
              mcp_servers: [
                // A command line, as the spec gives a server only `command`.
                { name: 'memory', command: 'npx -y @modelcontextprotocol/server-memory' },
              ],
            }),
            input: '::call mcp__memory__read_graph {}',
          },
        }),
        201,
      );
      await settled(server, threadId, 120_000);
      const events = await allEvents(server, threadId);
      const end = events.find((e) => e.type === 'tool_call.end');
      const seen = events.filter((e) => e.type !== 'network.request').map((e) => [e.type, e.data]);
      expect(end?.data, JSON.stringify(seen)).toMatchObject({ status: 'ok' });
      expect(String(end?.data.output)).toContain('entities');
      // npx keeps its connections to the registry open while the server runs (each is reported as
      // it closes): the install itself is what shows here.
    }, 120_000);

    it('none: nothing leaves, through the proxy or around it; the sandbox’s own loopback still answers', async () => {
      const { output, requests } = await inSandbox(
        'none',
        `curl -sS https://${registry}/ 2>&1; echo "curl=$?"; ` +
          `(exec 3<>/dev/tcp/1.1.1.1/443) 2>/dev/null; echo "raw=$?"; ` +
          `curl -sS --noproxy '' --proxytunnel -x http://127.0.0.1:8788 http://127.0.0.1:8787/healthz; echo " loopback=$?"`,
        registry,
      );
      expect(output).toMatch(/CONNECT tunnel failed, response 403/);
      expect(output).toContain('raw=1');
      expect(output).toContain('loopback=0');
      expect(requests.find((r) => r.host === registry)).toMatchObject({
        allowed: false,
        reason: 'network policy none',
      });
    });

    it('an allow list reaches the listed host and nothing else', async () => {
      const { output, requests } = await inSandbox(
        { allow: ['127.0.0.2'] },
        `curl -sS http://127.0.0.2:${allowedPort}/; echo "allowed=$?"; curl -sS https://${registry}/ 2>&1; echo "registry=$?"`,
        registry,
      );
      expect(output).toContain('hello from the allowed host');
      expect(output).toContain('allowed=0');
      expect(output).not.toContain('registry=0');
      expect(requests.find((r) => r.host === '127.0.0.2')).toMatchObject({
        port: allowedPort,
        method: 'HTTP',
        allowed: true,
      });
      expect(requests.find((r) => r.host === registry)).toMatchObject({
        allowed: false,
        reason: "not in the agent's network policy (allow list)",
      });
    });

    it('full reaches no loopback service of the host: PostgreSQL, Redis, the server itself', async () => {
      const port = new URL(server.url).port;
      const targets = ['127.0.0.1:5432', '127.0.0.1:6379', `127.0.0.1:${port}`, `localhost:${port}`];
      const probes = targets
        .map(
          (target) =>
            `curl -fsS --noproxy '' -x http://127.0.0.1:8788 http://${target}/ 2>&1; echo "${target}=$?"`,
        )
        .join('; ');
      const around = `(exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; echo "raw=$?"`;
      const { output, requests } = await inSandbox('full', `${probes}; ${around}`, 'localhost');
      for (const target of targets) expect(output).not.toContain(`${target}=0`);
      expect(output).toContain('raw=1');
      for (const target of targets) {
        const [host, targetPort] = target.split(':');
        expect(requests.find((r) => r.host === host && r.port === Number(targetPort))).toMatchObject({
          allowed: false,
          reason: expect.stringMatching(/^address (127\.0\.0\.1|::1) not allowed/),
        });
      }
    });
  },
);
