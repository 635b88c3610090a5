import type { DraftEvent, EventData, MachineSize, OutcomeStatus, StopReason } from '@paddock/protocol';

/** A conversation message as harnesses exchange it (the AI SDK's ModelMessage shape). */
export interface ConversationMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: unknown;
}

export interface TurnResult {
  stopReason: StopReason;
  outcome?: { status: OutcomeStatus; summary: string };
  messages: ConversationMessage[];
  lastAssistantText: string;
  error?: { code: string; message: string; retryable: boolean };
}

export interface TurnCommand {
  turn_id: string;
  harness: string;
  model: string;
  instructions?: string;
  messages: ConversationMessage[];
  gateway: { baseURL: string; apiKey: string };
}

/** The sandbox host as core uses it: the in-process runner, or a detached one behind the same seam. */
export interface SandboxHost {
  isRunning(threadId: string): boolean;
  /** The Paddock API URL as processes inside the thread's running sandbox reach it. */
  apiUrl(threadId: string): string;
  /**
   * Boots the thread's sandbox unless it runs. `env` holds the agent's secrets and PADDOCK_TOKEN;
   * the host adds PADDOCK_API_URL. The entrypoint runs on the thread's first boot only.
   */
  ensure(
    threadId: string,
    options: {
      workspaceDir: string;
      env: Record<string, string>;
      size: MachineSize;
      entrypoint?: string;
      onEntrypointOutput(
        stream: EventData['entrypoint.output']['stream'],
        text: string,
        exitCode?: number,
      ): void;
      onStatus(status: EventData['sandbox.status']): void;
    },
  ): Promise<void>;
  runTurn(threadId: string, command: TurnCommand, onEvent: (event: DraftEvent) => void): Promise<TurnResult>;
  interrupt(threadId: string, turnId: string): void;
  /**
   * Whether this host can interrupt the thread's turns safely; asked as a turn starts and recorded
   * on it, so a Stop on any node knows. Absent means it can.
   */
  canInterrupt?(threadId: string): boolean;
  /** Offers messages to the thread's running turn (native steering); false when it did not take them. */
  steer(threadId: string, turnId: string, messages: { id: string; content: string }[]): Promise<boolean>;
}
