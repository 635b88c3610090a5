import { v7 } from 'uuid';

/** Every id on the wire is a UUID v7 (D3): time-ordered, so ids sort by creation. */
export function newId(): string {
  return v7();
}
