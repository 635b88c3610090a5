import {
  type ManifestComponent,
  type ManifestWarning,
  newId,
  type PublishedComponent,
  type ScheduleConfig,
  scheduleConfigSchema,
  scheduleNameSchema,
  timestamp,
} from '@paddock/protocol';
import {
  type Db,
  deleteSchedule,
  insertSchedule,
  listSchedules,
  type ScheduleRow,
  updateSchedule,
} from '@paddock/store';
import { componentHash } from '../manifests/component-hash.ts';
import { cronIssues, nextCronTime } from './cron.ts';

/**
 * An agent's schedules as manifest components (issue 16 §3): one `schedule` component per
 * schedule, named by it, with one file, `schedule.json` (cron, time zone, input, enabled). The
 * firing state (next and last run) stays out of the manifest and its revision.
 */
export const scheduleFile = 'schedule.json';

export function scheduleConfig(row: ScheduleRow): ScheduleConfig {
  return { cron: row.cron, time_zone: row.time_zone, input: row.input, enabled: row.enabled === 1 };
}

export function scheduleComponent(row: ScheduleRow): ManifestComponent {
  const files = [{ path: scheduleFile, content: `${JSON.stringify(scheduleConfig(row), null, 2)}\n` }];
  return { type: 'schedule', name: row.name, files, hash: componentHash('schedule', row.name, files) };
}

type Read<T> = { value: T } | { warning: ManifestWarning };

/** A published `schedule` component's config, or why it cannot be one. */
export function readSchedule(c: PublishedComponent): Read<ScheduleConfig> {
  const warning = (message: string) => ({
    warning: { type: c.type, name: c.name, code: 'invalid_schedule', message },
  });
  if (c.status === 'archived') return warning('a schedule cannot be archived: omit it to remove it');
  if (!scheduleNameSchema.safeParse(c.name).success)
    return warning('a schedule is named with lower-case letters, digits, ".", "_" and "-"');
  const [file] = c.files;
  if (c.files.length !== 1 || file?.path !== scheduleFile)
    return warning(
      `a schedule is one file, ${scheduleFile}, holding {"cron", "time_zone", "input", "enabled"}`,
    );
  let json: unknown;
  try {
    json = JSON.parse(file.content);
  } catch {
    return warning(`${scheduleFile} is not JSON`);
  }
  const parsed = scheduleConfigSchema.safeParse(json);
  if (!parsed.success)
    return warning(
      `${scheduleFile}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`,
    );
  const [issue] = cronIssues(parsed.data.cron, parsed.data.time_zone);
  if (issue) return warning(`${scheduleFile}: ${issue.field}: ${issue.message}`);
  return { value: parsed.data };
}

/** The first due time after `now`, where a schedule's timing is new or changed. */
export function firstDueTime(config: ScheduleConfig, now: Date): Date {
  // cronIssues (checked by every writer) refused expressions that never come due.
  return nextCronTime(config.cron, config.time_zone, now)!;
}

/**
 * A publish's schedules: the ones given are created or updated (a changed cron, time zone or
 * enabling moves the next due time to the first after now; a new input alone keeps it); the others
 * are removed only under `reconcile` (`reconcile_schedules`), so a client that knows no schedules
 * removes none. A component that is not a schedule is reported and leaves the one of its name as
 * it was.
 */
export async function reconcileSchedules(
  trx: Db,
  target: { agentId: string; userId: string; now: Date; at: string },
  components: PublishedComponent[],
  reconcile: boolean,
  warnings: ManifestWarning[],
): Promise<void> {
  const existing = new Map((await listSchedules(trx, target.agentId)).map((row) => [row.name, row]));
  const given = new Set<string>();
  for (const c of components.filter((c) => c.type === 'schedule')) {
    given.add(c.name);
    const read = readSchedule(c);
    if ('warning' in read) {
      warnings.push(read.warning);
      continue;
    }
    const config = read.value;
    const before = existing.get(c.name);
    const timing =
      !before ||
      before.cron !== config.cron ||
      before.time_zone !== config.time_zone ||
      (before.enabled === 1) !== config.enabled;
    if (before && !timing && before.input === config.input) continue;
    const change = {
      cron: config.cron,
      time_zone: config.time_zone,
      input: config.input,
      enabled: config.enabled ? 1 : 0,
      next_run_at: before && !timing ? before.next_run_at : timestamp(firstDueTime(config, target.now)),
      updated_at: target.at,
    };
    if (before) await updateSchedule(trx, before.id, change);
    else
      await insertSchedule(trx, {
        ...change,
        id: newId(),
        agent_id: target.agentId,
        user_id: target.userId,
        name: c.name,
        created_at: target.at,
        last_run_at: null,
        last_thread_id: null,
      });
  }
  if (!reconcile) return;
  for (const row of existing.values())
    if (!given.has(row.name)) await deleteSchedule(trx, target.agentId, row.id);
}
