import type {
  AgentPatch,
  AgentRecord,
  appendMessagesBodySchema,
  appendMessagesResponseSchema,
  CreateThreadBody,
  createThreadBodySchema,
  EventRecord,
  FileList,
  FileTransfer,
  FileTreeNode,
  HarnessListing,
  InputReceipt,
  MachineCapabilities,
  SubmitTaskInputResponse,
  submitTaskInputBodySchema,
  TaskRecord,
  Thread,
  ThreadPage,
  TranscriptMessage,
  taskInputsSchema,
  threadEventsPageSchema,
  threadHandleSchema,
  threadListQuerySchema,
} from '@paddock/protocol';
import { newId } from '@paddock/protocol/ids';
import type { z } from 'zod';
import { controlPlane } from './control-plane.ts';
import { type StreamEventsOptions, type StreamedEvent, streamEvents } from './events.ts';
import { type CallOptions, type ClientOptions, path, Transport } from './http.ts';
import { skillsApi } from './skills.ts';
import { type TransferApi, type UploadFileOptions, type UploadSource, uploadFile } from './uploads.ts';

export type ThreadHandle = z.infer<typeof threadHandleSchema>;
export type CreateThreadInput = z.input<typeof createThreadBodySchema>;
export type AppendMessagesInput = z.input<typeof appendMessagesBodySchema>;
export type AppendMessagesResponse = z.infer<typeof appendMessagesResponseSchema>;
export type ThreadEventsPage = z.infer<typeof threadEventsPageSchema>;
export type ThreadListInput = Omit<z.input<typeof threadListQuerySchema>, 'limit'> & { limit?: number };
export type { ThreadPage };
export type TaskInputs = z.infer<typeof taskInputsSchema>;

/** A task input: `input_id` is made when left out; give your own to retry a follow-up across processes. */
export type SendInput = Omit<z.input<typeof submitTaskInputBodySchema>, 'input_id' | 'messages'> & {
  input_id?: string;
  /** The follow-up: a string is one user message. */
  messages: string | z.input<typeof submitTaskInputBodySchema>['messages'];
};
/** The receipt of a task input; `replayed` when the service answered an earlier send of the same `input_id`. */
export type SendInputResponse = SubmitTaskInputResponse & { replayed: boolean };

export interface StopOptions extends CallOptions {
  /** The generation to stop; read from `tasks.inputs` first when left out, then kept on every retry. */
  expectedGeneration?: number;
}

