import { createModelRouter } from '@paddock/models';
import { startGatewayServer } from '@paddock/testing/gateway';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHarness } from '../src/index.ts';
import type { SteeringInbox } from '../src/types.ts';
import { ofType, runTurn, tempDir } from './turn-helpers.ts';

let server: Awaited<ReturnType<typeof startGatewayServer>>;
beforeAll(async () => {
  server = await startGatewayServer(createModelRouter({}));
});
afterAll(() => server.close());

type Take = Parameters<SteeringInbox['connect']>[0];

/** A turn's inbox, and the way to hand it a message, given once the turn connects it. */
function inbox(): { inbox: SteeringInbox; connected: Promise<Take> } {
  let connect!: (take: Take) => void;
  const connected = new Promise<Take>((resolve) => (connect = resolve));
  return { inbox: { connect }, connected };
}

/** Once the model has the turn's first call (and sleeps on it): a message now joins at the next step. */
async function duringFirstStep(asked: number): Promise<void> {
  await vi.waitFor(() => expect(server.bodies.length).toBeGreaterThan(asked), { interval: 5 });
}

describe('native steering', () => {
  it('takes a message sent during a turn at the next step and keeps it in order', async () => {
    const steering = inbox();
    const asked = server.bodies.length;
    const workspaceDir = await tempDir();
    const turn = runTurn(createHarness('coding_alpha'), '::sleep 300\nfirst', {
      gateway: server.gateway,
      workspaceDir,
      inbox: steering.inbox,
    });
    const take = await steering.connected;
    await duringFirstStep(asked);
    const delivered = await take({ id: 'steer-1', content: 'second' });
    const result = await turn;
    expect(delivered).toBe(true);
    expect(result.stopReason).toBe('end_turn');
    expect(result.messages.map((m) => [m.role, typeof m.content === 'string' ? m.content : ''])).toEqual([
      ['assistant', ''],
      ['user', 'second'],
      ['assistant', ''],
    ]);
    expect(result.lastAssistantText).toBe('You said: second');
    expect(ofType(result.events, 'user.message').map((e) => e.data)).toEqual([
      { message_id: 'steer-1', content: 'second', role: 'user' },
    ]);
    // The model saw the steered message after its first answer.
    const lastRequest = server.bodies.at(-1)!.messages;
    expect(lastRequest.at(-1)).toMatchObject({ role: 'user', content: 'second' });
    expect(lastRequest.at(-2)).toMatchObject({ role: 'assistant' });
  });

  it('answers false for a message that arrives after the turn ended', async () => {
    const steering = inbox();
    const workspaceDir = await tempDir();
    await runTurn(createHarness('coding_alpha'), 'quick', {
      gateway: server.gateway,
      workspaceDir,
      inbox: steering.inbox,
    });
    const take = await steering.connected;
    expect(await take({ id: 'late', content: 'too late' })).toBe(false);
  });

  it('keeps a steered message the model was sent when the turn is cancelled in that step', async () => {
    const steering = inbox();
    const asked = server.bodies.length;
    const controller = new AbortController();
    const workspaceDir = await tempDir();
    const turn = runTurn(createHarness('coding_alpha'), '::sleep 200\nfirst', {
      gateway: server.gateway,
      workspaceDir,
      signal: controller.signal,
      inbox: steering.inbox,
    });
    const take = await steering.connected;
    await duringFirstStep(asked);
    // The steered message makes the next step's model call slow; the Stop lands during it.
    expect(await take({ id: 'steer-1', content: '::sleep 5000\nsecond' })).toBe(true);
    controller.abort();
    const result = await turn;
    expect(result.stopReason).toBe('cancelled');
    const users = result.messages.filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual(['::sleep 5000\nsecond']);
    expect(ofType(result.events, 'user.message').map((e) => e.data.message_id)).toEqual(['steer-1']);
  });
});
