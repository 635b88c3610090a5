import { SandboxUnavailableError } from '@paddock/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  codeRun,
  command,
  connect,
  endTurn,
  ensureOptions,
  FakeSocket,
  makeHub,
  settle,
} from './runner-hub-fakes.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('RunnerHub placement', () => {
  it("boots a self-hosted thread's sandbox only on a runner of its agent, and reports it running there", async () => {
    const { hub } = makeHub({ selfHosted: true });
    const other = connect(hub, 'r1', {}, 'agent-a');
    const own = connect(hub, 'r1', {}, 'agent-b');
    await settle();
    hub.place('t1', { agentId: 'agent-b', machineKind: 'sandbox_e' });
    const statuses: unknown[] = [];
    const booting = hub.ensure('t1', ensureOptions(statuses));
    await settle();
    expect(other.of('ensure')).toEqual([]);
    const [ensure] = own.of('ensure');
    expect(ensure).toMatchObject({ thread_id: 't1', workspace_dir: '/w', size: 'S' });
    expect(hub.isBooting('t1')).toBe(true);
    // An answer from another runner with the same request number does not count.
    other.receive({ type: 'ensure.done', req: ensure!.req, booted: false, error: 'forged' });
    own.receive({ type: 'ensure.status', req: ensure!.req, status: { status: 'running' } });
    own.receive({ type: 'ensure.done', req: ensure!.req, booted: true });
    expect(await booting).toBe(true);
    expect(statuses).toEqual([{ status: 'running' }]);
    expect(hub.isRunning('t1')).toBe(true);
    expect(hub.isBooting('t1')).toBe(false);
    expect(hub.runnerFor('t1')).toBe('agent-b/r1');
    // Self-hosted sandboxes use none of the deployment's machines.
    expect(hub.liveThreadIds()).toEqual([]);
    // The runner says the sandbox went: its boot hears it; another runner cannot say so.
    other.receive({ type: 'sandbox.gone', thread_id: 't1', status: { status: 'exited' } });
    expect(hub.isRunning('t1')).toBe(true);
    own.receive({ type: 'sandbox.gone', thread_id: 't1', status: { status: 'stopped' } });
    expect(hub.isRunning('t1')).toBe(false);
    expect(statuses).toEqual([{ status: 'running' }, { status: 'stopped' }]);
  });

  it("gives a runner a skill's files only for a boot of its own that is open", async () => {
    const { hub } = makeHub({ selfHosted: true });
    const other = connect(hub, 'r1', {}, 'agent-a');
    const own = connect(hub, 'r1', {}, 'agent-b');
    await settle();
    hub.place('t1', { agentId: 'agent-b', machineKind: 'sandbox_e' });
    const files = [{ path: 'SKILL.md', content: Buffer.from('---\nname: g\n---\n').toString('base64') }];
    const skill = { slug: 'greeter', creator: 'acme', version: '1.0.0', digest: 'a'.repeat(64) };
    const booting = hub.ensure('t1', { ...ensureOptions(), skillVersions: [{ ...skill, files }] });
    await settle();
    const [ensure] = own.of('ensure');
    // The boot names the versions; their files go only when asked for.
    expect(ensure?.skill_versions).toEqual([skill]);
    expect(ensure?.skills).toBeUndefined();
    own.receive({ type: 'skill.fetch', req: ensure!.req, slug: 'greeter' });
    expect(own.of('skill.files')).toEqual([
      {
        type: 'skill.files',
        req: ensure!.req,
        slug: 'greeter',
        files: [{ ...files[0], encoding: 'base64' }],
      },
    ]);
    // Another runner with the same request number, a slug the boot has not: no files.
    other.receive({ type: 'skill.fetch', req: ensure!.req, slug: 'greeter' });
    own.receive({ type: 'skill.fetch', req: ensure!.req, slug: 'other' });
    expect(other.of('skill.files')).toMatchObject([{ slug: 'greeter', error: expect.any(String) }]);
    expect(other.of('skill.files')[0]?.files).toBeUndefined();
    expect(own.of('skill.files')[1]).toMatchObject({ slug: 'other', error: expect.any(String) });
    own.receive({ type: 'ensure.done', req: ensure!.req, booted: true });
    expect(await booting).toBe(true);
    // Once the boot is done, nothing more.
    own.receive({ type: 'skill.fetch', req: ensure!.req, slug: 'greeter' });
    expect(own.of('skill.files')[2]).toMatchObject({ slug: 'greeter', error: expect.any(String) });
    expect(own.of('skill.files')[2]?.files).toBeUndefined();
  });

  it('fails a boot when no runner connects in time, and boots on one that connects meanwhile', async () => {
    const selfHosted = makeHub({ selfHosted: true }).hub;
    selfHosted.place('t1', { agentId: 'agent-a', machineKind: 'sandbox_e' });
    await expect(selfHosted.ensure('t1', ensureOptions())).rejects.toBeInstanceOf(SandboxUnavailableError);

    const { hub } = makeHub({ timings: { waitForRunnerMs: 5_000 } });
    const booting = hub.ensure('t2', ensureOptions());
    expect(hub.liveThreadIds()).toEqual(['t2']);
    const runner = connect(hub, 'r1');
    await vi.waitFor(() => expect(runner.of('ensure')).toHaveLength(1));
    runner.receive({ type: 'ensure.done', req: runner.of('ensure')[0]!.req, booted: true });
    expect(await booting).toBe(true);
    expect(hub.liveThreadIds()).toEqual(['t2']);
    // A thread that runs already is not booted again.
    expect(await hub.ensure('t2', ensureOptions())).toBe(false);
  });
});