/** A typed client of a Paddock service's public thread and task routes. */
export function createClient(options: ClientOptions) {
  const http = new Transport(options);
  const read = <T>(
    url: string,
    opts: CallOptions & { query?: Record<string, string | number | boolean | undefined> } = {},
  ) => http.json<T>('GET', url, { ...opts, replaySafe: true });

  const tasks = {
    /** `POST /v2/tasks/{id}/inputs`: a follow-up; retried with the same `input_id` after a lost answer. */
    async sendInput(taskId: string, input: SendInput, opts: CallOptions = {}): Promise<SendInputResponse> {
      const body = {
        ...input,
        input_id: input.input_id ?? newId(),
        messages: typeof input.messages === 'string' ? [{ content: input.messages }] : input.messages,
      };
      return http.send('POST', path`/v2/tasks/${taskId}/inputs`, {
        ...opts,
        body,
        replaySafe: true,
        read: async (response) => ({
          ...((await response.json()) as SubmitTaskInputResponse),
          replayed: response.headers.get('idempotency-replayed') === 'true',
        }),
      });
    },
    /** `GET /v2/tasks/{id}/inputs`: the input stream and the current `generation`. */
    inputs: (taskId: string, opts?: CallOptions) => read<TaskInputs>(path`/v2/tasks/${taskId}/inputs`, opts),
    /** `GET /v2/tasks/{id}/inputs/{input_id}`: one receipt. */
    input: (taskId: string, inputId: string, opts?: CallOptions) =>
      read<InputReceipt>(path`/v2/tasks/${taskId}/inputs/${inputId}`, opts),
    /** `GET /v2/tasks/{id}/events`: stored event records, oldest first unless `desc`. */
    events: (taskId: string, query: { limit?: number; desc?: boolean } = {}, opts?: CallOptions) =>
      read<{ items: EventRecord[] }>(path`/v2/tasks/${taskId}/events`, { ...opts, query }),
    /** `POST /v2/tasks/{id}/interrupt`: Stop, retried with the same `expected_generation`. */
    interrupt: (taskId: string, opts: StopOptions = {}) => stop(path`/v2/tasks/${taskId}`, taskId, opts),
  };

  async function stop(base: string, taskId: string, opts: StopOptions): Promise<TaskRecord> {
    const generation = opts.expectedGeneration ?? (await tasks.inputs(taskId, opts)).generation;
    return http.json<TaskRecord>('POST', `${base}/interrupt`, {
      signal: opts.signal,
      body: { expected_generation: generation },
      replaySafe: true,
    });
  }

  const uploads = {
    /** `POST /v2/tasks/{id}/files/uploads`: a transfer with its signed tus URL (`upload.endpoint`). */
    create: (taskId: string, body: { path: string; size_bytes: number }, opts: CallOptions = {}) =>
      http.json<FileTransfer>('POST', path`/v2/tasks/${taskId}/files/uploads`, {
        ...opts,
        body,
        replaySafe: false,
      }),
    /** `GET /v2/tasks/{id}/files/uploads/{transfer_id}`. */
    get: (taskId: string, transferId: string, opts?: CallOptions) =>
      read<FileTransfer>(path`/v2/tasks/${taskId}/files/uploads/${transferId}`, opts),
    /** `POST …/uploads/{transfer_id}/authorize`: a fresh signed tus URL. */
    authorize: (taskId: string, transferId: string, opts: CallOptions = {}) =>
      http.json<FileTransfer>('POST', path`/v2/tasks/${taskId}/files/uploads/${transferId}/authorize`, {
        ...opts,
        replaySafe: true,
      }),
    /** `DELETE …/uploads/{transfer_id}`. */
    cancel: (taskId: string, transferId: string, opts: CallOptions = {}) =>
      http.json<FileTransfer>('DELETE', path`/v2/tasks/${taskId}/files/uploads/${transferId}`, {
        ...opts,
        replaySafe: true,
      }),
    /** Uploads a file over tus, resuming an unfinished upload of it; answers the completed transfer. */
    upload: (taskId: string, source: UploadSource, opts: UploadFileOptions): Promise<FileTransfer> =>
      uploadFile(http, uploads satisfies TransferApi, taskId, source, opts),
  };

  return {
    baseUrl: http.baseUrl,
    /** The control plane under `/v2/cli` (see `control-plane.ts`). */
    cli: controlPlane(http),
    /** The skills registry under `/v2/skills` (see `skills.ts`). */
    skills: skillsApi(http),
    threads: {
      /** `POST /v2/threads`: an agent (or `agent_id`) and a first input; not retried after a lost answer. */
      create: (body: CreateThreadInput, opts: CallOptions = {}) =>
        http.json<ThreadHandle>('POST', '/v2/threads', {
          ...opts,
          body: body as CreateThreadBody,
          replaySafe: false,
        }),
      /** `GET /v2/threads`: the caller's threads, newest first; `next_cursor` names the next page. */
      list: (query: ThreadListInput = {}, opts?: CallOptions) =>
        read<ThreadPage>('/v2/threads', { ...opts, query }),
      /** `GET /v2/threads/{id}`. */
      get: (threadId: string, opts?: CallOptions) => read<Thread>(path`/v2/threads/${threadId}`, opts),
      /** `GET /v2/threads/{id}/messages`: the transcript. */
      messages: (threadId: string, opts?: CallOptions) =>
        read<{ items: TranscriptMessage[] }>(path`/v2/threads/${threadId}/messages`, opts),
      /** `POST /v2/threads/{id}/messages`: appends (with `run: true` starts a turn); not retried after a lost answer. */
      append: (threadId: string, body: AppendMessagesInput, opts: CallOptions = {}) =>
        http.json<AppendMessagesResponse>('POST', path`/v2/threads/${threadId}/messages`, {
          ...opts,
          body,
          replaySafe: false,
        }),
      /** `GET /v2/threads/{id}/events`: a page of stored events after `after`, in seq order. */
      events: (threadId: string, query: { after?: number; limit?: number } = {}, opts?: CallOptions) =>
        read<ThreadEventsPage>(path`/v2/threads/${threadId}/events`, { ...opts, query }),
      /** `GET /v2/threads/{id}/events/stream` as an async iterator that resumes by itself (see `events.ts`). */
      stream: (
        threadId: string,
        opts?: StreamEventsOptions,
      ): AsyncGenerator<StreamedEvent, void, undefined> => streamEvents(http, threadId, opts),
      /** `POST /v2/threads/{id}/interrupt`: Stop, retried with the same `expected_generation`. */
      interrupt: (threadId: string, opts: StopOptions = {}) =>
        stop(path`/v2/threads/${threadId}`, threadId, opts),
    },
    tasks,
    files: {
      /** `GET /v2/tasks/{id}/files`: one directory of the workspace. */
      list: (taskId: string, query: { path?: string } = {}, opts?: CallOptions) =>
        read<FileList>(path`/v2/tasks/${taskId}/files`, { ...opts, query }),
      /** `GET /v2/tasks/{id}/files/tree`: the workspace as a bounded tree. */
      tree: (
        taskId: string,
        query: { path?: string; max_depth?: number; max_entries?: number } = {},
        opts?: CallOptions,
      ) => read<FileTreeNode>(path`/v2/tasks/${taskId}/files/tree`, { ...opts, query }),
      /** `GET /v2/tasks/{id}/files/content`: one file's bytes. */
      read: (taskId: string, filePath: string, opts: CallOptions = {}) =>
        http.send('GET', path`/v2/tasks/${taskId}/files/content`, {
          ...opts,
          query: { path: filePath },
          replaySafe: true,
          read: async (response) => new Uint8Array(await response.arrayBuffer()),
        }),
    },
    uploads,
    /** `GET /v2/harnesses`: each harness value, its program and version, installed or not, its dialect and abilities. */
    harnesses: (opts?: CallOptions) => read<{ items: HarnessListing[] }>('/v2/harnesses', opts),
    /** `GET /v2/machines/capabilities`: each sandbox provider, its sizes, and whether agents may use it. */
    machines: (opts?: CallOptions) => read<MachineCapabilities>('/v2/machines/capabilities', opts),
    agents: {
      /** `GET /v2/agents/{id}`. */
      get: (agentId: string, opts?: CallOptions) => read<AgentRecord>(path`/v2/agents/${agentId}`, opts),
      /** `PATCH /v2/agents/{id}`: fields given replace the agent's. */
      update: (agentId: string, patch: AgentPatch, opts: CallOptions = {}) =>
        http.json<AgentRecord>('PATCH', path`/v2/agents/${agentId}`, {
          ...opts,
          body: patch,
          replaySafe: true,
        }),
      /** `PUT /v2/agents/{id}/secrets/{name}`: sets one secret, keeping the others; answers names only. */
      setSecret: (agentId: string, name: string, value: string, opts: CallOptions = {}) =>
        http.json<AgentRecord>('PUT', path`/v2/agents/${agentId}/secrets/${name}`, {
          ...opts,
          body: { value },
          replaySafe: true,
        }),
      /** `DELETE /v2/agents/{id}/secrets/{name}`. */
      deleteSecret: (agentId: string, name: string, opts: CallOptions = {}) =>
        http.json<AgentRecord>('DELETE', path`/v2/agents/${agentId}/secrets/${name}`, {
          ...opts,
          replaySafe: true,
        }),
    },
  };
}

export type PaddockClient = ReturnType<typeof createClient>;
