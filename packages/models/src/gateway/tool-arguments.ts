/**
 * A tool call's JSON arguments as a value. Models sometimes emit malformed arguments: they are
 * passed on as the string they were rather than reject the history or the answer.
 */
export function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return args;
  }
}
