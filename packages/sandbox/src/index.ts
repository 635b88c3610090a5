export type { ApiProxy, ApiTarget } from './api-proxy.ts';
export { startApiProxy } from './api-proxy.ts';
export { buildGoProgram } from './build-go-program.ts';
export type { BwrapProvider, BwrapProviderOptions } from './bwrap/bwrap-provider.ts';
export { createBwrapProvider, defaultSandboxUid } from './bwrap/bwrap-provider.ts';
export type { CgroupConfig } from './bwrap/cgroups.ts';
export { defaultCgroupConfig, ownCgroupConfig } from './bwrap/cgroups.ts';
export type { CodeDir, CodeLayout } from './code-paths.ts';
export { nodeInSandbox, sandboxCodeLayout } from './code-paths.ts';
export type { DetectProviderOptions, ProviderReport } from './detect-provider.ts';
export { detectProvider } from './detect-provider.ts';
export type { RootfsOptions } from './docker/base-image.ts';
export {
  baseImagePackages,
  buildRootfsTarball,
  defaultSandboxImage,
  imageMarkerPath,
  importBaseImage,
} from './docker/base-image.ts';
export type { DockerProvider, DockerProviderOptions } from './docker/docker-provider.ts';
export { createDockerProvider } from './docker/docker-provider.ts';
export { DockerEngine, defaultDockerHost, parseDockerHost } from './docker/engine.ts';
export type { EgressRecord } from './egress/egress-proxy.ts';
export type { RegistrySources } from './egress/registries.ts';
export { readRegistries } from './egress/registries.ts';
export type { EgressSettings } from './egress/sandbox-egress.ts';
export type { SandboxLimits } from './limits.ts';
export { sandboxLimits } from './limits.ts';
export {
  parseFrame,
  type RunnerMessage,
  runnerLinkPath,
  runnerMessageSchema,
  type ServerMessage,
  serverMessageSchema,
  type TurnEntry,
} from './link/frames.ts';
export type { RunnerLinkOptions } from './link/runner-link.ts';
export { RunnerLink } from './link/runner-link.ts';
export type { MicroVmAccel } from './microvm/accel.ts';
export type { AccelProbeResult } from './microvm/accel-probe.ts';
export { probeAccel } from './microvm/accel-probe.ts';
export { findGuestKernel } from './microvm/guest-kernel.ts';
export type { MicroVmHost, MicroVmHostOptions } from './microvm/host-check.ts';
export { checkMicroVmHost } from './microvm/host-check.ts';
export type { MicroVmProviderOptions } from './microvm/microvm-provider.ts';
export { createMicroVmProvider } from './microvm/microvm-provider.ts';
export type { ProcessProviderOptions } from './process/process-provider.ts';
export { createProcessProvider } from './process/process-provider.ts';
export type { SandboxExit, SandboxProcess, SandboxProvider, SandboxSize, SandboxSpec } from './provider.ts';
export type { RunnerLog, RunnerOptions } from './runner.ts';
export { Runner } from './runner.ts';
export type { EnsureOptions, SandboxBooterOptions, ThreadModels } from './sandbox-booter.ts';
export type { StandbyAgent, StandbyOptions } from './standby-pool.ts';
export { buildSupervisor } from './supervisor-link/build-supervisor.ts';
export type { RemoteProcess } from './supervisor-link/remote-process.ts';
export { SupervisorClient, SupervisorRequestError } from './supervisor-link/supervisor-client.ts';
export { type DialedLink, SupervisorDialIns } from './supervisor-link/supervisor-dial-ins.ts';
export type { EntrypointOutputListener, EntrypointStream, SandboxStatus } from './thread-sandbox.ts';
export { sandboxHands } from './turns/sandbox-hands.ts';
export type { WorkspaceIo, WorkspaceIoOptions } from './workspace-io/workspace-io.ts';
export { createWorkspaceIo } from './workspace-io/workspace-io.ts';
export type { UidRange } from './workspaces/uid-claims.ts';
export { defaultUidRange } from './workspaces/uid-claims.ts';
export { releaseVolumesUnder } from './workspaces/workspace-volume.ts';
export type { Workspace, WorkspacesOptions } from './workspaces/workspaces.ts';
export { Workspaces } from './workspaces/workspaces.ts';