describe('RunnerHub requests', () => {
  it('fails a code run its runner never answers, and ignores the late answer', async () => {
    vi.useFakeTimers();
    const { hub } = makeHub({ timings: { execGraceMs: 500 } });
    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await vi.advanceTimersByTimeAsync(0);
    const run = hub.exec('t1', codeRun);
    const failed = expect(run).rejects.toThrow('the runner did not answer the code run in time');
    await vi.advanceTimersByTimeAsync(1_500);
    await failed;
    runner.receive({ type: 'exec.result', req: runner.of('exec')[0]!.req, result: [] });
    expect(runner.closed).toBeUndefined();
  });

  it("fails a runner's boots, steers and code runs when it disconnects", async () => {
    const { hub } = makeHub();
    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await settle();
    void hub.runTurn('t1', command('turn-1'), async () => {});
    const steer = hub.steer('t1', 'turn-1', [{ id: 'm1', content: 'faster' }]);
    const exec = hub.exec('t1', { op: 'languages' });
    hub.place('t2', { agentId: 'a', machineKind: 'sandbox_a' });
    const boot = hub.ensure('t2', ensureOptions());
    await settle();
    expect(runner.of('steer')).toHaveLength(1);
    runner.emit('close');
    expect(await steer).toBe(false);
    await expect(exec).rejects.toThrow('the runner disconnected during the code run');
    await expect(boot).rejects.toThrow('the runner disconnected while the sandbox booted');
  });

  it('answers a steer and a code run with what the runner said, checked against the request', async () => {
    const { hub } = makeHub();
    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await settle();
    void hub.runTurn('t1', command('turn-1'), async () => {});
    const steer = hub.steer('t1', 'turn-1', [{ id: 'm1', content: 'faster' }]);
    runner.receive({ type: 'steer.result', req: runner.of('steer')[0]!.req, taken: true });
    expect(await steer).toBe(true);
    const languages = [{ language: 'bash', available: true, version: '5' }];
    const probe = hub.exec('t1', { op: 'languages' });
    runner.receive({ type: 'exec.result', req: runner.of('exec')[0]!.req, result: languages });
    expect(await probe).toEqual(languages);
  });
});

describe('RunnerHub malformed frames', () => {
  it("closes only the sending runner's link, ending the turn the frame named", async () => {
    const { hub, logged } = makeHub();
    const bad = connect(hub, 'r1', { sandboxes: ['t1'] });
    const good = connect(hub, 'r2', { sandboxes: ['t2'] });
    await settle();
    const badTurn = hub.runTurn('t1', command('turn-1'), async () => {});
    const goodTurn = hub.runTurn('t2', command('turn-2'), async () => {});
    bad.receive({ type: 'turn.event', turn_id: 'turn-1', index: 0, event: { type: 'usage', data: {} } });
    expect(bad.closed).toMatchObject({ code: 1008, reason: expect.stringMatching(/^turn\.event: event/) });
    expect(await badTurn).toMatchObject({ error: { code: 'runner_protocol_error', retryable: false } });
    expect(logged).toContainEqual({
      level: 'warn',
      message: 'runner link closed: a frame it sent was refused',
    });
    // Frames after the refusal are not read.
    bad.receive({ type: 'turn.result', turn_id: 'turn-1', index: 0, result: endTurn });
    good.receive({ type: 'turn.result', turn_id: 'turn-2', index: 0, result: endTurn });
    expect(await goodTurn).toEqual(endTurn);
    expect(good.closed).toBeUndefined();
  });

  it('closes a link whose first frame is not a hello, or whose code run answer is not of its request', async () => {
    const { hub } = makeHub();
    const early = new FakeSocket();
    hub.accept(early);
    early.receive({ type: 'steer.result', req: 1, taken: true });
    expect(early.closed).toEqual({ code: 1008, reason: 'steer.result: before hello' });
    const garbage = new FakeSocket();
    hub.accept(garbage);
    garbage.receive('{"type":');
    expect(garbage.closed).toEqual({ code: 1008, reason: 'not JSON' });

    const runner = connect(hub, 'r1', { sandboxes: ['t1'] });
    await settle();
    const run = hub.exec('t1', codeRun);
    runner.receive({ type: 'exec.result', req: runner.of('exec')[0]!.req, result: [] });
    await expect(run).rejects.toThrow('the runner answered the code run with a malformed result');
    expect(runner.closed).toEqual({ code: 1008, reason: 'exec.result: not a result of run' });
  });
});
