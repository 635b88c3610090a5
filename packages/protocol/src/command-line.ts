/** A command line a shell could not split: a quote left open, or a backslash with nothing after it. */
export class CommandLineError extends Error {}

/**
 * Splits a command line into its words as a POSIX shell would, without running one: blanks separate
 * words; single quotes keep everything literally; double quotes keep everything but `\"`, `\\`,
 * `\$` and `` \` ``; a backslash outside quotes keeps the next character. Nothing is expanded (no
 * variables, globs or `~`): an MCP server's `command` is given as a line, such as
 * `npx -y @modelcontextprotocol/server-everything`, and runs as the program and arguments it names.
 */
export function commandLineWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  let quote: "'" | '"' | undefined;
  for (let at = 0; at < line.length; at++) {
    const char = line[at]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === '\\' && '"\\$`'.includes(line[at + 1] ?? '')) word += line[++at];
      else word += char;
    } else if (char === ' ' || char === '\t' || char === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      quote = char;
      word ??= '';
    } else if (char === '\\') {
      if (at + 1 >= line.length) throw new CommandLineError('the command line ends with a backslash');
      word = (word ?? '') + line[++at];
    } else word = (word ?? '') + char;
  }
  if (quote) throw new CommandLineError(`the command line leaves a ${quote} quote open`);
  if (word !== undefined) words.push(word);
  return words;
}
