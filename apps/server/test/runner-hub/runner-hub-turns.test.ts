import type { TurnResult } from '@paddock/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { command, connect, endTurn, event, makeHub, settle } from './runner-hub-fakes.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('RunnerHub turns', () => {
  it('relays a turn in order, acknowledges each event once stored, and drops a replay', async () => {
    const { hub } = makeHub();
    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await settle();
    const stored: [string, number | undefined][] = [];
    const result = hub.runTurn('t1', command('turn-1'), async (e, index) => {
      stored.push([(e.data as { content: { content: string }[] }).content[0]!.content, index]);
    });
    expect(runner.of('turn')).toEqual([{ type: 'turn', thread_id: 't1', command: command('turn-1') }]);
    runner.receive({ type: 'turn.event', turn_id: 'turn-1', index: 0, event: event('a') });
    runner.receive({ type: 'turn.event', turn_id: 'turn-1', index: 0, event: event('a') });
    runner.receive({ type: 'turn.event', turn_id: 'turn-1', index: 1, event: event('b') });
    runner.receive({ type: 'turn.result', turn_id: 'turn-1', index: 2, result: endTurn });
    expect(await result).toEqual(endTurn);
    expect(stored).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    expect(runner.of('ack')).toEqual([
      { type: 'ack', turn_id: 'turn-1', index: 0 },
      { type: 'ack', turn_id: 'turn-1', index: 1 },
    ]);
    hub.release('turn-1');
    expect(runner.of('ack').at(-1)).toEqual({ type: 'ack', turn_id: 'turn-1', index: 2 });
  });

  it('picks a turn up again when its runner reconnects, and ends the turns it no longer holds', async () => {
    const { hub, reconciled } = makeHub();
    const first = connect(hub, 'r1', { sandboxes: ['t1', 't2'] });
    await settle();
    const kept = hub.runTurn('t1', command('kept'), async () => {});
    const forgotten = hub.runTurn('t2', command('forgotten'), async () => {});
    first.receive({ type: 'turn.event', turn_id: 'kept', index: 0, event: event('a') });
    await settle();
    hub.interrupt('t1', 'kept');
    first.emit('close');
    const second = connect(hub, 'r1', { sandboxes: ['t1'], turns: [{ turn_id: 'kept', thread_id: 't1' }] });
    await settle();
    expect(await forgotten).toMatchObject({ error: { code: 'runner_lost', retryable: true } });
    // From the first index not stored, and the Stop asked again.
    expect(second.sent).toEqual([
      { type: 'attach', turn_id: 'kept', from_index: 1 },
      { type: 'interrupt', thread_id: 't1', turn_id: 'kept' },
    ]);
    expect(reconciled.at(-1)).toEqual(['r1', ['kept']]);
    second.receive({ type: 'turn.result', turn_id: 'kept', index: 1, result: endTurn });
    expect(await kept).toEqual(endTurn);
    expect(hub.isRunning('t2')).toBe(false);
  });

  it('ends a turn as lost when its runner stays away past the adoption window', async () => {
    vi.useFakeTimers();
    const { hub } = makeHub({ timings: { lostAfterMs: 1_000 } });
    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await vi.advanceTimersByTimeAsync(0);
    let result: TurnResult | undefined;
    void hub.runTurn('t1', command('turn-1'), async () => {}).then((r) => (result = r));
    runner.emit('close');
    await vi.advanceTimersByTimeAsync(999);
    expect(result).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(result).toMatchObject({ error: { code: 'runner_lost', message: 'the runner did not come back' } });
  });

  it('offers a restarted server the turns a runner holds, and abandons those it does not adopt', async () => {
    const { hub, adopted, reconciled } = makeHub({
      adopt: async (turn) => {
        adopted.push(turn);
        return turn.turnId === 'ours';
      },
    });
    const runner = connect(hub, 'r1', {
      sandboxes: ['t1', 't2'],
      turns: [
        { turn_id: 'ours', thread_id: 't1' },
        { turn_id: 'stale', thread_id: 't2' },
      ],
    });
    await settle();
    expect(adopted.map((t) => t.turnId)).toEqual(['ours', 'stale']);
    expect(adopted[0]).toEqual({ turnId: 'ours', threadId: 't1', runnerId: 'r1', agentId: undefined });
    expect(runner.of('abandon')).toEqual([{ type: 'abandon', turn_id: 'stale' }]);
    expect(reconciled).toEqual([['r1', ['ours', 'stale']]]);
    const stored: number[] = [];
    const result = hub.attach('t1', 'ours', 3, async (_e, index) => {
      stored.push(index!);
    });
    expect(runner.of('attach')).toEqual([{ type: 'attach', turn_id: 'ours', from_index: 3 }]);
    runner.receive({ type: 'turn.event', turn_id: 'ours', index: 3, event: event('c') });
    runner.receive({ type: 'turn.result', turn_id: 'ours', index: 4, result: endTurn });
    expect(await result).toEqual(endTurn);
    expect(stored).toEqual([3]);
    // An abandoned turn cannot be attached.
    expect(await hub.attach('t2', 'stale', 0, async () => {})).toMatchObject({
      error: { code: 'runner_lost' },
    });
  });
});
