export { harnessProfiles, installKey } from './acp/catalog.ts';
export {
  installedMarker,
  ProgramCache,
  type ProgramCacheOptions,
  sandboxHarnessDir,
} from './acp/program-cache.ts';
export { gatewayModels } from './gateway-models.ts';
export { mcpToolName } from './mcp/mcp-tool-name.ts';
export type * from './mcp/mcp-toolbox.ts';
export { preloadHarnesses } from './preload.ts';
export { createHarness, externalHarnessNames, isHarnessName } from './registry.ts';
export type * from './sandbox-hands.ts';
export { exitCodeOf, runInSandbox, type SandboxRun } from './tools/run-in-sandbox.ts';
export { harnessTurnResultSchema } from './turn-result-schema.ts';
export type * from './types.ts';
