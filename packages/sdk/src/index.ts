export type { Connection, SignInProviders } from '@paddock/protocol';
export {
  type AppendMessagesInput,
  type AppendMessagesResponse,
  type CreateThreadInput,
  createClient,
  type PaddockClient,
  type SendInput,
  type SendInputResponse,
  type StopOptions,
  type TaskInputs,
  type ThreadEventsPage,
  type ThreadHandle,
  type ThreadListInput,
  type ThreadPage,
} from './client.ts';
export type {
  AgentCreateBody,
  AgentKey,
  AgentKeyCreated,
  AgentPutBody,
  ControlPlane,
  LoginResponse,
  MintScopes,
  OrchestrationManifest,
  Org,
  PersonalToken,
  PersonalTokenCreated,
  Team,
  UsageReport,
} from './control-plane.ts';
export {
  codeOf,
  type ErrorDetail,
  errorFromResponse,
  neverRetried,
  PaddockError,
  type PaddockErrorCode,
  parseRetryAfter,
  retryableCodes,
  type ValidationIssue,
} from './errors.ts';
export { defaultKeepaliveTimeoutMs, type StreamEventsOptions, type StreamedEvent } from './events.ts';
export type { CallOptions, ClientOptions } from './http.ts';
export { backoffMs, defaultRetryOptions, type RetryOptions, retryDelayMs } from './retry.ts';
export type { SkillPublishBody } from './skills.ts';
export {
  memoryUrlStorage,
  type PreviousUpload,
  type TusInput,
  type UploadFileOptions,
  type UploadSource,
  type UrlStorage,
} from './uploads.ts';
