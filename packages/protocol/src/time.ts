/** Timestamps on the wire are UTC, ISO 8601 with microseconds and no zone suffix (D3). */
export function timestamp(date: Date = new Date()): string {
  return `${date.toISOString().slice(0, 23)}000`;
}

/** Microsecond-precision "now", monotonic within one process so that ordering by time is stable. */
let lastMicros = 0;
export function now(): string {
  let micros = Math.floor((performance.timeOrigin + performance.now()) * 1000);
  if (micros <= lastMicros) micros = lastMicros + 1;
  lastMicros = micros;
  return microsTimestamp(micros);
}

/** A D3 timestamp of microseconds since the epoch. */
export function microsTimestamp(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const rest = String(micros - ms * 1000).padStart(3, '0');
  return `${new Date(ms).toISOString().slice(0, 23)}${rest}`;
}
