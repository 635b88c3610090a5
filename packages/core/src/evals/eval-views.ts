import type {
  ComponentFile,
  ComponentStatus,
  EvalDefinition,
  EvalRun,
  EvalRunStatus,
} from '@paddock/protocol';
import type { AgentComponentRow, EvalRunRow } from '@paddock/store';

export function toEvalDefinition(row: AgentComponentRow): EvalDefinition {
  return {
    id: row.id,
    agent_id: row.agent_id,
    name: row.name,
    files: JSON.parse(row.files) as ComponentFile[],
    hash: row.hash,
    status: row.status as ComponentStatus,
    created_at: row.created_at,
    updated_at: row.updated_at,
    archived_at: row.archived_at,
  };
}

export function toEvalRun(row: EvalRunRow): EvalRun {
  return {
    id: row.id,
    agent_id: row.agent_id,
    eval_id: row.eval_id,
    eval_name: row.eval_name,
    eval_hash: row.eval_hash,
    task_id: row.task_id,
    status: row.status as EvalRunStatus,
    passed: row.passed === null ? null : row.passed === 1,
    reason: row.reason,
    error: row.error,
    judge_model: row.judge_model,
    created_at: row.created_at,
    finished_at: row.finished_at,
  };
}

/** The judge's criteria: an eval's files, a lone file as it is, several each under its path. */
export function evalCriteria(files: ComponentFile[]): string {
  if (files.length === 1) return files[0].content;
  return files.map((f) => `## ${f.path}\n\n${f.content}`).join('\n\n');
}
