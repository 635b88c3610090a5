import type { LanguageModelV4 } from '@ai-sdk/provider';
import type {
  DraftEvent,
  HarnessProfile,
  ModelSettings,
  SteeredMessage,
  TurnMcpServer,
  TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { McpToolbox } from './mcp/mcp-toolbox.ts';
import type { SandboxHands } from './sandbox-hands.ts';

/** The models a loop of Paddock's own calls, by gateway model id (a provider's model, called directly). */
export type Models = (modelId: string) => LanguageModelV4;

/** Where a program in the sandbox reaches models: the Paddock model gateway, as the sandbox sees it. */
export interface GatewayAccess {
  /** Base URL of the OpenAI-compatible API, e.g. `http://127.0.0.1:8787/v2/gateway/openai/v1`. */
  baseURL: string;
  /** Bearer token for the gateway (the thread-bound token). */
  apiKey: string;
}

export interface HarnessTurnInput {
  turnId: string;
  /** Model id as the gateway knows it, e.g. `scripted` or `openai/gpt-4.1`. */
  model: string;
  instructions?: string;
  /** The whole conversation so far, oldest first; the newest user message(s) last. */
  messages: ModelMessage[];
  /** Sampling and reasoning settings for every model call of the turn (a task input's `model_options`). */
  modelSettings?: ModelSettings;
  /**
   * The models a loop of Paddock's own calls, in the runner's process: the model router itself (the
   * server's own runner), or the gateway over HTTP (a runner elsewhere). Never a call from the sandbox.
   */
  models: Models;
  /** The gateway as programs in the sandbox reach it (an ACP program's model calls), with the thread's token. */
  gateway: GatewayAccess;
  /** The sandbox's hands: every tool's process and file operation runs there, as its user. */
  sandbox: SandboxHands;
  /** Root that every file tool is confined to, as the sandbox sees it (`/workspace` under bwrap). */
  workspaceDir: string;
  /** Environment for tool processes (agent secrets, PADDOCK_API_URL, PADDOCK_TOKEN, PATH, HOME). */
  env: Record<string, string>;
  /** Aborting it stops the model call and kills the running tool's process group. */
  signal: AbortSignal;
  /** Receives every normalized event of the turn, in order. */
  emit(event: DraftEvent): void;
  /** Messages that join this turn while it runs (native steering), for harnesses that take them. */
  inbox?: SteeringInbox;
  /** The agent's MCP servers the sandbox runs: their tools are offered to the model. */
  mcp?: McpToolbox;
  /** The agent's MCP servers as configured, for a harness whose program runs them itself (`runsMcpServers`). */
  mcpServers?: TurnMcpServer[];
  /** The program behind an ACP harness value (D9). */
  profile?: HarnessProfile;
}

/**
 * The way into a running turn. A steerable harness connects once, at the start of its turn; each
 * message it is then given joins the turn at the next step boundary, and the answer says whether the
 * model saw it (false when the turn ended first, so the caller can queue it for the next turn).
 */
export interface SteeringInbox {
  connect(take: (message: SteeredMessage) => Promise<boolean>): void;
}

/** What a standby sandbox starts a harness's program with, before any thread is known. */
export interface HarnessWarmUp {
  profile: HarnessProfile;
  sandbox: SandboxHands;
  /** The sandbox's environment without a thread's parts (no token, thread id or secrets). */
  env: Record<string, string>;
  workspaceDir: string;
}

export interface Harness {
  readonly name: string;
  /** Whether a running turn takes new user messages between model steps (native steering). */
  readonly steerable: boolean;
  /** Whether its program starts the agent's MCP servers itself (an ACP agent), rather than the sandbox. */
  readonly runsMcpServers?: boolean;
  /**
   * Gets ready for the turn before it begins (an ACP program started, its session open): what this
   * starts belongs to the sandbox, not to the turn, so a Stop leaves it running.
   */
  prepare?(input: HarnessTurnInput): Promise<void>;
  /**
   * In a standby sandbox: starts the program and opens its session ahead of any thread, for the
   * thread that takes the sandbox (an ACP harness). Rejects with why it could not.
   */
  warmUp?(options: HarnessWarmUp): Promise<void>;
  /** Ends the program `warmUp` started, if no turn took it: the sandbox's thread runs another harness. */
  dropStandby?(): void;
  /** The turn's result, its messages as the AI SDK's (which the next turn's input takes as they are). */
  runTurn(input: HarnessTurnInput): Promise<TurnResult<ModelMessage>>;
}
