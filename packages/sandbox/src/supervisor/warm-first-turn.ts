import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HarnessModule } from './turns.ts';

/** The harness a new thread most likely runs first; others come imported, only not warmed. */
const warmedHarness = 'coding_alpha';
/** How long a sandbox sits unclaimed before its throwaway turn (see `warmFirstTurn`). */
const idleBeforeTurnMs = 300;

/** One streamed reply in the gateway's wire format (OpenAI chat completions): plain text, then stop. */
const cannedReply = [
  { delta: { role: 'assistant', content: 'ok' }, finish_reason: null },
  { delta: {}, finish_reason: 'stop' },
]
  .map((choice) => ({
    id: 'warm-up',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'warm-up',
    choices: [{ index: 0, ...choice }],
  }))
  .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
  .concat('data: [DONE]\n\n')
  .join('');

/**
 * Importing the harness is not all of a first turn's cost: the HTTP client (undici), web streams and
 * the AI SDK's request and stream handling load or compile on first use, some 50 ms that would land on
 * a new thread's first reply. Against a canned model on loopback this runs one request at once (the
 * largest part, and cheap), calls `onClientWarm`, and then, once the sandbox has sat unclaimed for a
 * moment, one throwaway turn: on a busy host that turn would compete for the CPU with the turns of
 * claimed sandboxes. The reply is text only, so no tool runs and nothing touches the workspace.
 * `claimed` cancels whatever has not run yet.
 */
export async function warmFirstTurn(
  harnesses: HarnessModule,
  claimed: AbortSignal,
  onClientWarm: () => void,
): Promise<void> {
  const model = await startCannedModel();
  try {
    const baseURL = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    await fetch(`${baseURL}/chat/completions`, { method: 'POST', body: '{}' }).then((response) =>
      response.text(),
    );
    onClientWarm();
    const harness = harnesses.getHarness(warmedHarness);
    if (!harness) return;
    await sleep(idleBeforeTurnMs, undefined, { signal: claimed });
    await harness.runTurn({
      turnId: 'warm-up',
      model: 'warm-up',
      messages: [{ role: 'user', content: 'warm-up' }],
      gateway: { baseURL, apiKey: 'warm-up' },
      workspaceDir: '/nonexistent',
      env: {},
      signal: AbortSignal.any([claimed, AbortSignal.timeout(5_000)]),
      emit: () => {},
    });
  } catch (error) {
    if (!claimed.aborted) throw error;
  } finally {
    model.closeAllConnections();
    model.close();
  }
}

async function startCannedModel(): Promise<Server> {
  // Loaded here, not at the top: nothing the supervisor loads before `ready` may cost boot time.
  const { createServer } = await import('node:http');
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      response.writeHead(200, { 'content-type': 'text/event-stream' }).end(cannedReply),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
