import { Cron } from 'croner';

/** A problem with a schedule's timing, by the body field it is in. */
export interface CronIssue {
  field: 'cron' | 'time_zone';
  message: string;
}

/** Whether `timeZone` is an IANA time zone this runtime knows. */
function knownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/**
 * What is wrong with a cron expression in a time zone, if anything: five fields (minute, hour, day
 * of month, month, day of week) or a nickname such as `@daily`, that comes due at least once, in a
 * known IANA time zone. (croner also takes seconds and years; a schedule's unit is the minute.)
 */
export function cronIssues(cron: string, timeZone: string): CronIssue[] {
  if (!knownTimeZone(timeZone))
    return [{ field: 'time_zone', message: `unknown time zone ${JSON.stringify(timeZone)}` }];
  const text = cron.trim();
  if (!text.startsWith('@') && text.split(/\s+/).length !== 5)
    return [{ field: 'cron', message: 'a cron expression has five fields: minute hour day month weekday' }];
  try {
    if (!nextCronTime(text, timeZone, new Date()))
      return [{ field: 'cron', message: 'the cron expression never comes due' }];
  } catch (error) {
    return [{ field: 'cron', message: (error as Error).message }];
  }
  return [];
}

/** The first due time of `cron` in `timeZone` strictly after `after`; undefined if none. */
export function nextCronTime(cron: string, timeZone: string, after: Date): Date | undefined {
  const job = new Cron(cron.trim(), { timezone: timeZone, paused: true });
  return job.nextRun(after) ?? undefined;
}
