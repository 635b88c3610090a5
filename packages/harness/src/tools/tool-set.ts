import type { ToolSet } from 'ai';
import { editTool } from './edit.ts';
import { listTool } from './list.ts';
import { readTool } from './read.ts';
import { type Outcome, reportOutcomeTool } from './report-outcome.ts';
import { shellTool } from './shell.ts';
import type { ToolContext } from './tool-context.ts';
import { writeTool } from './write.ts';

export interface ToolSetOptions {
  shell: boolean;
  onOutcome(outcome: Outcome): void;
}

export function createToolSet(ctx: ToolContext, options: ToolSetOptions): ToolSet {
  return {
    ...(options.shell ? { shell: shellTool(ctx) } : {}),
    read: readTool(ctx),
    write: writeTool(ctx),
    edit: editTool(ctx),
    list: listTool(ctx),
    report_outcome: reportOutcomeTool(options.onOutcome),
  };
}
