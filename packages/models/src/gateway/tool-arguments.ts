/**
 * A tool call's arguments as JSON text, parsed. Models sometimes emit malformed arguments: they are
 * passed back as the text they were rather than reject the history or the answer.
 */
export function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return args;
  }
}
