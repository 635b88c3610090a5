import { createModelRouter } from '@paddock/models';
import { startGatewayServer } from '@paddock/testing/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getHarness } from '../src/index.ts';
import { ofType, runTurn, tempDir } from './turn-helpers.ts';

let server: Awaited<ReturnType<typeof startGatewayServer>>;
beforeAll(async () => {
  server = await startGatewayServer(createModelRouter({}));
});
afterAll(() => server.close());

describe('native steering', () => {
  it('takes a message sent during a turn at the next step and keeps it in order', async () => {
    let take: ((m: { id: string; content: string }) => Promise<boolean>) | undefined;
    const workspaceDir = await tempDir();
    const turn = runTurn(getHarness('coding_alpha'), '::sleep 300\nfirst', {
      gateway: server.gateway,
      workspaceDir,
      inbox: { connect: (fn) => (take = fn) },
    });
    while (!take) await new Promise((r) => setTimeout(r, 5));
    const delivered = await take!({ id: 'steer-1', content: 'second' });
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
    let take: ((m: { id: string; content: string }) => Promise<boolean>) | undefined;
    const workspaceDir = await tempDir();
    await runTurn(getHarness('coding_alpha'), 'quick', {
      gateway: server.gateway,
      workspaceDir,
      inbox: { connect: (fn) => (take = fn) },
    });
    expect(await take!({ id: 'late', content: 'too late' })).toBe(false);
  });

  it('keeps a steered message the model was sent when the turn is cancelled in that step', async () => {
    let take: ((m: { id: string; content: string }) => Promise<boolean>) | undefined;
    const controller = new AbortController();
    const workspaceDir = await tempDir();
    const turn = runTurn(getHarness('coding_alpha'), '::sleep 200\nfirst', {
      gateway: server.gateway,
      workspaceDir,
      signal: controller.signal,
      inbox: { connect: (fn) => (take = fn) },
    });
    while (!take) await new Promise((r) => setTimeout(r, 5));
    // The steered message makes the next step's model call slow; the Stop lands during it.
    expect(await take!({ id: 'steer-1', content: '::sleep 5000\nsecond' })).toBe(true);
    controller.abort();
    const result = await turn;
    expect(result.stopReason).toBe('cancelled');
    const users = result.messages.filter((m) => m.role === 'user');
    expect(users.map((m) => m.content)).toEqual(['::sleep 5000\nsecond']);
    expect(ofType(result.events, 'user.message').map((e) => e.data.message_id)).toEqual(['steer-1']);
  });
});
